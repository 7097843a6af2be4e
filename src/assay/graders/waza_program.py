"""``waza_program``: waza's ``program`` grader (Go edition: ``internal/graders/program_grader.go``,
``docs/graders/program.md``). Not Vally's ``program`` grader: the waza dialect maps its
``program`` here.

Runs ``command`` with ``args`` (no shell), the agent's final output on stdin and
``WAZA_WORKSPACE_DIR`` set to the run's workspace (empty when the run has none). Exit code 0
passes (score 1.0, the trimmed stdout as the reason); anything else fails (score 0.0, with the
exit status and stderr), a timeout included, as in waza. ``timeout`` is whole seconds
(default 30; zero or less means the default). The program runs in the suite's folder, where
waza's examples keep ``graders/``. A command that cannot be started is an ``unavailable``
error rather than a failure: the grader, not the output, is at fault.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, field_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import DEFAULT_STDOUT_LIMIT, ProcessCall
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._process import MAX_TIMEOUT_S, NO_PROCESS_RUNNER, OsText
from assay.graders._text import as_text, preview

DEFAULT_TIMEOUT_S = 30


class WazaProgramConfig(GraderConfig):
    command: OsText = Field(min_length=1, description="The program to run (looked up on PATH).")
    args: list[OsText] = Field(default_factory=list, description="Its arguments.")
    timeout: int = Field(default=DEFAULT_TIMEOUT_S, le=int(MAX_TIMEOUT_S),
                         description=f"Seconds (default {DEFAULT_TIMEOUT_S}; 0 or less: the default).")

    @field_validator("timeout")
    @classmethod
    def _default_when_unset(cls, value: int) -> int:
        return value if value > 0 else DEFAULT_TIMEOUT_S


@register
class WazaProgram(Grader[WazaProgramConfig]):
    type = "waza_program"
    description = "waza's program: run a command with the output on stdin; exit code 0 passes."
    traits = Traits(io_bound=True, runs_programs=True, reads_workspace=True)
    taxonomy = Taxonomy(determinism="complex-static", cost="low", portability="t2-domain",
                        reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        runner = self.resources.process_runner
        if runner is None:
            return self.error_result(ErrorCode.UNAVAILABLE, NO_PROCESS_RUNNER)
        workspace = sample.workspace or ""
        try:
            stdin = as_text(sample.output).encode("utf-8", errors="replace")
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"cannot pass the output on stdin: a value is {exc}")
        out = runner.run(ProcessCall(
            argv=[cfg.command, *cfg.args], cwd=cfg.base_dir or os.getcwd(),
            env={"WAZA_WORKSPACE_DIR": workspace}, timeout_s=float(cfg.timeout),
            stdin=stdin, stdout_limit=DEFAULT_STDOUT_LIMIT))
        stdout = out.stdout.decode("utf-8", errors="replace").strip()
        stderr = out.stderr_text(4000).strip()
        details: dict[str, Any] = {"command": cfg.command, "args": cfg.args, "stdout": preview(stdout, 2000),
                                   "stderr": stderr, "workspace_dir": workspace}
        if out.spawn_error:
            return self.error_result(ErrorCode.UNAVAILABLE, f"cannot start {cfg.command!r}: {out.spawn_error} "
                                     f"{out.spawn_message or ''}".strip(), details)
        if out.timed_out:
            details["timed_out"] = True
            return self.scored_result(False, 0.0, f"Program exited with error: timed out after {cfg.timeout}s",
                                      details)
        if out.returncode != 0:
            status = (f"signal {-out.returncode}" if out.returncode is not None and out.returncode < 0
                      else f"exit status {out.returncode}")
            details["exit_error"] = status
            reason = f"Program exited with error: {status}" + (f"; stderr: {stderr}" if stderr else "")
            return self.scored_result(False, 0.0, reason, details)
        return self.scored_result(True, 1.0, stdout or "Program exited successfully", details)
