"""``prompt``: an LLM judge follows a grading prompt, in waza's form or Vally's.

One type, two ways of scoring, chosen by ``scoring``:

- **Vally** (``binary``, ``scale_1_5`` (default), ``scale_1_10``; ``1-5``/``1-10`` also
  accepted): the judge answers ``{"reasoning", "score"}`` on the scale; ``threshold`` defaults
  to 0.5 on the normalised score. ``prompt`` is optional (a general default rubric; the Vally
  loader puts a stimulus's ``rubric`` list here).
- **logprobs**: a yes/no question scored by the probabilities of the reply's first token
  (``_judge_decision``), threshold 0.5 on P(pass): for small and local judges.
- **waza** (``checks``): waza's judge calls ``set_waza_grade_pass`` / ``set_waza_grade_fail``
  once per check. assay asks for the same verdicts as structured output,
  ``{"reasoning", "checks": [{"verdict": "pass"|"fail", "description", "reason"}]}`` (entries
  naming the tools, ``{"name": "set_waza_grade_pass", ...}``, are read too). Score is
  passes / (passes + fails); ``threshold`` defaults to 1.0, which is waza's rule (passed only
  with at least one pass and no fail). ``prompt`` is required. The waza loader sets
  ``scoring: checks`` on waza ``prompt`` graders. One deviation from waza, on purpose: a
  reply with no verdict at all is a ``parse_failure`` error, not a 0-score failure.

``continue_session`` (waza) is accepted: assay grades recorded runs, so instead of resuming
the agent's session the judge is shown the sample's transcript. waza's ``mode: pairwise`` is
mapped by the waza loader onto the ``pairwise`` grader.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._judge_decision import TOP_LOGPROBS, decided_result, decision_prompt
from assay.graders._judge_reply import Problem, ScaleName, call_details, problem_details, read_object, reasoning_of
from assay.graders._judge_score import FIELD_TITLES, score_prompt, score_schema, scored_result
from assay.graders._judging import JudgeConfig, JudgeGrader, Plan, Prompt

DEFAULT_PROMPT = (
    "Judge whether the output accomplishes the task well: it is correct, complete, follows the task's "
    "instructions and constraints, and is clear."
)
_PASS, _FAIL = "set_waza_grade_pass", "set_waza_grade_fail"
_CHECKS_SCHEMA = {
    "type": "object", "required": ["reasoning", "checks"], "additionalProperties": False,
    "properties": {
        "reasoning": {"type": "string"},
        "checks": {"type": "array", "items": {
            "type": "object", "required": ["verdict", "description", "reason"], "additionalProperties": False,
            "properties": {"verdict": {"type": "string", "enum": ["pass", "fail"]},
                           "description": {"type": "string"}, "reason": {"type": "string"}}}},
    },
}


class PromptConfig(JudgeConfig):
    prompt: str | None = Field(default=None, min_length=1, description="The grading instructions (required with "
                                                                       "scoring: checks).")
    scoring: Literal["checks", "logprobs"] | ScaleName = Field(
        default="1-5", description="checks (waza's pass/fail verdicts), a scale (binary, scale_1_5, scale_1_10), "
                                   "or logprobs (a yes/no decision scored by the first token's probabilities).")
    threshold: float | None = Field(default=None, ge=0.0, le=1.0,
                                    description="Minimum normalised score (logprobs: P(pass)) to pass; default "
                                                "1.0 for checks, else 0.5.")
    continue_session: bool = Field(default=False, description="waza: judge in the agent's session; assay shows "
                                                              "the judge the sample's transcript instead.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.scoring == "0-1":
            raise ValueError("scoring must be checks, binary, scale_1_5 or scale_1_10")
        if self.scoring == "checks" and self.prompt is None:
            raise ValueError("scoring: checks needs a prompt telling the judge when to pass and fail")
        return self

    @property
    def pass_threshold(self) -> float:
        """The threshold in force: as configured, else 1.0 for checks and 0.5 for a scale."""
        return self.threshold if self.threshold is not None else 1.0 if self.scoring == "checks" else 0.5


@register
class PromptGrader(JudgeGrader[PromptConfig]):
    type = "prompt"
    description = "An LLM judge follows a grading prompt: waza's pass/fail checks or Vally's scales (threshold 0.5)."

    def plan(self, sample: Sample) -> GraderResult | Plan:
        cfg = self.config
        fields: dict[str, Any] = {"input": sample.input, "output": sample.output}
        if cfg.continue_session and sample.transcript:
            fields["transcript"] = [e.model_dump(mode="json", exclude_none=True) for e in sample.transcript]
        texts = self.texts(sample, **fields)
        if isinstance(texts, GraderResult):
            return texts
        if sample.input is None:
            texts.pop("input")
        injection, stop = self.guard({k: v for k, v in texts.items() if k not in ("input", "transcript")})
        if stop is not None:
            return stop
        if cfg.scoring == "logprobs":
            ask = self.request(decision_prompt(cfg.prompt or DEFAULT_PROMPT, texts, FIELD_TITLES,
                                               heading="Instructions"), None, top_logprobs=TOP_LOGPROBS)
            return Plan([ask], lambda r: decided_result(self, r[0], cfg.pass_threshold, injection))
        if cfg.scoring != "checks":
            prompt = score_prompt(cfg.prompt or DEFAULT_PROMPT, cfg.scoring, texts, heading="Instructions")
            req = self.request(prompt, score_schema(cfg.scoring))
            return Plan([req], lambda r: scored_result(self, r[0], cfg.scoring, cfg.pass_threshold, injection))
        prompt = Prompt().say(f"## Grading instructions\n{cfg.prompt}")
        for name, text in texts.items():
            prompt.say(f"## {FIELD_TITLES.get(name, name)}").data(name, text)
        prompt.say('Record your verdicts as JSON: {"reasoning": "...", "checks": [{"verdict": "pass" or "fail", '
                   '"description": "...", "reason": "..."}]}. Each entry with verdict "pass" stands for a call to '
                   f'{_PASS}, each "fail" for a call to {_FAIL}; add one entry wherever the instructions say to '
                   "call one of them.")
        return Plan([self.request(prompt, _CHECKS_SCHEMA)], lambda r: self._finish_checks(r[0], injection))

    def _finish_checks(self, reply: Any, injection: dict[str, Any] | None) -> GraderResult:
        extra = {"injection": injection} if injection else {}
        obj = read_object(reply)
        verdicts = obj if isinstance(obj, Problem) else _verdicts(obj)
        if isinstance(verdicts, Problem):
            return self.error_result(verdicts.code, verdicts.reason, {**problem_details(reply, verdicts), **extra})
        passes = [v for v in verdicts if v["verdict"] == "pass"]
        fails = [v for v in verdicts if v["verdict"] == "fail"]
        score = len(passes) / len(verdicts)
        threshold = self.config.pass_threshold
        passed = score >= threshold
        reason = "; ".join(f"fail: {v['description']}: {v['reason']}" for v in fails) or \
            (reasoning_of(obj) if isinstance(obj, dict) else None) or "all checks passed"
        details = {**call_details(reply), **extra, "passes": len(passes), "failures": len(fails),
                   "checks": verdicts[:50], "threshold": threshold}
        return self.scored_result(passed, score, reason=reason, details=details)


def _verdicts(obj: dict[str, Any]) -> list[dict[str, str]] | Problem:
    """The pass/fail verdicts in a reply object, in order, or why there are none."""
    raw = obj.get("checks", obj.get("calls"))
    if raw is None and ("verdict" in obj or "name" in obj):
        raw = [obj]  # a single tool call's arguments
    if not isinstance(raw, list):
        return Problem(ErrorCode.PARSE_FAILURE, "the judge's reply has no checks list")
    out: list[dict[str, str]] = []
    for entry in raw:
        if not isinstance(entry, dict):
            return Problem(ErrorCode.PARSE_FAILURE, "a check in the judge's reply is not an object")
        arguments = entry.get("arguments")
        args = arguments if isinstance(arguments, dict) else entry
        verdict = {_PASS: "pass", _FAIL: "fail"}.get(str(entry.get("name")), entry.get("verdict"))
        if verdict not in ("pass", "fail"):
            return Problem(ErrorCode.PARSE_FAILURE, f"a check's verdict is {str(verdict)[:40]!r}, not pass or fail")
        out.append({"verdict": verdict, "description": str(args.get("description") or ""),
                    "reason": str(args.get("reason") or "")})
    if not out:
        return Problem(ErrorCode.PARSE_FAILURE, "the judge recorded no pass or fail verdict")
    return out
