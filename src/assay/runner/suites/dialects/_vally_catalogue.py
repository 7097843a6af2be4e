"""Vally grader entries as assay specs: the entry's own keys, Vally's catalogue type names
translated to assay's ``vally_*`` graders, and the stimulus rubric handed to the judges.

A Vally grader entry is ``{type, name, config, weight}``
(microsoft.github.io/vally/reference/eval-spec/). Vally's lint refuses unknown keys *inside*
``config`` (``invalid-grader-config``, microsoft.github.io/vally/reference/cli/lint/) and the
same validation runs before ``vally eval``, so assay keeps grader configs strict. Keys beside
``type`` that are none of the four are not grader options in Vally: they are ignored with a
warning naming file and line (chosen here; Vally's pages do not say).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.core.errors import format_loc
from assay.runner.suites.filemodel import Keys
from assay.runner.suites.graders import SPEC_KEYS, fold_grader
from assay.runner.yamlsrc import YamlDoc

JUDGES = ("prompt", "panel", "pairwise")
"""Vally's LLM judges, which read the stimulus ``rubric`` when their config has no prompt."""

# Vally type -> (assay grader, config fields it adds; a negated spelling flips ``negate``).
CATALOGUE: dict[str, tuple[str, dict[str, Any]]] = {
    "output-contains": ("vally_output", {"mode": "contains"}),
    "output-not-contains": ("vally_output", {"mode": "contains", "negate": True}),
    "output-matches": ("vally_output", {"mode": "matches"}),
    "output-not-matches": ("vally_output", {"mode": "matches", "negate": True}),
    "transcript-contains": ("vally_transcript", {"mode": "contains"}),
    "transcript-not-contains": ("vally_transcript", {"mode": "contains", "negate": True}),
    "transcript-matches": ("vally_transcript", {"mode": "matches"}),
    "transcript-not-matches": ("vally_transcript", {"mode": "matches", "negate": True}),
    "file-exists": ("vally_file", {"mode": "exists"}),
    "file-not-exists": ("vally_file", {"mode": "exists", "negate": True}),
    "file-contains": ("vally_file", {"mode": "contains"}),
    "file-not-contains": ("vally_file", {"mode": "contains", "negate": True}),
    "file-matches": ("vally_file", {"mode": "matches"}),
    "file-not-matches": ("vally_file", {"mode": "matches", "negate": True}),
    "completed": ("vally_session", {"mode": "completed"}),
    "exit-success": ("vally_session", {"mode": "exit-success"}),
    "run-command": ("vally_run_command", {}),
    "skill-invocation": ("vally_skill_invocation", {}),
    "tool-calls": ("vally_tool_calls", {}),
    **{m: ("vally_metric", {"metric": m}) for m in ("token-budget", "tool-call-count", "turn-count",
                                                    "error-count", "wall-time")},
}

NOT_YET = frozenset({"diff-contains", "diff-not-contains", "diff-empty"})
"""Vally catalogue graders assay refuses by name, saying why, rather than as unknown types."""


def entry_spec(doc: YamlDoc, entry: Any, at: Keys, warnings: list[str]) -> dict[str, Any]:
    """A Vally grader entry as ``{type, name, config, weight}``: other keys beside ``type`` are
    dropped, each with one warning naming file and line (a default grader compiled for every
    stimulus warns once). Raises SpecError for an entry that is not a mapping."""
    if isinstance(entry, Mapping):
        for key in entry.keys() - set(SPEC_KEYS):
            warning = (f"{doc.where(*at, key)}: {format_loc((*at, key))}: unknown field {key!r} ignored "
                       f"(known: {', '.join(SPEC_KEYS)})")
            if warning not in warnings:
                warnings.append(warning)
        entry = {k: v for k, v in entry.items() if k in SPEC_KEYS}
    return fold_grader(doc, entry, at)


def translate(spec: dict[str, Any], doc: YamlDoc, at: Keys) -> dict[str, Any]:
    """Vally grader types assay spells differently (``CATALOGUE``): the type becomes assay's
    grader and the config gains its ``mode``; a ``*-not-*`` spelling inverts ``negate``."""
    entry = CATALOGUE.get(str(spec.get("type")))
    if spec.get("type") in NOT_YET:
        raise doc.error(f"Vally's {spec['type']} grader reads the workspace diff Vally records on the trajectory "
                        "(microsoft.github.io/vally/reference/graders/diff-contains/); assay does not read that "
                        "artifact yet: check the files with file-contains / file-matches instead", *at, "type")
    if entry is None:
        return spec
    grader, added = entry
    config = dict(spec["config"])
    for key in added.keys() & config.keys() - {"negate"}:
        raise doc.error(f"unknown field for {spec['type']}: {key}", *at, "config", key)
    if added.get("negate"):
        given = config.get("negate", False)
        config["negate"] = (not given) if isinstance(given, bool) else given  # not a boolean: the grader says so
    return {**spec, "type": grader, "config": {**{k: v for k, v in added.items() if k != "negate"}, **config}}


def with_rubric(spec: dict[str, Any], rubric: list[str] | str | None) -> dict[str, Any]:
    """Vally's judge graders (prompt, panel, pairwise: microsoft.github.io/vally/reference/graders/
    prompt/, panel/ and pairwise/) judge by the stimulus's ``rubric`` list when their config has
    no ``prompt``; assay's graders read it from ``config.prompt``, so it is copied there. Their
    other options keep Vally's names (``scoring: scale_1_5``, ``threshold``, ``models``,
    ``aggregation``), which the graders accept as written."""
    if rubric and spec.get("type") in JUDGES and isinstance(spec.get("config"), dict) \
            and "prompt" not in spec["config"]:
        text = rubric if isinstance(rubric, str) else "\n".join(f"- {item}" for item in rubric)
        spec = {**spec, "config": {**spec["config"], "prompt": text}}
    return spec
