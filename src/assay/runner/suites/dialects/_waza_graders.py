"""waza grader entries as assay specs, for either waza edition.

One function, ``prepare``, turns an entry into ``{type, name, config, weight}``: options beside
``type`` fold into ``config`` (both editions' spellings), the kind maps to the assay grader
with waza's semantics (``GO_KINDS``; ``program`` is waza's, not Vally's), the edition's rules
apply (``code`` and ``script`` see that edition's context; the Python edition's ``regex``
ignores case), ``config.judge_model`` replaces a ``prompt`` grader's model as waza's runner
does, a weight of zero or less counts as 1 (``GraderConfig.EffectiveWeight``), and config keys
the grader does not know are dropped with a warning, as waza's decoding (``mapstructure``,
``yaml.v3``) ignores them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from assay.core import registry
from assay.core.errors import format_loc
from assay.runner.suites.filemodel import Keys, model_in
from assay.runner.suites.graders import fold_grader
from assay.runner.yamlsrc import YamlDoc

Edition = Literal["python", "go"]

GO_KINDS = {"text": "waza_text", "file": "waza_file", "diff": "waza_diff", "behavior": "waza_behavior",
            "action_sequence": "waza_action_sequence", "skill_invocation": "waza_skill_invocation",
            "tool_constraint": "waza_tool_constraint", "program": "waza_program"}
"""waza (Go edition) kinds with semantics of their own, and the assay graders for them."""
GO_ONLY = frozenset({*GO_KINDS, "prompt", "json_schema"})
PYTHON_ONLY = frozenset({"regex", "tool_calls", "script", "llm", "llm_comparison", "human", "human_calibration"})
_LANGUAGES = {"python": "python", "javascript": "nodejs", "js": "nodejs", "nodejs": "nodejs"}


@dataclass
class WazaGraders:
    """What ``prepare`` needs beyond the entry: the edition and the suite-wide judge model;
    it appends the warnings it has to give."""

    doc: YamlDoc
    edition: Edition
    judge_model: str | None = None
    default_type: str | None = None
    warnings: list[str] = field(default_factory=list)

    def prepare(self, entry: Any, keys: Keys) -> dict[str, Any]:
        spec = fold_grader(self.doc, entry, keys, default_type=self.default_type)
        kind = spec.get("type")
        config = dict(spec["config"])
        if kind == "prompt":
            spec, config = self._prompt(spec, config)
        elif kind == "program" and "program" in config and "command" not in config:
            pass  # Vally's program config (`program`, `args`, ...) written in a waza suite: assay's program
        elif kind in GO_KINDS:
            spec = {**spec, "type": GO_KINDS[kind]}
        elif kind == "json_schema" and "schema_file" in config:
            config = _schema_file(self.doc, config, keys)
        elif kind == "code":
            language = config.get("language")
            if isinstance(language, str) and language.lower() in _LANGUAGES:
                config["language"] = _LANGUAGES[language.lower()]
            if "assertions" in config:
                config.setdefault("edition", self.edition)
        elif kind == "script":
            config.setdefault("edition", self.edition)
        elif kind == "regex" and self.edition == "python":
            config.setdefault("flags", "i")  # waza's RegexGrader searches with re.IGNORECASE
        spec = {**spec, "config": self._known(spec["type"], config, entry, keys)}
        return self._weight(spec, keys)

    def _prompt(self, spec: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """waza's prompt grader (internal/graders/prompt_grader.go) scores pass/fail verdict tools:
        ``scoring: checks``; its ``mode: pairwise`` judges both orders and counts an
        order-dependent verdict as a passing tie: ``pairwise`` with ``flip_passes``."""
        if self.judge_model:
            config["model"] = self.judge_model  # injectJudgeModel: the suite's judge wins
        mode = config.pop("mode", None)
        if mode == "pairwise":
            config.pop("continue_session", None)
            config.setdefault("flip_passes", True)
            return {**spec, "type": "pairwise"}, config
        if mode not in (None, "independent"):
            config["mode"] = mode  # left for the config model to refuse, naming the field
        config.setdefault("scoring", "checks")
        return spec, config

    def _known(self, kind: Any, config: dict[str, Any], entry: Any, keys: Keys) -> dict[str, Any]:
        """``config`` without the keys the grader does not know (at any depth: waza's nested
        entries such as ``content_patterns`` decode leniently too), each named in a warning."""
        grader = registry.get(kind) if isinstance(kind, str) else None
        if grader is None:
            return config

        def where(key: str) -> Keys:
            return (*keys, key) if isinstance(entry, Mapping) and key in entry else (*keys, "config", key)

        return self._prune(grader.Config, config, where, str(kind))

    def _prune(self, model: type[BaseModel], value: dict[str, Any], where: Any, kind: str) -> dict[str, Any]:
        fields = {f.alias or name: f for name, f in model.model_fields.items()}
        kept = {}
        for key, item in value.items():
            at = where(key)
            field = fields.get(key)
            if field is None:
                self.warnings.append(f"{self.doc.where(*at)}: {format_loc(at)}: unknown {kind} option {key!r} "
                                     f"ignored, as waza ignores it (known: {', '.join(sorted(fields))})")
                continue
            inner = model_in(field.annotation)
            if inner is not None and isinstance(item, Mapping):
                item = self._prune(inner, dict(item), lambda k, at=at: (*at, k), kind)
            elif inner is not None and isinstance(item, list):
                item = [self._prune(inner, dict(x), lambda k, at=at, i=i: (*at, i, k), kind)
                        if isinstance(x, Mapping) else x for i, x in enumerate(item)]
            kept[key] = item
        return kept

    def _weight(self, spec: dict[str, Any], keys: Keys) -> dict[str, Any]:
        weight = spec.get("weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight <= 0:
            self.warnings.append(f"{self.doc.where(*keys, 'weight')}: weight {weight} counts as 1, as in waza "
                                 "(a weight of 0 or less means unset)")
            return {**spec, "weight": 1.0}
        return spec


def edition_of(kinds: AbstractSet[str], shapes: AbstractSet[str], top_keys: AbstractSet[str]) -> Edition:
    """The waza edition a suite is written for: from its results file's shape, else from
    grader kinds or top-level keys only one edition has; the Go edition (today's) otherwise."""
    if "go" in shapes:
        return "go"
    if "python" in shapes:
        return "python"
    if kinds & GO_ONLY or top_keys & {"tasks_from", "hooks", "inputs", "baseline", "range"}:
        return "go"
    if kinds & PYTHON_ONLY:
        return "python"
    return "go"


def _schema_file(doc: YamlDoc, config: dict[str, Any], keys: Keys) -> dict[str, Any]:
    """waza's ``json_schema`` ``schema_file`` (internal/graders/json_schema_grader.go): a JSON
    schema read from a file (relative to the file naming it, else the current directory),
    used when no inline ``schema`` is given."""
    config = dict(config)
    name = config.pop("schema_file")
    if "schema" in config:
        return config
    if not isinstance(name, str) or not name:
        raise doc.error("schema_file must be a path", *keys, "config", "schema_file")
    path = next((p for p in (doc.path.parent / name, Path(name)) if p.is_file()), None)
    if path is None:
        raise doc.error(f"schema file {name!r} not found (relative to {doc.path.parent})", *keys, "config",
                        "schema_file")
    try:
        config["schema"] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise doc.error(f"cannot read schema file {path}: {exc}", *keys, "config", "schema_file") from None
    return config

