"""``pairwise``: an LLM judge compares the sample's output with a baseline, twice, with the
positions swapped (Vally's ``pairwise``, waza's ``prompt`` with ``mode: pairwise``).

The **baseline** is ``sample.metadata[baseline_field]`` when ``baseline_field`` is set (a
results file's extra keys, such as a baseline run's output, land in metadata), else the
sample's ``expected``; with neither the result is an ``invalid_config`` error.

Call 1 shows the output as A and the baseline as B; call 2 the baseline as A and the output as
B. The judge answers ``{"reasoning", "winner": "A"|"B"|"tie"}`` each time, mapped back to
``output``/``baseline``/``tie``. The two orders give ``details.outcome``:

- ``agreement``: the same winner both times. Score 1.0 when the output wins, 0.0 when the
  baseline does;
- ``tie``: a tie both times. Score 0.5;
- ``flip``: the verdict moved with the order (a different winner, or a winner one way and a
  tie the other): position bias, not a win. Score 0.5, ``details.position_bias`` true.

Pass rule: ``score >= threshold`` (default 0.5, Vally's "tie or better"), and a flip passes only
with ``flip_passes: true`` (default false; waza, which turns a flip into a passing tie, gets
true from its loader). Either call failing to give a verdict makes the result an error.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._judge_reply import Problem, merged_details, read_object, reasoning_of
from assay.graders._judging import JudgeConfig, JudgeGrader, Plan, Prompt

DEFAULT_PAIRWISE_PROMPT = (
    "Which response accomplishes the task better: more correct, more complete, better at following the task's "
    "instructions, and clearer? Length alone is not a merit. Answer tie when neither is better."
)
_SCHEMA = {"type": "object", "required": ["reasoning", "winner"], "additionalProperties": False,
           "properties": {"reasoning": {"type": "string"}, "winner": {"type": "string", "enum": ["A", "B", "tie"]}}}
_SCORES = {"output": 1.0, "baseline": 0.0, "tie": 0.5}


class PairwiseConfig(JudgeConfig):
    prompt: str | None = Field(default=None, min_length=1, description="The comparison criteria; a general default.")
    baseline_field: str | None = Field(default=None, min_length=1,
                                       description="Metadata key holding the baseline output; default: expected.")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="Minimum score to pass (0.5: tie or better).")
    flip_passes: bool = Field(default=False, description="Whether a position-biased flip (score 0.5) may pass.")


@register
class Pairwise(JudgeGrader[PairwiseConfig]):
    type = "pairwise"
    description = "An LLM judge compares output and baseline twice, positions swapped; a flip is not a win."
    taxonomy = JudgeGrader.taxonomy.model_copy(update={"reference": "reference-based",
                                                       "temporal_scope": "cross-trajectory"})

    def plan(self, sample: Sample) -> GraderResult | Plan:
        cfg = self.config
        if cfg.baseline_field is not None:
            baseline = sample.metadata.get(cfg.baseline_field)
            where = f"metadata[{cfg.baseline_field!r}]"
        else:
            baseline, where = sample.expected, "expected"
        if baseline is None:
            return self.error_result(ErrorCode.INVALID_CONFIG, f"no baseline to compare with: the sample has no "
                                                               f"{where}")
        texts = self.texts(sample, input=sample.input, output=sample.output, baseline=baseline)
        if isinstance(texts, GraderResult):
            return texts
        injection, stop = self.guard({"output": texts["output"], "baseline": texts["baseline"]})
        if stop is not None:
            return stop
        task = texts["input"] if sample.input is not None else None
        requests = [self.request(self._prompt(task, texts["output"], texts["baseline"]), _SCHEMA, slot="output=A"),
                    self.request(self._prompt(task, texts["baseline"], texts["output"]), _SCHEMA, slot="output=B")]
        return Plan(requests, lambda replies: self._finish(replies, injection))

    def _prompt(self, task: str | None, a: str, b: str) -> Prompt:
        prompt = Prompt().say(f"Compare two responses to the same task.\n\n## Criteria\n"
                              f"{self.config.prompt or DEFAULT_PAIRWISE_PROMPT}")
        if task is not None:
            prompt.say("## The task given").data("input", task)
        prompt.say("## Response A").data("A", a).say("## Response B").data("B", b)
        return prompt.say('Reply with JSON: {"reasoning": "<why, briefly>", "winner": "A" | "B" | "tie"}.')

    def _finish(self, replies: list[Any], injection: dict[str, Any] | None) -> GraderResult:
        details: dict[str, Any] = merged_details(replies)
        if injection:
            details["injection"] = injection
        orders: list[dict[str, Any]] = []
        for reply, names in zip(replies, (("output", "baseline"), ("baseline", "output")), strict=True):
            read = _winner(reply)
            if isinstance(read, Problem):
                which = "output first" if names[0] == "output" else "baseline first"
                return self.error_result(read.code, f"{read.reason} (order: {which})", details)
            letter, reasoning = read
            orders.append({"order": f"{names[0]} first", "winner": {"A": names[0], "B": names[1]}.get(letter, "tie"),
                           "reasoning": reasoning})
        first, second = orders[0]["winner"], orders[1]["winner"]
        outcome = "flip" if first != second else "tie" if first == "tie" else "agreement"
        score = 0.5 if outcome == "flip" else _SCORES[first]
        passed = score >= self.config.threshold and (outcome != "flip" or self.config.flip_passes)
        details.update(outcome=outcome, winner=None if outcome == "flip" else first,
                       position_bias=outcome == "flip", orders=orders, threshold=self.config.threshold)
        if outcome == "flip":
            reason = f"position bias: {first} won with the output first, {second} with the baseline first"
        elif outcome == "tie":
            reason = "tie in both orders"
        else:
            reason = f"{first} preferred in both orders"
            if orders[0]["reasoning"]:
                reason += f": {orders[0]['reasoning']}"
        return self.scored_result(passed, score, reason=reason, details=details)


def _winner(reply: Any) -> tuple[str, str | None] | Problem:
    obj = read_object(reply)
    if isinstance(obj, Problem):
        return obj
    raw = obj.get("winner")
    letter = {"a": "A", "b": "B", "tie": "tie"}.get(raw.strip().lower()) if isinstance(raw, str) else None
    if letter is None:
        return Problem(ErrorCode.PARSE_FAILURE, f"the judge's winner is {str(raw)[:40]!r}, not A, B or tie")
    return letter, reasoning_of(obj)
