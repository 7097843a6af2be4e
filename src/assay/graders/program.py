"""``program``: Vally's program grader. Runs any program with ``EVALUATE_WORKSPACE`` (the
workspace root) and ``EVALUATE_GRADER_INPUT`` (a temporary JSON file holding the grader
input) set; the program answers by exit code (nothing on stdout) or by printing a
GraderResult JSON object ``{name, passed, score, evidence, kind, metadata?}`` on stdout.

As in Vally, output that is not such an object is a failed grade (score 0) whose reason says
what was wrong, not an error. What the program prints is untrusted: it is parsed with the
nesting capped at ``core.untrusted.MAX_DEPTH`` and normalised (lone surrogates, NaN, integers
past 64 bits), so whatever is kept of it can be written.

The workspace root is the sample's ``workspace``, else the config's ``workspace``, else the
suite directory (``base_dir``), else the current directory. Relative program and argument
paths that name a file in ``base_dir`` (and not in the working directory) are passed as
absolute paths, so a grader script shipped with a suite is found from any workspace.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import DEFAULT_STDOUT_LIMIT, ProcessCall, ProcessOutcome
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.transcript import to_vally_events
from assay.core.untrusted import TooDeep, clean_json
from assay.graders._process import (
    MAX_ARG_BYTES,
    MAX_TIMEOUT_S,
    NO_PROCESS_RUNNER,
    Duration,
    EnvVars,
    OsText,
    format_duration,
    load_output,
    schema_problems,
)
from assay.graders._text import preview

RESERVED_ENV = ("EVALUATE_WORKSPACE", "EVALUATE_GRADER_INPUT")


class ProgramConfig(GraderConfig):
    program: OsText = Field(min_length=1, description="The program to run (e.g. python3, node, bash).")
    args: list[OsText] = Field(default_factory=list, description="Command-line arguments passed to the program.")
    shell: bool = Field(default=False, description="Run through /bin/sh: program and args are joined by spaces.")
    sub_path: OsText | None = Field(default=None, description="Working directory, relative to the workspace root; "
                                                               "must stay inside it (no '..' or symlink escapes).")
    timeout: Duration = Field(default=60.0, description=f"Wall-clock limit, e.g. 60s, 2m, 500ms (or seconds), at most "
                                                     f"{MAX_TIMEOUT_S:g}s; the program and everything it started "
                                                     "are killed at the limit, and when the program exits.")
    env: EnvVars = Field(default_factory=dict, description="Extra environment variables, merged over the "
                                                                     "environment; EVALUATE_* names are reserved.")
    scrub_env: bool = Field(default=False, description="Pass only PATH, HOME, LANG, TMPDIR and `env` "
                                                       "instead of the whole environment.")
    workspace: OsText | None = Field(default=None, description="Workspace root for samples that carry none.")
    max_output_bytes: int = Field(default=DEFAULT_STDOUT_LIMIT, ge=1024, le=64 << 20,
                                  description="Cap on captured stdout; stderr keeps its last 64 KiB.")

    @field_validator("env")
    @classmethod
    def _no_reserved(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if key.upper() in RESERVED_ENV:
                raise ValueError(f"{key!r} is set by the grader and cannot be given in env")
        return value

    @field_validator("sub_path")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if "\0" in value or os.path.isabs(value):
            raise ValueError(f"sub_path {value!r} must be a relative path inside the workspace")
        norm = os.path.normpath(value)
        if norm == ".." or norm.startswith(".." + os.sep):
            raise ValueError(f"sub_path {value!r} escapes the workspace root")
        return value

    @model_validator(mode="after")
    def _shell_command_fits(self) -> ProgramConfig:
        if self.shell and len(" ".join((self.program, *self.args)).encode("utf-8")) > MAX_ARG_BYTES:
            raise ValueError(f"the shell command (program and args joined) is longer than {MAX_ARG_BYTES} bytes")
        return self

    @model_validator(mode="after")
    def _static_workspace(self) -> ProgramConfig:
        # With a fixed workspace the symlink check can run now; otherwise it runs per sample.
        if self.workspace and self.sub_path and os.path.isdir(self.workspace):
            problem = resolve_sub_path(self.workspace, self.sub_path)[1]
            if problem and "escapes" in problem:
                raise ValueError(problem)
        return self


def resolve_sub_path(root: str, sub_path: str | None) -> tuple[str, str | None]:
    """The working directory for ``sub_path`` under ``root``, or a problem (escape, missing)."""
    root_real = os.path.realpath(root)
    if not sub_path:
        return root_real, None
    target = os.path.realpath(os.path.join(root_real, sub_path))
    if os.path.commonpath([root_real, target]) != root_real:
        return target, (f"sub_path {sub_path!r} escapes the workspace root {root_real} "
                        f"(it resolves to {target})")
    if not os.path.isdir(target):
        return target, f"sub_path {sub_path!r} is not a directory under the workspace root {root_real}"
    return target, None


class ProgramReport(BaseModel):
    """The GraderResult a program may print on stdout (Vally's schema, checked strictly)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    evidence: str
    kind: Literal["code", "llm", "human"]
    metadata: dict[str, Any] | None = None


@register
class Program(Grader[ProgramConfig]):
    type = "program"
    description = ("Run a program (Vally semantics): exit code, or a GraderResult JSON on stdout; "
                   "EVALUATE_WORKSPACE and EVALUATE_GRADER_INPUT are set.")
    traits = Traits(io_bound=True, runs_programs=True, reads_workspace=True)
    taxonomy = Taxonomy(determinism="static", cost="low", portability="t3a-scenario",
                        reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        root = sample.workspace or cfg.workspace or cfg.base_dir or os.getcwd()
        if cfg.base_dir and not os.path.isabs(root):
            root = os.path.join(cfg.base_dir, root)
        if not os.path.isdir(root):
            return self.error_result(ErrorCode.UNAVAILABLE, f"workspace {root} is not a directory",
                                     {"workspace": root})
        root = os.path.realpath(root)
        cwd, problem = resolve_sub_path(root, cfg.sub_path)
        if problem:
            return self.error_result(ErrorCode.INVALID_CONFIG, problem, {"workspace": root, "sub_path": cfg.sub_path})
        runner = self.resources.process_runner
        if runner is None:
            return self.error_result(ErrorCode.UNAVAILABLE, NO_PROCESS_RUNNER)
        argv = [_locate(a, cwd, cfg.base_dir) for a in (cfg.program, *cfg.args)]
        try:
            document = clean_json(grader_input(sample, cfg, root))
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT,
                                     f"cannot pass the sample to the program: a value is {exc}")
        fd, input_path = tempfile.mkstemp(prefix="assay-grader-input-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(document, fh, ensure_ascii=False)
            env = {**cfg.env, "EVALUATE_WORKSPACE": root, "EVALUATE_GRADER_INPUT": input_path}
            outcome = runner.run(ProcessCall(
                argv=argv, cwd=cwd, env=env, scrub_env=cfg.scrub_env, timeout_s=cfg.timeout, shell=cfg.shell,
                stdout_limit=cfg.max_output_bytes))
        finally:
            try:
                os.unlink(input_path)
            except FileNotFoundError:
                pass
        return self._interpret(outcome, argv, cwd, root)

    def _interpret(self, out: ProcessOutcome, argv: list[str], cwd: str, root: str) -> GraderResult:
        cfg = self.config
        details: dict[str, Any] = {
            "command": argv, "shell": cfg.shell, "cwd": cwd, "workspace": root,
            "exit_code": out.returncode, "duration_ms": round(out.duration_ms, 1),
            "limits": {"timeout_s": cfg.timeout, "max_output_bytes": cfg.max_output_bytes},
            "env_scrubbed": cfg.scrub_env,
        }
        if out.stderr:
            details["stderr"] = out.stderr_text()
            details["stderr_truncated"] = out.stderr_truncated
        if out.spawn_error:
            return self.error_result(ErrorCode.UNAVAILABLE, f"Failed to start grader program: {out.spawn_error} "
                                     f"(spawn): {out.spawn_message}", details)
        if out.timed_out:
            return self.error_result(ErrorCode.TIMEOUT, f"Grader timed out after {format_duration(cfg.timeout)}",
                                     details)
        if out.stdout_truncated:
            return self.scored_result(False, 0.0, "Grader returned unparseable JSON output on stdout: output exceeded "
                                      f"the {cfg.max_output_bytes}-byte cap", details)
        stdout = out.stdout.decode("utf-8", errors="replace").strip()
        if not stdout:
            code = out.returncode
            if code == 0:
                return self.scored_result(True, 1.0, "Grader exited successfully", details)
            if code is not None and code < 0:
                return self.scored_result(False, 0.0, f"Grader was killed by signal {_signal_name(-code)}", details)
            return self.scored_result(False, 0.0, f"Grader exited with exit code {code}", details)
        details["stdout"] = preview(stdout, 2000)
        try:
            doc = load_output(stdout)
        except TooDeep as exc:
            return self.scored_result(False, 0.0, f"Grader returned unparseable JSON output on stdout: {exc}", details)
        except ValueError as exc:
            return self.scored_result(False, 0.0, f"Grader returned unparseable JSON output on stdout: "
                                      f"{type(exc).__name__}: {exc}", details)
        try:
            report = ProgramReport.model_validate(doc)
        except ValidationError as exc:
            problems = schema_problems(exc)
            details["schema_errors"] = problems
            return self.scored_result(False, 0.0, "Grader output did not match schema: " + "; ".join(problems), details)
        details.pop("stdout")
        details.update({"reported_name": report.name, "reported_kind": report.kind})
        if report.metadata is not None:
            details["metadata"] = report.metadata
        return self.scored_result(report.passed, report.score, report.evidence, details)


def grader_input(sample: Sample, config: GraderConfig, workspace: str) -> dict[str, Any]:
    """The document behind ``EVALUATE_GRADER_INPUT``: Vally's GraderInput (``trajectory``,
    ``stimulus``, ``config``) plus assay's sample fields at the top level."""
    transcript = [e.model_dump(exclude_none=True) for e in sample.transcript]
    stimulus = {"name": sample.id, "prompt": sample.input if isinstance(sample.input, str) else None,
                "input": sample.input}
    return {
        "trajectory": {"id": sample.id, "stimulus": stimulus, "events": to_vally_events(sample.transcript),
                       "output": sample.output, "workDir": workspace, "metadata": sample.metadata},
        "stimulus": stimulus,
        "config": config.model_dump(mode="json"),
        "id": sample.id, "input": sample.input, "output": sample.output, "expected": sample.expected,
        "metadata": sample.metadata, "transcript": transcript,
        "tool_calls": [e for e in transcript if e["type"] == "tool_call"],
        "errors": [e for e in transcript if e["type"] == "error"],
        "outcome": sample.outcome, "duration_ms": sample.duration_ms, "workspace": workspace,
    }


def _locate(arg: str, cwd: str, base_dir: str | None) -> str:
    if not base_dir or not arg or os.path.isabs(arg) or arg.startswith("-"):
        return arg
    if os.path.exists(os.path.join(cwd, arg)):
        return arg
    candidate = Path(base_dir, arg)
    return str(candidate.resolve()) if candidate.is_file() else arg


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)
