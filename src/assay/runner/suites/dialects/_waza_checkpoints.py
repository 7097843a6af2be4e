"""A waza task's ``checkpoints`` as ``waza_checkpoint`` graders (see that grader for what is
graded and how it decides the run).

``checkpoints: [{after_turn: N, graders: [...], on_failure: continue | stop}]`` (waza's
``models.Checkpoint``, read by ``internal/orchestration/checkpoints.go`` at 38eb0e8d). Each
becomes one result, ``_checkpoint_after_turn_N``, of weight 0; its graders are task graders
(type ``code`` by default), read and checked like the task's own, with errors naming their
place under ``checkpoints[i].graders[j]``. Two checkpoints after the same turn: waza keeps the
last (a map by turn), and so does assay, with a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assay.core.context import SpecContext
from assay.core.errors import format_loc
from assay.runner.suites.dialects._waza_releases import ReleaseRefusal
from assay.runner.suites.filemodel import Keys
from assay.runner.suites.graders import compile_graders
from assay.runner.yamlsrc import YamlDoc

KEYS = ("after_turn", "graders", "on_failure")
"""The fields of waza's ``models.Checkpoint``."""


def checkpoint_specs(doc: YamlDoc, raw: Any, context: SpecContext, prepare: Callable[[Any, Keys], dict[str, Any]],
                     warnings: list[str], strict: bool) -> list[dict[str, Any]]:
    """The ``waza_checkpoint`` specs for a task's ``checkpoints`` (in file order, the last of
    several for one turn kept). Raises SpecError naming file, line and field for bad input."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise doc.error(f"checkpoints must be a list, got {type(raw).__name__}", "checkpoints")
    by_turn: dict[int, dict[str, Any]] = {}
    for i, cp in enumerate(raw):
        at = ("checkpoints", i)
        if not isinstance(cp, Mapping):
            raise doc.error(f"a checkpoint must be a mapping with after_turn and graders, got {type(cp).__name__}",
                            *at)
        for key in cp:
            if key not in KEYS:
                if strict:
                    raise doc.error(f"field {key} not found in type models.Checkpoint (known: {', '.join(KEYS)})",
                                    *at, key, kind=ReleaseRefusal)
                warnings.append(f"{doc.where(*at, key)}: {format_loc((*at, key))}: unknown checkpoint field {key!r} "
                                "ignored")
        turn = cp.get("after_turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise doc.error(f"after_turn must be a turn number from 1, got {turn!r}", *at, "after_turn")
        on_failure = cp.get("on_failure", "continue")
        if on_failure not in ("continue", "stop"):
            raise doc.error(f"on_failure must be continue or stop, got {on_failure!r}", *at, "on_failure")
        entries = cp.get("graders")
        if not isinstance(entries, list) or not entries:
            raise doc.error("a checkpoint needs graders (a non-empty list)", *at, "graders")
        prepared: list[dict[str, Any]] = []

        def keep(entry: Any, keys: Keys) -> dict[str, Any]:
            spec = prepare(entry, keys)
            prepared.append(spec)
            return spec

        compile_graders(entries, doc, (*at, "graders"), context, prepare=keep)  # names each bad field in place
        if turn in by_turn:
            warnings.append(f"{doc.where(*at)}: {format_loc(at)}: a second checkpoint after turn {turn}; as in waza, "
                            "the last one is used")
        by_turn[turn] = {"type": "waza_checkpoint", "name": f"_checkpoint_after_turn_{turn}", "weight": 0.0,
                         "config": {"after_turn": turn, "on_failure": on_failure, "graders": prepared}}
    return list(by_turn.values())
