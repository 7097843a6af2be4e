"""Rubric-and-scale judging, shared by ``llm``, ``llm_comparison``, ``prompt`` (its scale modes)
and each seat of a ``panel``: the prompt, the reply schema ``{"reasoning", "score"}``, and the
reading of a reply into a grade.

``passed`` is always ``normalised score >= threshold``. A ``passed``/``pass`` field the judge
volunteers is never used; when it disagrees with the score, ``details.judge_pass_ignored``
says so (``{"judge_said": ..., "derived": ...}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.core.grader import Grader
from assay.core.judge import JudgeReply
from assay.core.messages import Phrase
from assay.core.result import ErrorCode, GraderResult
from assay.graders._judge_reply import (
    Problem,
    call_details,
    judge_pass_claim,
    normalise,
    problem_details,
    read_object,
    reasoning_of,
    scale_instruction,
    scale_schema,
)
from assay.graders._judging import Prompt

NO_SCORE = Phrase("judge.no_score", "the judge's reply has no score")
UNUSABLE = Phrase("judge.unusable", "the judge's reply is unusable: {problem}")
SCORE_ON = Phrase("judge.score_on", "score {score} on {scale}")

_PARSE = ErrorCode.PARSE_FAILURE

FIELD_TITLES = {"input": "The task given", "output": "The output to evaluate",
                "reference": "The reference answer", "transcript": "The agent's transcript"}


def score_schema(scale: str) -> dict[str, Any]:
    """The structured-output schema: the judge's reasoning first, then its score."""
    return {"type": "object", "properties": {"reasoning": {"type": "string"}, "score": scale_schema(scale)},
            "required": ["reasoning", "score"], "additionalProperties": False}


def score_prompt(criteria: str, scale: str, fields: dict[str, str], *, heading: str = "Criteria") -> Prompt:
    """The prompt: the criteria, each untrusted field fenced under its title, the scale."""
    prompt = Prompt().say(f"Evaluate the output below by the {heading.lower()}.\n\n## {heading}\n{criteria}")
    for name, text in fields.items():
        prompt.say(f"## {FIELD_TITLES.get(name, name)}").data(name, text)
    return prompt.say('Reply with JSON: {"reasoning": "<why, briefly>", "score": <score>}. '
                      + scale_instruction(scale))


@dataclass(slots=True)
class ScoreRead:
    """A readable verdict: the raw score, its normalised value, the reasoning, and any
    ``passed`` claim the judge made."""

    raw: Any
    score: float
    reasoning: str | None
    claim: bool | None


def read_score(reply: JudgeReply, scale: str) -> ScoreRead | Problem:
    """The verdict in ``reply`` on ``scale``, or why there is none."""
    obj = read_object(reply)
    if isinstance(obj, Problem):
        return obj
    if "score" not in obj:
        return Problem(_PARSE, NO_SCORE(), {"keys": sorted(obj)[:20]})
    score = normalise(scale, obj["score"])
    if isinstance(score, str):
        return Problem(_PARSE, UNUSABLE(problem=score))
    return ScoreRead(obj["score"], score, reasoning_of(obj), judge_pass_claim(obj))


def scored_result(grader: Grader[Any], reply: JudgeReply, scale: str, threshold: float,
                  injection: dict[str, Any] | None, extra: dict[str, Any] | None = None) -> GraderResult:
    """The result of one scored call: passed when the normalised score reaches ``threshold``;
    an error result (with the reply excerpt) when the reply has no readable verdict."""
    read = read_score(reply, scale)
    base = {**(extra or {}), **({"injection": injection} if injection else {})}
    if isinstance(read, Problem):
        return grader.error_result(read.code, read.reason, {**problem_details(reply, read), **base})
    passed = read.score >= threshold
    details = {**call_details(reply), **base, "raw_score": read.raw, "scale": scale, "threshold": threshold}
    if read.claim is not None and read.claim != passed:
        details["judge_pass_ignored"] = {"judge_said": read.claim, "derived": passed}
    reason = read.reasoning or SCORE_ON(score=str(read.raw), scale=scale)  # the judge's words, else ours
    return grader.scored_result(passed, round(read.score, 6), reason=reason, details=details)

