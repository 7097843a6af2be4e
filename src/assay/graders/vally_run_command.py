"""``vally_run_command``: Vally's ``run-command`` grader
(microsoft.github.io/vally/reference/graders/run-command/).

Runs ``command`` in the workspace (Vally's ``workDir``, or ``sub_path`` under it, which must
stay inside: no ``..`` or symlink escapes). With ``args`` the command is executed directly;
without, ``command`` is a shell command line for ``/bin/sh``. It passes when the exit code is
``expected_exit_code`` (default 0) and every output check given holds: ``stdout_contains`` /
``stderr_contains`` (substrings, case-sensitive), ``stdout_matches`` / ``stdout_not_matches``
(patterns; a leading ``(?ims)`` sets flags). ``timeout`` defaults to 30s; ``env`` is merged over
the environment. Score 1 or 0. The workspace root falls back as for ``program``.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import DEFAULT_STDOUT_LIMIT, ProcessCall
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern
from assay.graders._process import (
    NO_PROCESS_RUNNER,
    Duration,
    EnvVars,
    OsText,
    format_duration,
)
from assay.graders._text import preview
from assay.graders.program import ProgramConfig, resolve_sub_path
from assay.graders.vally_output import vally_pattern


class VallyRunCommandConfig(GraderConfig):
    command: OsText = Field(min_length=1, description="A binary (with args) or a shell command line (without).")
    args: list[OsText] | None = Field(default=None, description="Arguments; given, no shell is used.")
    expected_exit_code: int = Field(default=0, description="Exit code of a passing run.")
    stdout_contains: str | None = Field(default=None, description="Substring stdout must contain.")
    stderr_contains: str | None = Field(default=None, description="Substring stderr must contain.")
    stdout_matches: str | None = Field(default=None, description="Pattern stdout must match ((?ims) flags).")
    stdout_not_matches: str | None = Field(default=None, description="Pattern stdout must not match.")
    sub_path: OsText | None = Field(default=None, description="Working directory under the workspace root.")
    timeout: Duration = Field(default=30.0, description="Wall-clock limit, e.g. 30s, 2m (or seconds).")
    env: EnvVars = Field(default_factory=dict, description="Extra environment variables.")

    _patterns: dict[str, CompiledPattern] = PrivateAttr(default_factory=dict)

    @property
    def patterns(self) -> dict[str, CompiledPattern]:
        """Prepared state: ``stdout_matches`` / ``stdout_not_matches`` compiled, by field."""
        return self._patterns

    @field_validator("sub_path")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return ProgramConfig._inside(value)  # the program grader's rule: relative, no '..' escape

    @model_validator(mode="after")
    def _compile(self) -> VallyRunCommandConfig:
        for field in ("stdout_matches", "stdout_not_matches"):
            source = getattr(self, field)
            if source is not None:
                self._patterns[field] = vally_pattern(source, field)
        return self


@register
class VallyRunCommand(Grader[VallyRunCommandConfig]):
    type = "vally_run_command"
    description = "Vally's run-command: run a command in the workspace; check its exit code and output."
    traits = Traits(io_bound=True, runs_programs=True, reads_workspace=True)
    taxonomy = Taxonomy(determinism="complex-static", cost="low", portability="t2-domain",
                        reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        root = sample.workspace or cfg.base_dir or os.getcwd()
        if not os.path.isdir(root):
            return self.error_result(ErrorCode.UNAVAILABLE, f"workspace {root} is not a directory")
        cwd, problem = resolve_sub_path(root, cfg.sub_path)
        if problem:
            return self.error_result(ErrorCode.INVALID_CONFIG, problem)
        runner = self.resources.process_runner
        if runner is None:
            return self.error_result(ErrorCode.UNAVAILABLE, NO_PROCESS_RUNNER)
        shell = cfg.args is None
        argv = [cfg.command, *(cfg.args or [])]
        out = runner.run(ProcessCall(argv=argv, cwd=cwd, env=dict(cfg.env), timeout_s=cfg.timeout,
                                     shell=shell, stdout_limit=DEFAULT_STDOUT_LIMIT))
        stdout = out.stdout.decode("utf-8", errors="replace")
        stderr = out.stderr.decode("utf-8", errors="replace")
        details: dict[str, Any] = {"command": argv, "shell": shell, "cwd": cwd, "exit_code": out.returncode,
                                   "stdout": preview(stdout, 2000), "stderr": out.stderr_text(2000)}
        if out.spawn_error:
            return self.error_result(ErrorCode.UNAVAILABLE, f"cannot start {cfg.command!r}: {out.spawn_error} "
                                     f"{out.spawn_message or ''}".strip(), details)
        if out.timed_out:
            return self.error_result(ErrorCode.TIMEOUT, f"command timed out after {format_duration(cfg.timeout)}",
                                     details)
        failures = []
        if out.returncode != cfg.expected_exit_code:
            failures.append(f"exit code {out.returncode}, expected {cfg.expected_exit_code}")
        if cfg.stdout_contains is not None and cfg.stdout_contains not in stdout:
            failures.append(f"stdout does not contain {preview(cfg.stdout_contains, 100)!r}")
        if cfg.stderr_contains is not None and cfg.stderr_contains not in stderr:
            failures.append(f"stderr does not contain {preview(cfg.stderr_contains, 100)!r}")
        for field, want in (("stdout_matches", True), ("stdout_not_matches", False)):
            pat = cfg.patterns.get(field)
            if pat is None:
                continue
            try:
                hit = pat.test(stdout)
            except TimeoutError:
                return self.error_result(ErrorCode.TIMEOUT, f"{field} search timed out", details)
            if hit != want:
                failures.append(f"stdout {'does not match' if want else 'matches'} /{preview(pat.source, 100)}/")
        if failures:
            return self.scored_result(False, reason="; ".join(failures), details=details)
        return self.scored_result(True, reason=f"command exited with {out.returncode}; all checks passed",
                                  details=details)
