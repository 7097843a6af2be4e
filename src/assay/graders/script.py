"""``script``: waza's script grader. Runs a script with the grading context as JSON on stdin;
the script prints ``{score, passed, message, details}`` on stdout.

The script path is relative to ``base_dir`` (the suite directory, set by the suite loaders),
else to the current directory. ``.py`` files run with this Python, ``.js``/``.mjs``/``.cjs``
with ``node``, ``.sh`` with ``sh``; ``interpreter`` overrides the choice.

A script that crashes, times out or prints something other than that object is an ``error``
(``runtime_error``, ``timeout``; ``parse_failure`` when what it printed is not JSON,
``invalid_output`` when it is JSON of the wrong shape), never a silent failure. What it prints is
untrusted: parsed with the nesting capped at ``core.untrusted.MAX_DEPTH`` and normalised (lone
surrogates, NaN, integers past 64 bits), so whatever is kept of it can be written.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import ProcessCall
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep, clean_json
from assay.graders._process import (
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
from assay.graders._waza_context import Edition, script_context

_INTERPRETERS = {".py": sys.executable, ".js": "node", ".mjs": "node", ".cjs": "node", ".sh": "sh"}


class ScriptConfig(GraderConfig):
    script: OsText = Field(min_length=1, description="Path of the script, relative to the suite directory.")
    args: list[OsText] = Field(default_factory=list, description="Extra command-line arguments for the script.")
    timeout: Duration = Field(default=30.0, description=f"Wall-clock limit, e.g. 30s, 2m (or seconds), at most "
                                                     f"{MAX_TIMEOUT_S:g}s; the script and everything it started "
                                                     "are killed at the limit, and when the script exits.")
    interpreter: OsText | None = Field(default=None, description="Program that runs the script; "
                                                                 "chosen by file extension when omitted.")
    env: EnvVars = Field(default_factory=dict, description="Extra environment variables.")
    scrub_env: bool = Field(default=False, description="Pass only PATH, HOME, LANG, TMPDIR and `env`.")
    edition: Edition | None = Field(default=None, description="waza edition whose grading context the script "
                                                              "reads (set by the waza dialect).")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False,
                             description="When the script reports a score but no `passed`, it passes at this score.")

    @field_validator("interpreter")
    @classmethod
    def _interpreter(cls, value: str | None) -> str | None:
        if value == "":
            raise ValueError("must not be empty (omit it to choose by the script's extension)")
        return value


class ScriptReport(BaseModel):
    """What a script prints. ``passed`` or ``score`` must be present."""

    model_config = ConfigDict(extra="allow")

    score: float | None = Field(default=None, ge=0.0, le=1.0)
    passed: bool | None = None
    message: str | None = None
    details: dict[str, Any] | None = None


@register
class Script(Grader[ScriptConfig]):
    type = "script"
    description = "Run a script (waza): context JSON on stdin, {score, passed, message, details} on stdout."
    traits = Traits(io_bound=True, runs_programs=True, reads_workspace=True)
    taxonomy = Taxonomy(determinism="static", cost="low", portability="t3a-scenario",
                        reference="reference-free", temporal_scope="trajectory-level")

    def script_path(self) -> str:
        cfg = self.config
        base = cfg.base_dir or os.getcwd()
        return os.path.normpath(os.path.join(base, cfg.script))

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        path = self.script_path()
        if not os.path.isfile(path):
            return self.error_result(ErrorCode.INVALID_CONFIG, f"script {cfg.script!r} not found (looked for {path})")
        interpreter = cfg.interpreter or _INTERPRETERS.get(os.path.splitext(path)[1].lower())
        argv = ([interpreter] if interpreter else []) + [path, *cfg.args]
        try:
            context = json.dumps(clean_json(script_context(sample, self.config.edition))).encode()
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT,
                                     f"cannot pass the sample to the script: a value is {exc}")
        call = ProcessCall(argv=argv, cwd=os.path.dirname(path), env=dict(cfg.env), scrub_env=cfg.scrub_env,
                           timeout_s=cfg.timeout, stdin=context)
        runner = self.resources.process_runner
        if runner is None:
            return self.error_result(ErrorCode.UNAVAILABLE, NO_PROCESS_RUNNER)
        out = runner.run(call)
        details: dict[str, Any] = {"script": path, "exit_code": out.returncode,
                                   "duration_ms": round(out.duration_ms, 1), "limits": {"timeout_s": cfg.timeout}}
        if out.stderr:
            details["stderr"] = out.stderr_text()
        if out.spawn_error:
            return self.error_result(ErrorCode.UNAVAILABLE, f"could not start {argv[0]!r}: {out.spawn_error} "
                                     f"({out.spawn_message})", details)
        if out.timed_out:
            return self.error_result(ErrorCode.TIMEOUT, f"script timed out after {format_duration(cfg.timeout)}",
                                     details)
        if out.returncode != 0:
            tail = out.stderr_text(300).strip()
            return self.error_result(ErrorCode.RUNTIME_ERROR, f"script exited with code {out.returncode}"
                                     + (f": {tail}" if tail else ""), details)
        if out.stdout_truncated:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"script output is invalid (longer than the "
                                     f"{len(out.stdout)}-byte cap)", details)
        stdout = out.stdout.decode("utf-8", errors="replace").strip()
        try:
            report = ScriptReport.model_validate(load_output(stdout))
        except ValueError as exc:  # TooDeep and ValidationError included
            # Not JSON at all cannot be parsed; JSON too deep or of the wrong shape is invalid.
            code = ErrorCode.INVALID_OUTPUT if isinstance(exc, (ValidationError, TooDeep)) else ErrorCode.PARSE_FAILURE
            reason = ("; ".join(schema_problems(exc)) if isinstance(exc, ValidationError)
                      else str(exc) if isinstance(exc, TooDeep) else f"not JSON: {exc}")
            details["stdout"] = preview(stdout, 2000)
            return self.error_result(code, f"script output is invalid ({reason}); print "
                                     "{\"score\", \"passed\", \"message\", \"details\"} as JSON", details)
        if report.passed is not None:
            passed = report.passed
        elif report.score is not None:
            passed = report.score >= cfg.threshold
        else:
            return self.error_result(ErrorCode.INVALID_OUTPUT, "script output has neither 'passed' nor 'score'",
                                     details)
        score = report.score if report.score is not None else (1.0 if passed else 0.0)
        if report.details:
            details["script_details"] = report.details
        return self.scored_result(passed, score, report.message, details)
