"""``waza_file``: waza's ``file`` grader (microsoft/waza ``internal/graders/file_grader.go``).

Checks the run's workspace: ``must_exist`` / ``must_not_exist`` paths, and
``content_patterns`` (``{path, must_match, must_not_match}``: Go regexps over the file's
text). Checks: one per path, one per pattern, plus one per content entry for the file being
there; a missing content file fails that check and all its patterns. Passed when nothing
failed; score = passed checks / checks. No workspace: failed, score 0, as in waza.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern
from assay.graders._waza import check_patterns, checks_result, go_pattern, workspace_relative
from assay.graders._workspace import WorkspaceError, exists, read_text


class ContentPattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1, description="File, relative to the workspace.")
    must_match: list[str] = Field(default_factory=list, description="Go regexps the content must match.")
    must_not_match: list[str] = Field(default_factory=list, description="Go regexps the content must not match.")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        return workspace_relative(value, "path")

    @model_validator(mode="after")
    def _compiles(self) -> ContentPattern:
        check_patterns(self.must_match, "must_match")
        check_patterns(self.must_not_match, "must_not_match")
        return self


class WazaFileConfig(GraderConfig):
    must_exist: list[str] = Field(default_factory=list, description="Paths that must be in the workspace.")
    must_not_exist: list[str] = Field(default_factory=list, description="Paths that must not be in the workspace.")
    content_patterns: list[ContentPattern] = Field(default_factory=list,
                                                   description="Regex checks on files' content.")

    _compiled: list[tuple[list[CompiledPattern], list[CompiledPattern]]] = PrivateAttr(default_factory=list)

    @property
    def compiled(self) -> list[tuple[list[CompiledPattern], list[CompiledPattern]]]:
        """Prepared state: per content entry, its must_match and must_not_match patterns."""
        return self._compiled

    @field_validator("must_exist", "must_not_exist")
    @classmethod
    def _inside(cls, value: list[str]) -> list[str]:
        for i, p in enumerate(value):
            workspace_relative(p, f"item {i}")
        return value

    @model_validator(mode="after")
    def _some_check(self) -> WazaFileConfig:
        if not (self.must_exist or self.must_not_exist or self.content_patterns):
            raise ValueError("give at least one of must_exist, must_not_exist or content_patterns")
        self._compiled = [([go_pattern(p) for p in cp.must_match], [go_pattern(p) for p in cp.must_not_match])
                          for cp in self.content_patterns]
        return self


@register
class WazaFile(Grader[WazaFileConfig]):
    type = "waza_file"
    description = "waza's file grader: files present or absent in the workspace, and regexes on their content."
    traits = Traits(io_bound=True, reads_workspace=True)
    taxonomy = Taxonomy(reference="reference-free")

    def grade(self, sample: Sample) -> GraderResult:
        c = self.config
        total = len(c.must_exist) + len(c.must_not_exist) + \
            sum(len(cp.must_match) + len(cp.must_not_match) + 1 for cp in c.content_patterns)
        root = sample.workspace
        if not root:
            return self.scored_result(False, 0.0, "No workspace directory available for file grading")
        failures = [f"File must exist but not found: {p}" for p in c.must_exist if not exists(root, p)]
        failures += [f"File must not exist but found: {p}" for p in c.must_not_exist if exists(root, p)]
        for cp, (must, must_not) in zip(c.content_patterns, c.compiled, strict=True):
            try:
                content = read_text(root, cp.path)
            except (WorkspaceError, OSError) as exc:
                return self.error_result(ErrorCode.UNAVAILABLE, f"cannot read {cp.path}: {exc}")
            if content is None:
                failures.append(f"File not found for content check: {cp.path}")
                failures += [f"File {cp.path} missing expected pattern (file not found): {p}" for p in cp.must_match]
                failures += [f"File {cp.path} could not verify absence of pattern (file not found): {p}"
                             for p in cp.must_not_match]
                continue
            for pat in must:
                if not pat.test(content):
                    failures.append(f"File {cp.path} missing expected pattern: {pat.source}")
            for pat in must_not:
                if pat.test(content):
                    failures.append(f"File {cp.path} contains forbidden pattern: {pat.source}")
        return checks_result(self, failures, total, "file", {"workspace_dir": root})
