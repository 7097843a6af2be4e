"""``vally_file``: Vally's workspace file graders on the sample's ``workspace`` (Vally's
``workDir``):

- ``exists`` (``file-exists``, ``file-not-exists``): at least one path matches the glob
  (microsoft.github.io/vally/reference/graders/file-exists/);
- ``contains`` (``file-contains``, ``file-not-contains``): ``value`` appears, case-sensitively,
  in at least one matching file (.../graders/file-contains/);
- ``matches`` (``file-matches``, ``file-not-matches``): ``pattern`` (a leading ``(?ims)`` sets
  flags) matches at least one matching file's UTF-8 text (.../graders/file-matches/).

``negate: true`` inverts the verdict (the ``*-not-*`` spellings). Globs follow Node's ``glob``:
``*``, ``?``, ``[...]``, ``**`` across folders, ``{a,b}`` alternatives, dotfiles skipped by
wildcards. Paths are confined to the workspace: an absolute path or a ``..`` segment is a
config error, and a match whose real path (symlinks followed) leaves the workspace is ignored.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern
from assay.graders._text import preview
from assay.graders.program import resolve_sub_path
from assay.graders.vally_output import vally_pattern

MAX_FILE_BYTES = 10_000_000
"""Most bytes read from one file; the rest is not searched."""
MAX_MATCHES = 10_000
"""Most glob matches considered."""
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def expand_braces(pattern: str) -> list[str]:
    """``a.{json,txt}`` as ``a.json``, ``a.txt`` (nested groups expand from the inside out)."""
    m = _BRACES.search(pattern)
    if not m:
        return [pattern]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(pattern[:m.start()] + alt + pattern[m.end():]))
    return out


def workspace_matches(root: str, pattern: str) -> tuple[list[str], str | None]:
    """Paths (relative, sorted) under ``root`` matching the glob, confined to ``root``; or a problem."""
    root_real, problem = resolve_sub_path(root, None)
    if not os.path.isdir(root_real):
        return [], f"workspace {root} is not a directory"
    found: set[str] = set()
    for pat in expand_braces(pattern):
        for rel in glob.iglob(pat, root_dir=root_real, recursive=True):
            real = os.path.realpath(os.path.join(root_real, rel))
            if os.path.commonpath([root_real, real]) == root_real:
                found.add(os.path.normpath(rel))
            if len(found) >= MAX_MATCHES:
                break
    return sorted(found), problem


class VallyFileConfig(GraderConfig):
    mode: Literal["exists", "contains", "matches"] = Field(description="exists, contains or matches.")
    path: str = Field(min_length=1, description="File path or glob, relative to the workspace.")
    value: str | None = Field(default=None, description="contains: text that must appear (case-sensitive).")
    pattern: str | None = Field(default=None, description="matches: pattern; a leading (?ims) sets flags.")
    negate: bool = Field(default=False, description="Pass when nothing matches / is found.")
    timeout_ms: int = Field(default=100, ge=1, le=10_000, description="Bound per search (backtracking only).")

    _pattern: CompiledPattern | None = PrivateAttr(default=None)

    @property
    def compiled(self) -> CompiledPattern | None:
        """Prepared state: the ``matches`` pattern, compiled once."""
        return self._pattern

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        if os.path.isabs(value) or value.startswith("~"):
            raise ValueError(f"{value!r} is absolute; give a path relative to the workspace")
        if ".." in re.split(r"[\\/]", value):
            raise ValueError(f"{value!r} has a '..' segment; paths stay inside the workspace")
        return value

    @model_validator(mode="after")
    def _check(self) -> VallyFileConfig:
        need = {"exists": (), "contains": ("value",), "matches": ("pattern",)}[self.mode]
        for field in ("value", "pattern"):
            given = getattr(self, field) is not None
            if given != (field in need):
                raise ValueError(f"{field} is {'required' if not given else 'not used'} for mode {self.mode}")
        if self.pattern is not None:
            self._pattern = vally_pattern(self.pattern, "pattern", timeout_s=self.timeout_ms / 1000)
        return self


@register
class VallyFile(Grader[VallyFileConfig]):
    type = "vally_file"
    description = "Vally's file-exists / file-contains / file-matches (and negated forms) in the workspace."
    traits = Traits(io_bound=True, reads_workspace=True)
    taxonomy = Taxonomy(determinism="static", cost="low", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        if not sample.workspace:
            return self.error_result(ErrorCode.UNAVAILABLE, "the sample has no workspace (Vally's workDir)")
        paths, problem = workspace_matches(sample.workspace, cfg.path)
        if problem:
            return self.error_result(ErrorCode.UNAVAILABLE, problem)
        if cfg.mode == "exists":
            found = bool(paths)
            shown = ", ".join(paths[:10])
            reason = f"files matching {cfg.path!r} found: {shown}" if found else f"no files matching {cfg.path!r}"
            return self.scored_result(found != cfg.negate, reason=reason, details={"files": paths[:100]})
        files = [p for p in paths if os.path.isfile(os.path.join(sample.workspace, p))]
        if not files:
            return self.scored_result(cfg.negate, reason=f"no files matching {cfg.path!r} found")
        # contains mode has a value and no pattern; matches mode a compiled pattern (_check)
        needle, compiled = cfg.value or "", cfg.compiled
        hits = []
        for rel in files:
            try:
                with open(os.path.join(sample.workspace, rel), "rb") as fh:
                    text = fh.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
            except OSError as exc:
                return self.error_result(ErrorCode.UNAVAILABLE, f"cannot read {rel}: {exc.strerror or exc}")
            if compiled is None:
                hit = needle in text
            else:
                try:
                    hit = compiled.test(text)
                except TimeoutError:
                    return self.error_result(ErrorCode.TIMEOUT,
                                             f"pattern search in {rel} took over {cfg.timeout_ms} ms")
            if hit:
                hits.append(rel)
        what = repr(preview(needle, 100)) if cfg.mode == "contains" else f"/{preview(cfg.pattern or '', 100)}/"
        reason = f"{what} found in {', '.join(hits[:10])}" if hits else f"{what} not found in {', '.join(files[:10])}"
        return self.scored_result(bool(hits) != cfg.negate, reason=reason,
                                  details={"files": files[:100], "hits": hits[:100]})
