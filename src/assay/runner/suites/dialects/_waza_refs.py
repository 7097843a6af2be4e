"""waza grader references (``ref:`` on an eval-level grader entry) resolved the one way assay
can do safely: a local file inside the suite.

waza's registry design (``docs/design/13-eval-registry.md`` at b0bb87c6, a draft; the loader
accepts ``ref`` on ``GraderConfig`` in ``internal/models/spec.go``) writes references
Go-module style, ``host/path@version#subpath``, fetched and cached by ``waza get``. assay never
fetches from the network for a suite it may not trust, so such a reference is an error naming
file, line and field, saying to vendor the grader into the suite.

A local reference is a relative path (``./graders/lint.yaml``) to a YAML file holding one
grader entry as it would be written inline (``type``, ``name``, ``config``, ``weight``,
``model``). It is resolved against the suite's directory (the one holding ``eval.yaml``) and
must stay inside it once symbolic links are followed. The entry beside ``ref`` overrides it as
the design's rule D7 says: ``name``, ``weight`` and ``model`` replace, ``config`` merges into
the file's config (mappings merged key by key, lists and values replaced), and ``type`` may not
change. A referenced file may not itself hold a ``ref``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.core.errors import SpecError
from assay.runner.suites.filemodel import Keys
from assay.runner.yamlsrc import YamlDoc

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HOST = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+/")
_REPLACED = ("name", "weight", "model")


def is_remote(ref: str) -> bool:
    """Whether ``ref`` names something to fetch: a URL, a Go-module-style ``host/path``, or
    anything pinned with ``@version``. ``./`` and ``../`` always start a local path."""
    if ref.startswith(("./", "../")):
        return False
    return bool(_SCHEME.match(ref) or _HOST.match(ref) or "@" in ref)


def resolve_ref(doc: YamlDoc, entry: Mapping[str, Any], keys: Keys,
                suite_dir: Path) -> tuple[dict[str, Any], Path]:
    """``entry`` with its ``ref`` replaced by the referenced grader, the entry's own keys
    applied over it, and the file read. Raises SpecError at ``keys``/``ref`` (or in the referenced file) for a
    remote reference, a path outside the suite, a missing or malformed file."""
    ref = entry["ref"]
    if not isinstance(ref, str) or not ref.strip():
        raise doc.error("ref must be a relative path to a grader file in the suite", *keys, "ref")
    ref = ref.strip()
    if is_remote(ref):
        raise doc.error(f"grader reference {ref!r} is remote (resolved by `waza get` from the network); assay never "
                        "fetches graders for a suite: vendor the grader into the suite and write `ref: "
                        "./graders/<name>.yaml`, or write it inline", *keys, "ref")
    if Path(ref).is_absolute():
        raise doc.error(f"ref {ref!r} must be relative to the suite's directory {suite_dir}", *keys, "ref")
    root = suite_dir.resolve()
    target = (root / ref).resolve()
    if not target.is_relative_to(root):
        raise doc.error(f"ref {ref!r} leads outside the suite's directory {root}; a referenced grader must be a file "
                        "inside it", *keys, "ref")
    if not target.is_file():
        raise doc.error(f"ref {ref!r}: no such grader file ({target})", *keys, "ref")
    try:
        ref_doc = YamlDoc(target)
    except SpecError as exc:
        raise SpecError(f"grader file named by {doc.where(*keys, 'ref')}: {exc.message}", path=exc.path,
                        where=exc.where) from None
    base = ref_doc.data
    if not isinstance(base, Mapping):
        raise ref_doc.error(f"a referenced grader file must hold one grader entry (a mapping with type, name, "
                            f"config), got {type(base).__name__}")
    if "ref" in base:
        raise ref_doc.error("a referenced grader may not itself use ref", "ref")
    if "type" not in base:
        raise ref_doc.error("a referenced grader needs a type", "type")
    if "type" in entry and entry["type"] != base["type"]:
        raise doc.error(f"type {entry['type']!r} cannot override the referenced grader's type {base['type']!r} "
                        f"({ref_doc.where('type')})", *keys, "type")
    merged = {k: v for k, v in base.items()}
    merged.update({k: entry[k] for k in _REPLACED if k in entry})
    if "config" in entry:
        local = entry["config"]
        if not isinstance(local, Mapping):
            raise doc.error("config must be a mapping", *keys, "config")
        remote = base.get("config") or {}
        if not isinstance(remote, Mapping):
            raise ref_doc.error("config must be a mapping", "config")
        merged["config"] = deep_merge(remote, local)
    return merged, target


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` applied to ``base``: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = deep_merge(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return out
