"""``code``: user code run in the OS sandbox.

Two shapes share the type, as the product spec and waza use the same key:
- ``{language: python | nodejs, code, timeout?}``: the code defines
  ``evaluate(input, output, expected, metadata)`` (sync or async) returning
  ``{passed, score?, reason?, details?}``.
- ``{assertions: [...]}`` (waza): Python expressions over the run's context; score is the
  share that hold. They are evaluated inside the sandbox, so generator expressions work and
  nothing escapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import orjson
from pydantic import Field, ValidationInfo, field_validator, model_validator

from assay.core.context import DEFAULT_CODE_TIMEOUT_MAX_MS, spec_context
from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import CodeBatch, CodeOutcome, call_batch
from assay.core.messages import Phrase, Said, code_and_args, rebuilt
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.source import check_python_source
from assay.core.untrusted import MAX_DEPTH, TooDeep, clean_json, clean_text
from assay.graders._waza_context import assertion_context

TIMEOUT_CAP = Phrase("code.timeout_cap", "Input should be less than or equal to {cap} (ms; this deployment's "
                                        "ASSAY_CODE_TIMEOUT_MAX_MS)")
ONE_SHAPE = Phrase("code.one_shape", "give either `code` (with `language`) or `assertions`, not both or neither")
SOURCE = Phrase("code.source", "code: {problem}")
SYNTAX_AT = Phrase("code.syntax_at", "code: syntax error at line {line}, column {column}: {message}")
"""A syntax error in the code, where it is: the pages say 代码第 5 行第 43 列：语法错误（缺少 ':'）."""
NO_SANDBOX = Phrase("code.no_sandbox", "no code sandbox is configured")
RETURNED = Phrase("code.returned", "evaluate() returned {problem}")
NOT_OBJECT = Phrase("code.not_object", "{type}, expected an object {passed, score?, reason?, details?}")
UNKNOWN_FIELDS = Phrase("code.unknown_fields", "unknown field(s) {fields}; allowed: passed, score, reason, details")
PASSED_TYPE = Phrase("code.passed_type", "`passed` as {type}, expected a boolean")
SCORE_VALUE = Phrase("code.score_value", "`score` {score}, expected a finite number in [0, 1]")
SCORE_RANGE = Phrase("code.score_range", "`score` {score}, outside [0, 1]")
REASON_TYPE = Phrase("code.reason_type", "`reason` as {type}, expected a string")
DETAILS_TYPE = Phrase("code.details_type", "`details` as {type}, expected an object")
DETAILS_DEEP = Phrase("code.details_deep", "`details` nested more than {depth} levels deep")
DETAILS_LARGE = Phrase("code.details_large", "`details` larger than {kb} KB")


DEFAULT_TIMEOUT_MS = 5000
MAX_DETAILS_BYTES = 64 * 1024

ASSERTIONS_SOURCE = '''
import re

_SAFE = ("len", "any", "all", "str", "int", "float", "bool", "list", "dict", "set", "tuple",
         "min", "max", "sum", "sorted", "abs", "round", "isinstance", "enumerate", "zip",
         "range", "map", "filter", "reversed", "True", "False", "None")


_WAZA = ("len", "any", "all", "str", "int", "float", "bool", "list", "dict")


def check(context, assertions, as_waza=False):
    source = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)
    if as_waza:
        # waza's own evaluation: no builtins, the context and a few names as locals
        names = dict(context, re=re, **{k: source[k] for k in _WAZA})
        names.update({"True": True, "False": False})
        run = lambda text: eval(text, {"__builtins__": {}}, names)  # noqa: E731
    else:
        env = {"__builtins__": {k: source[k] for k in _SAFE if k in source}, "re": re}
        env.update(context)
        run = lambda text: eval(text, dict(env))  # noqa: E731
    rows = []
    for text in assertions:
        try:
            rows.append({"assertion": text, "passed": bool(run(text))})
        except Exception as exc:
            message = str(exc) if as_waza else type(exc).__name__ + ": " + str(exc)
            rows.append({"assertion": text, "passed": False, "error": message})
    return rows
'''

ASSERTIONS_JS = '''
// waza's JavaScript assertions (Go edition, data/eval_wrapper.js): each is evaluated as a
// script against the context's names; a truthy value holds, a thrown error fails it. The
// sandbox runs strict code in a compartment of the evaluation's own, without `with` or a
// direct call of the evaluator, so the names become that compartment's globals and each
// assertion is a script of its own, run by the compartment's global evaluator: its completion
// value is the assertion's value, and its let and const stay its own. (SES refuses a source
// in which the evaluator's name is followed by a parenthesis, comments included.)
module.exports = {
  check: function (context, assertions) {
    const names = Object.assign({ True: true, False: false }, context);
    for (const key of Object.keys(names)) globalThis[key] = names[key];
    const script = globalThis.eval;
    return assertions.map(function (text) {
      try {
        return { assertion: text, passed: !!script(text) };
      } catch (e) {
        return { assertion: text, passed: false, error: String(e) };
      }
    });
  },
};
'''


class CodeConfig(GraderConfig):
    language: Literal["python", "nodejs"] = Field(default="python", description="Language of `code`.")
    code: str | None = Field(default=None, description="Source defining evaluate(input, output, expected, metadata).")
    timeout: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, strict=True,
                         description=f"Time limit in ms (default {DEFAULT_TIMEOUT_MS}; at most "
                                     f"ASSAY_CODE_TIMEOUT_MAX_MS, {DEFAULT_CODE_TIMEOUT_MAX_MS} unless set).")
    assertions: list[str] | None = Field(
        default=None, description="waza: expressions that must hold (Python; JavaScript with `language: nodejs`).")
    edition: Literal["python", "go"] | None = Field(
        default=None, description="waza edition whose assertion context and rules apply (set by the waza dialect); "
                                  "unset: assay's context, which has both editions' keys.")

    @field_validator("assertions")
    @classmethod
    def _assertions_compile(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if info.data.get("language") == "nodejs":
            return value  # JavaScript: a syntax error fails its assertion at run time, as in waza
        for i, text in enumerate(value or []):
            try:
                compile(text, f"<assertion {i}>", "eval")
            except SyntaxError as exc:
                raise ValueError(f"assertions[{i}] is not a valid Python expression: {exc.msg} "
                                 f"(column {exc.offset})") from None
        return value

    @field_validator("timeout")
    @classmethod
    def _within_cap(cls, value: int, info: ValidationInfo) -> int:
        cap = spec_context(info.context).code_timeout_max_ms
        if value > cap:
            raise ValueError(TIMEOUT_CAP(cap=cap))
        return value

    @model_validator(mode="after")
    def _one_shape(self, info: ValidationInfo) -> CodeConfig:
        context = spec_context(info.context)
        if self.timeout > context.code_timeout_max_ms:  # only the default can be: lower it to the cap
            self.__dict__["timeout"] = context.code_timeout_max_ms
        if (self.code is None) == (self.assertions is None):
            raise ValueError(ONE_SHAPE())
        if self.code is not None:
            if self.language == "python":
                problem = check_python_source(self.code)
            elif context.check_code is not None:
                problem = context.check_code(self.language, self.code, "evaluate")
            else:
                problem = None
            if problem:
                raise ValueError(_code_problem(problem))
        return self


@register
class Code(Grader[CodeConfig]):
    type = "code"
    description = "User code (Python or Node.js) or waza assertions, run in the OS sandbox."
    traits = Traits(io_bound=True, batches_io=True, api_safe=True, form=True)
    taxonomy = Taxonomy(cost="low", reference="reference-free")


    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        """One sandbox batch for all ``samples`` (chunks of it share a process or an isolate call,
        each sample under the configured limits), then each outcome checked as ``grade`` does."""
        runner = self.resources.code_runner
        if runner is None:
            return [self.error_result(ErrorCode.UNAVAILABLE, NO_SANDBOX()) for _ in samples]
        cfg = self.config
        if cfg.assertions == []:
            return [self.scored_result(True, 1.0, "No assertions configured") for _ in samples]  # as waza
        if cfg.assertions is not None:
            batch = CodeBatch(cfg.language, ASSERTIONS_JS if cfg.language == "nodejs" else ASSERTIONS_SOURCE,
                              [[assertion_context(s, cfg.edition), cfg.assertions, cfg.edition is not None]
                               for s in samples], function="check", timeout_ms=cfg.timeout)
        else:
            batch = CodeBatch(cfg.language, cfg.code or "", [[s.input, s.output, s.expected, s.metadata]
                                                              for s in samples], timeout_ms=cfg.timeout)
        results = []
        for outcome in call_batch(runner, batch):
            result = self._checked(outcome)
            result.__dict__["latency_ms"] = outcome.duration_ms  # the sample's own time in the sandbox
            results.append(result)
        return results

    def _checked(self, outcome: CodeOutcome) -> GraderResult:
        if not outcome.ok:
            details = _sandbox_details(outcome)
            if outcome.traceback:
                details["traceback"] = outcome.traceback
            return self.error_result(outcome.error or ErrorCode.RUNTIME_ERROR, outcome.message or "evaluation failed",
                                     details)
        if self.config.assertions is not None:
            return self._assertions(outcome)
        return self._evaluated(outcome)

    def _assertions(self, outcome: CodeOutcome) -> GraderResult:
        rows = outcome.value
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            return self.error_result(ErrorCode.INVALID_OUTPUT, "assertion runner returned no results")
        held = sum(1 for r in rows if r.get("passed"))
        failed = [r["assertion"] for r in rows if not r.get("passed")]
        if self.config.edition is not None:  # waza's feedback text
            reason = "; ".join(f"Failed: {r['assertion']}" + (f": {r['error']}" if r.get("error") else "")
                               for r in rows if not r.get("passed")) or "All assertions passed"
        else:
            reason = f"{held}/{len(rows)} assertions passed"
            if failed:
                reason += "; failed: " + "; ".join(failed[:3])
        return self.scored_result(not failed, held / len(rows), reason,
                                  {"assertions": rows, **_sandbox_details(outcome)})

    def _evaluated(self, outcome: CodeOutcome) -> GraderResult:
        value = outcome.value
        problem = _check_returned(value)
        details: dict[str, Any] = {}
        if problem is None:
            written = _writable_details(value.get("details") or {})
            if isinstance(written, Said):
                problem = written
            else:
                details = written
        if problem:
            return self.error_result(ErrorCode.INVALID_OUTPUT, RETURNED(problem=problem),
                                     _sandbox_details(outcome))
        score = value.get("score")
        passed = value["passed"]
        reason = value.get("reason")
        # The sandboxes hand back clean values; a runner that does not must not break a writer.
        return self.scored_result(passed, float(score) + 0.0 if score is not None else (1.0 if passed else 0.0),
                                  None if reason is None else clean_text(reason),
                                  {**details, **_sandbox_details(outcome)})


def _sandbox_details(outcome: CodeOutcome) -> dict[str, Any]:
    """The limits in force, and what the code printed if anything."""
    details: dict[str, Any] = {"limits": outcome.limits}
    if outcome.output:
        details["output"] = outcome.output
    return details


def _check_returned(value: Any) -> Said | None:
    """Why a returned value is not ``{passed, score?, reason?, details?}``, or None."""
    if not isinstance(value, dict):
        return NOT_OBJECT(type=type(value).__name__)
    unknown = sorted(set(value) - {"passed", "score", "reason", "details"})
    if unknown:
        return UNKNOWN_FIELDS(fields=", ".join(unknown))
    if not isinstance(value.get("passed"), bool):
        return PASSED_TYPE(type=type(value.get("passed")).__name__)
    score = value.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return SCORE_VALUE(score=repr(score))
        if not 0.0 <= score <= 1.0:
            return SCORE_RANGE(score=str(score))
    reason = value.get("reason")
    if reason is not None and not isinstance(reason, str):
        return REASON_TYPE(type=type(reason).__name__)
    details = value.get("details")
    if details is not None and not isinstance(details, dict):
        return DETAILS_TYPE(type=type(details).__name__)
    return None


def _writable_details(details: dict[str, Any]) -> dict[str, Any] | Said:
    """``details`` as every writer accepts them (normally as they are), or why they cannot be."""
    try:
        size = len(orjson.dumps(details))
    except orjson.JSONEncodeError:  # not normalised by the runner: do it here, once
        try:
            details = clean_json(details)
        except TooDeep:
            return DETAILS_DEEP(depth=MAX_DEPTH)
        size = len(orjson.dumps(details))
    if size > MAX_DETAILS_BYTES:
        return DETAILS_LARGE(kb=MAX_DETAILS_BYTES // 1024)
    return details


def _code_problem(problem: str) -> str:
    """A problem of the code as said in a config error: a syntax error (Python's or the Node.js
    sandbox's) says its line and column first, anything else follows ``code:``."""
    code, args = code_and_args(problem)
    if code in ("source.syntax_at", "sandbox.syntax_at") and args is not None:
        message = args["message"]
        inner = rebuilt(message["code"], message["args"]) if isinstance(message, dict) else message
        return SYNTAX_AT(line=args["line"], column=args["column"], message=inner or str(message))
    return SOURCE(problem=problem)
