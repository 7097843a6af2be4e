"""waza grader entries as assay specs, for either waza edition.

One function, ``prepare``, turns an entry into ``{type, name, config, weight}``: options beside
``type`` fold into ``config`` (both editions' spellings), the kind maps to the assay grader
with waza's semantics (``GO_KINDS``; ``program`` is waza's, not Vally's), the edition's rules
apply (``code`` and ``script`` see that edition's context; the Python edition's ``regex``
ignores case), ``config.judge_model`` is the model of ``prompt`` graders (from 0.27 only of
those naming none, as ``applyDefaults`` does; before, it replaced theirs), a grader ``ref`` is
read from a file in the suite (``_waza_refs``; a remote one is refused), a ``json_schema`` with
``extract_json: true`` is ``waza_json_schema``, a weight of zero or less counts as 1
(``GraderConfig.EffectiveWeight``). Keys follow the release the suite is read as
(``_waza_releases``): from 0.24 waza decodes grader entries and configs with known fields only,
so a key it does not define is an error in waza's words; before, it is dropped with a warning.
Grader kinds follow the release too (``regex``/``keyword`` before 0.21, ``text``/``trigger``
from 0.21, the Go ``tool_calls`` from 0.27).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from assay.core import registry
from assay.core.errors import format_loc
from assay.runner.suites.dialects._waza_kinds import (
    ENTRY_KEYS,
    GO_KINDS,
    GO_ONLY,
    GO_TOOL_CALLS,
    PYTHON_ONLY,
    WAZA_PARAMS,
    go_kinds,
)
from assay.runner.suites.dialects._waza_refs import resolve_ref
from assay.runner.suites.dialects._waza_releases import Release, ReleaseRefusal
from assay.runner.suites.filemodel import Keys, model_in
from assay.runner.suites.graders import SPEC_KEYS, fold_grader
from assay.runner.yamlsrc import YamlDoc

Edition = Literal["python", "go"]
_LANGUAGES = {"python": "python", "javascript": "nodejs", "js": "nodejs", "nodejs": "nodejs"}


@dataclass
class WazaGraders:
    """What ``prepare`` needs beyond the entry: the edition and the suite-wide judge model;
    it appends the warnings it has to give."""

    doc: YamlDoc
    edition: Edition
    release: Release
    judge_model: str | None = None
    default_type: str | None = None
    warnings: list[str] = field(default_factory=list)
    suite_dir: Path | None = None
    """Where a grader ``ref`` is resolved and confined (the eval file's directory by default)."""
    files: list[Path] = field(default_factory=list)
    """Grader files read through ``ref``, inputs of the suite."""

    @property
    def strict(self) -> bool:
        """Whether waza refuses unknown keys in the release read (Go edition, 0.24 on)."""
        return self.edition == "go" and self.release.has("strict")

    def prepare(self, entry: Any, keys: Keys) -> dict[str, Any]:
        self._entry_keys(entry, keys)
        if isinstance(entry, Mapping) and "ref" in entry:
            entry, read = resolve_ref(self.doc, entry, keys, self.suite_dir or self.doc.path.parent)
            self.files.append(read)
        spec = fold_grader(self.doc, entry, keys, default_type=self.default_type)
        kind = spec.get("type")
        config = dict(spec["config"])
        if self.edition == "go":
            spec, config = self._go_kind(spec, config, keys)
            kind = spec.get("type")
        if kind == "prompt":
            spec, config = self._prompt(spec, config)
        elif kind == "program" and "program" in config and "command" not in config:
            pass  # Vally's program config (`program`, `args`, ...) written in a waza suite: assay's program
        elif kind in GO_KINDS and self.edition == "go":
            spec = {**spec, "type": GO_KINDS[kind]}
        elif kind == "json_schema":
            config = _schema_file(self.doc, config, keys) if "schema_file" in config else config
            extract = config.pop("extract_json", False)
            if not isinstance(extract, bool):
                raise self.doc.error(f"extract_json must be true or false, got {extract!r}", *keys, "config",
                                     "extract_json")
            if extract:  # json_schema_grader.go: extraction is opt-in; strict JSON stays assay's json_schema
                spec, config = {**spec, "type": "waza_json_schema"}, {**config, "extract_json": True}
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

    def _entry_keys(self, entry: Any, keys: Keys) -> None:
        """From 0.24 a grader entry has only waza's keys beside ``config``."""
        if self.edition != "go" or not self.release.refuses_unknown() or not isinstance(entry, Mapping):
            return
        type_name, known = ENTRY_KEYS["task" if self.default_type else "eval"]
        for key in entry:
            if key not in known:
                raise self.doc.error(f"field {key} not found in type models.{type_name} (waza "
                                     f"{self.release.since_text('strict')} decodes grader entries with known fields "
                                     f"only; known: {', '.join(sorted(known))})", *keys, key, kind=ReleaseRefusal)

    def _go_kind(self, spec: dict[str, Any], config: dict[str, Any],
                 keys: Keys) -> tuple[dict[str, Any], dict[str, Any]]:
        """A Go-edition kind at the release read: refused when that release has no such kind,
        ``keyword`` as ``waza_text``, the Go ``tool_calls`` as ``waza_tool_calls``."""
        kind = spec.get("type")
        kinds = go_kinds(self.release)
        python_shape = kind == "tool_calls" and not GO_TOOL_CALLS & set(config) and \
            bool({"required", "forbidden", "sequence"} & set(config))
        moved = {"regex", "keyword", "text", "trigger", "tool_calls"}
        if kind in moved and kind not in kinds and not python_shape:
            raise self.doc.error(f"grader with identifier {spec.get('name')!r} is using an unsupported grader type "
                                 f"at {self.release.name}. Valid grader types: {', '.join(kinds)}",
                                 *keys, "type", kind=ReleaseRefusal)
        if kind == "keyword":
            words = [*config.pop("must_contain", []), *config.pop("keywords", [])]
            config = {"contains": words, "not_contains": config.pop("must_not_contain", []), **config}
            return {**spec, "type": "waza_text"}, config
        if kind == "tool_calls" and not python_shape:
            return {**spec, "type": "waza_tool_calls"}, config
        return spec, config

    def _prompt(self, spec: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """waza's prompt grader (internal/graders/prompt_grader.go) scores pass/fail verdict tools:
        ``scoring: checks``; its ``mode: pairwise`` judges both orders and counts an
        order-dependent verdict as a passing tie: ``pairwise`` with ``flip_passes``."""
        if self.judge_model and (not config.get("model") or not self.release.has("judge_model_fills")):
            config["model"] = self.judge_model  # a default from 0.27 (applyDefaults), an override before
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

        waza_kind = entry.get("type", self.default_type) if isinstance(entry, Mapping) else None
        params = WAZA_PARAMS.get(waza_kind) if self.edition == "go" and isinstance(waza_kind, str) else None
        is_vally_program = waza_kind == "program" and kind == "program"  # Vally's shape
        if params is not None and isinstance(waza_kind, str) and not is_vally_program:
            config = self._waza_keys(config, params, where, entry, waza_kind)
            return self._prune(grader.Config, config, where, str(kind), checked=True)
        return self._prune(grader.Config, config, where, str(kind))

    def _waza_keys(self, config: dict[str, Any], params: tuple[str, frozenset[str]], where: Any, entry: Any,
                   kind: str) -> dict[str, Any]:
        """``config`` without keys waza's parameter type does not define: an error from 0.24,
        in waza's words, else a warning. Keys waza defines are never called unknown."""
        type_name, known = params
        folded = set(entry) - set(SPEC_KEYS) if isinstance(entry, Mapping) else set()
        kept = {}
        for key, value in config.items():
            if key in known or key in folded or key in ("edition", "scoring", "flip_passes", "flags"):
                kept[key] = value  # waza's, folded from beside `type`, or set by this dialect
                continue
            at = where(key)
            if self.strict:
                name = entry.get("name") if isinstance(entry, Mapping) else None
                raise self.doc.error(f"invalid grader config for {json.dumps(name)} (type {json.dumps(kind)}): failed "
                                     f"to decode grader parameters of type models.{type_name}: field {key} not found "
                                     f"in type models.{type_name} (waza {self.release.since_text('strict')} decodes "
                                     f"grader configs with known fields only)", *at, kind=ReleaseRefusal)
            self.warnings.append(f"{self.doc.where(*at)}: {format_loc(at)}: unknown {kind} option {key!r} ignored, "
                                 f"as waza {self.release.describe().split(',')[0].removeprefix('waza ')} ignores it "
                                 f"(known: {', '.join(sorted(known))})")
        return kept

    def _prune(self, model: type[BaseModel], value: dict[str, Any], where: Any, kind: str,
               checked: bool = False) -> dict[str, Any]:
        """``value`` without keys ``model`` does not know, at any depth. ``checked``: these
        keys were checked against waza's own already, so one left is waza's but not assay's."""
        fields = {f.alias or name: f for name, f in model.model_fields.items()}
        kept = {}
        for key, item in value.items():
            at = where(key)
            field = fields.get(key)
            if field is None and checked:
                self.warnings.append(f"{self.doc.where(*at)}: {format_loc(at)}: waza's {kind} option {key!r} has no "
                                     f"effect in assay (known here: {', '.join(sorted(fields))})")
                continue
            if field is None and self.strict:
                raise self.doc.error(f"field {key} not found (waza {self.release.since_text('strict')} decodes grader "
                                     f"configs with known fields only; known: {', '.join(sorted(fields))})", *at,
                                     kind=ReleaseRefusal)
            if field is None:
                self.warnings.append(f"{self.doc.where(*at)}: {format_loc(at)}: unknown {kind} option {key!r} "
                                     f"ignored, as waza ignores it (known: {', '.join(sorted(fields))})")
                continue
            inner = model_in(field.annotation)
            if inner is not None and isinstance(item, Mapping) and _keyed(field.annotation):
                item = {k: self._prune(inner, dict(v), lambda k2, at=at, k=k: (*at, k, k2), kind)
                        if isinstance(v, Mapping) else v for k, v in item.items()}
            elif inner is not None and isinstance(item, Mapping):
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


def _keyed(annotation: Any) -> bool:
    """Whether a field's type is a mapping of models (``dict[str, ArgMatcher]``), not a model."""
    return any(get_origin(a) is dict for a in (annotation, *get_args(annotation)))


def edition_of(kinds: AbstractSet[str], shapes: AbstractSet[str], top_keys: AbstractSet[str],
               pinned: bool = False) -> tuple[Edition, bool]:
    """The waza edition a suite is written for, and whether something told it: Go when a
    release is pinned or its results file is Go's, Python for Python's results, else from
    grader kinds or top-level keys only one edition has; the Go edition (today's) otherwise,
    untold. ``kinds`` may hold ``tool_calls:go`` for a ``tool_calls`` entry with Go-only keys."""
    if pinned or "go" in shapes:
        return "go", True
    if "python" in shapes:
        return "python", True
    if kinds & {*GO_ONLY, "tool_calls:go"} or top_keys & {"tasks_from", "hooks", "inputs", "baseline", "range"}:
        return "go", True
    if kinds & {*PYTHON_ONLY, "tool_calls"}:
        return "python", True
    return "go", False


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

