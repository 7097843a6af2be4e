"""The decision mode of binary judges (``scoring: logprobs``), for small and local models that
answer a yes/no question far better than they fill in a JSON verdict.

The judge is asked one question, "does the output meet the criteria? yes or no", for one
token, with that token's most likely alternatives and their log-probabilities. The
probabilities of the label's spellings are summed (``yes``, `` Yes``, ``YES``, ``pass``,
``true``... against ``no``, ``fail``, ``false``...): the score is P(pass) = pass / (pass + fail),
and the grade passes when it reaches the threshold. The reason states the probabilities.

A reply without logprobs (an endpoint that does not give them) is an ``unavailable`` error
saying so; one whose alternatives hold no label at all is a ``parse_failure``: never a verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from assay.core.grader import Grader
from assay.core.judge import JudgeReply
from assay.core.messages import Phrase
from assay.core.result import ErrorCode, GraderResult
from assay.graders._judge_guard import ANSWER_WORD
from assay.graders._judge_reply import JUDGE_ERROR, Problem, call_details, problem_details
from assay.graders._judging import Prompt

TOP_LOGPROBS = 20
"""Alternatives asked for: OpenAI's most; enough that both labels are among them."""
PASS_LABELS = frozenset({"yes", "pass", "passed", "true", "correct"})
FAIL_LABELS = frozenset({"no", "fail", "failed", "false", "incorrect"})

NO_LOGPROBS = Phrase("judge.no_logprobs", "the judge endpoint returned no logprobs, so scoring: logprobs cannot "
                                          "decide (use scoring: parse with this endpoint)")
NO_LABEL = Phrase("judge.no_label", "neither yes nor no is among the judge's {count} most likely first tokens "
                                    "(the likeliest: {likeliest})")
DECIDED = Phrase("judge.decided", "P(pass) {p_pass} (yes {yes}, no {no} of the first token's probability; "
                                  "threshold {threshold})")


def decision_prompt(criteria: str, fields: dict[str, str], field_titles: dict[str, str], *,
                    heading: str = "Criteria") -> Prompt:
    """The question: the criteria, each untrusted field fenced under its title, yes or no."""
    prompt = Prompt(answer=ANSWER_WORD)
    prompt.say(f"Decide whether the output below meets the {heading.lower()}.\n\n## {heading}\n{criteria}")
    for name, text in fields.items():
        prompt.say(f"## {field_titles.get(name, name)}").data(name, text)
    return prompt.say(f"Does the output meet the {heading.lower()}? {ANSWER_WORD}")


@dataclass(frozen=True, slots=True)
class Decision:
    """The label probabilities among the first token's alternatives, and P(pass)."""

    yes: float
    no: float

    @property
    def p_pass(self) -> float:
        return self.yes / (self.yes + self.no)


def label(token: str) -> bool | None:
    """True for a spelling of pass, False for one of fail, None for any other token."""
    word = token.strip().strip(".,:;!\"'`*").lower()
    return True if word in PASS_LABELS else False if word in FAIL_LABELS else None


def read_decision(reply: JudgeReply) -> Decision | Problem:
    """The decision in ``reply``, or why there is none."""
    if reply.error is not None:
        return Problem(ErrorCode(reply.error), JUDGE_ERROR(error=reply.error, message=reply.message or "no message"))
    if not reply.top_logprobs:
        return Problem(ErrorCode.UNAVAILABLE, NO_LOGPROBS())
    mass = {True: 0.0, False: 0.0}
    for token, logprob in reply.top_logprobs.items():
        side = label(token)
        if side is not None:
            mass[side] += math.exp(logprob)
    if mass[True] + mass[False] <= 0.0:
        likeliest = sorted(reply.top_logprobs.items(), key=lambda kv: -kv[1])[:5]
        return Problem(ErrorCode.PARSE_FAILURE, NO_LABEL(count=len(reply.top_logprobs),
                                                         likeliest=", ".join(repr(t) for t, _ in likeliest)))
    return Decision(mass[True], mass[False])


def decided_result(grader: Grader[Any], reply: JudgeReply, threshold: float,
                   injection: dict[str, Any] | None) -> GraderResult:
    """The result of one decision call: passed when P(pass) reaches ``threshold``."""
    read = read_decision(reply)
    base = {**({"injection": injection} if injection else {}), "scoring": "logprobs"}
    if isinstance(read, Problem):
        return grader.error_result(read.code, read.reason, {**problem_details(reply, read), **base})
    p_pass = read.p_pass
    details = {**call_details(reply), **base, "p_pass": round(p_pass, 6),
               "label_probability": {"yes": round(read.yes, 6), "no": round(read.no, 6)}, "threshold": threshold}
    reason = DECIDED(p_pass=f"{p_pass:.3f}", yes=f"{read.yes:.3f}", no=f"{read.no:.3f}", threshold=f"{threshold:g}")
    return grader.scored_result(p_pass >= threshold, round(p_pass, 6), reason=reason, details=details)
