"""``waza_diff``: waza's ``diff`` grader (microsoft/waza ``internal/graders/diff_grader.go``,
``docs/graders/diff.md``).

Each ``expected_files`` entry ``{path, snapshot, contains}`` checks a workspace file: it must
exist (one check); with ``snapshot``, its text must equal the snapshot file's exactly (one
check); each ``contains`` fragment is a check: ``+text`` or ``text`` must occur, ``-text``
must not (the text after the sign is trimmed; empty fragments are skipped but still counted,
as in waza). A missing file fails all its checks. Snapshots resolve against ``context_dir``
(relative to the suite's folder), else the suite's ``fixtures/`` folder when the snapshot is
there (waza's default ``--context-dir``), else the suite's folder. Score = passed / checks.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._waza import checks_result, workspace_relative
from assay.graders._workspace import WorkspaceError, read_snapshot, read_text


class ExpectedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1, description="Workspace file, relative to the workspace.")
    snapshot: str | None = Field(default=None, description="File whose text the workspace file must equal.")
    contains: list[str] = Field(default_factory=list,
                                description="Fragments: `+text`/`text` must occur, `-text` must not.")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        return workspace_relative(value, "path")

    @model_validator(mode="after")
    def _some_check(self) -> ExpectedFile:
        if not self.snapshot and not self.contains:
            raise ValueError(f"expected file {self.path!r} needs 'snapshot' or 'contains'")
        return self


class WazaDiffConfig(GraderConfig):
    expected_files: list[ExpectedFile] = Field(min_length=1, description="Files to compare.")
    context_dir: str | None = Field(default=None, description="Folder snapshots resolve against.")

    def snapshot_path(self, snapshot: str) -> Path:
        """Where a snapshot is read from (see the module docstring)."""
        base = Path(self.base_dir or ".")
        if Path(snapshot).is_absolute():
            return Path(snapshot)
        if self.context_dir:
            return base / self.context_dir / snapshot
        fixtures = base / "fixtures" / snapshot
        return fixtures if fixtures.exists() else base / snapshot


def _fragment(raw: str) -> tuple[str, bool]:
    if raw.startswith("+"):
        return raw[1:].strip(), True
    if raw.startswith("-"):
        return raw[1:].strip(), False
    return raw.strip(), True


@register
class WazaDiff(Grader[WazaDiffConfig]):
    type = "waza_diff"
    description = "waza's diff grader: workspace files equal snapshots and contain (or lack) fragments."
    traits = Traits(io_bound=True, reads_workspace=True)

    def grade(self, sample: Sample) -> GraderResult:
        c = self.config
        total = sum(1 + (1 if ef.snapshot else 0) + len(ef.contains) for ef in c.expected_files)
        root = sample.workspace
        if not root:
            return self.scored_result(False, 0.0, "No workspace directory available for diff grading")
        failures: list[str] = []
        for ef in c.expected_files:
            try:
                actual = read_text(root, ef.path)
            except (WorkspaceError, OSError) as exc:
                return self.error_result(ErrorCode.UNAVAILABLE, f"cannot read {ef.path}: {exc}")
            if actual is None:
                failures.append(f"Expected file not found in workspace: {ef.path}")
                if ef.snapshot:
                    failures.append(f"Snapshot comparison skipped (file not found): {ef.path}")
                failures += [f"Contains check skipped (file not found): {ef.path} → {f}" for f in ef.contains]
                continue
            if ef.snapshot:
                try:
                    expected = read_snapshot(c.snapshot_path(ef.snapshot))
                except OSError as exc:
                    failures.append(f"Failed to read snapshot file {ef.snapshot} for {ef.path}: {exc}")
                else:
                    if actual != expected:
                        failures.append(f"File {ef.path} does not match snapshot {ef.snapshot}")
            for raw in ef.contains:
                text, present = _fragment(raw)
                if not text:
                    continue
                if present and text not in actual:
                    failures.append(f"File {ef.path} missing expected fragment: {text}")
                elif not present and text in actual:
                    failures.append(f"File {ef.path} contains fragment that should be absent: {text}")
        return checks_result(self, failures, total, "diff", {"workspace_dir": root})
