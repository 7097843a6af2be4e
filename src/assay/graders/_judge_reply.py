"""Reading a judge's reply: scales, the strict JSON parser, and the details every judge result
carries.

A reply becomes exactly one of: a verdict object (a dict), or a ``Problem`` (an error code, a
reason and details) that the grader reports as an ``error`` result, never as a failed grade:

- the client's own error (``timeout``, ``unavailable``) passes through with its message;
- an empty reply, or a refusal ("I'm sorry, I can't ..."), is ``unavailable``;
- anything else that is not one JSON object is ``parse_failure``. Accepted forms: the client's
  parsed structured output; the whole text as JSON; JSON inside a single fenced code block
  (two or more blocks are ambiguous, so refused); one ``{...}`` span within prose.

A value that parses but breaks the scale (missing, not a number, outside the range, a fraction
on an integer scale) is ``parse_failure`` too: there is no readable verdict.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from assay.core.judge import JudgeReply
from assay.core.messages import Phrase
from assay.core.result import ErrorCode
from assay.core.untrusted import cap_text

EXCERPT_CHARS = 500
"""How much of a judge's raw reply a result keeps in ``details.reply``."""

_SCALE_ALIASES = {"scale_1_5": "1-5", "scale_1_10": "1-10", "1_5": "1-5", "1_10": "1-10", "0_1": "0-1"}


def _scale_alias(value: Any) -> Any:
    return _SCALE_ALIASES.get(value, value) if isinstance(value, str) else value


ScaleName = Annotated[Literal["binary", "1-5", "1-10", "0-1"], BeforeValidator(_scale_alias)]
"""A scoring scale; Vally's spellings ``scale_1_5`` and ``scale_1_10`` are accepted too."""

_RANGES: dict[str, tuple[float, float]] = {"binary": (0, 1), "1-5": (1, 5), "1-10": (1, 10), "0-1": (0.0, 1.0)}


def scale_schema(scale: str) -> dict[str, Any]:
    """The JSON Schema of a raw score on ``scale``."""
    low, high = _RANGES[scale]
    if scale == "0-1":
        return {"type": "number", "minimum": 0, "maximum": 1}
    return {"type": "integer", "minimum": int(low), "maximum": int(high)}


def scale_instruction(scale: str) -> str:
    """How the judge is told to score on ``scale``."""
    return {
        "binary": "Give `score` 1 if the output meets the criteria, 0 if it does not.",
        "1-5": "Give `score` as an integer from 1 (very poor) to 5 (excellent); 3 is acceptable.",
        "1-10": "Give `score` as an integer from 1 (very poor) to 10 (excellent).",
        "0-1": "Give `score` as a number from 0.0 (fails entirely) to 1.0 (fully meets the criteria).",
    }[scale]


def normalise(scale: str, raw: Any) -> float | str:
    """``raw`` mapped onto [0, 1] (waza's: 1→0.0, 3→0.5, 5→1.0 on 1-5; (s-1)/9 on 1-10), or a
    sentence saying why it is not a score on ``scale``."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        return f"score is {json.dumps(raw)[:40]}, not a number"
    low, high = _RANGES[scale]
    if not low <= raw <= high:
        return f"score {raw} is outside the {scale} scale"
    if scale != "0-1" and raw != int(raw):
        return f"score {raw} is not a whole number on the {scale} scale"
    return (float(raw) - low) / (high - low)


JUDGE_ERROR = Phrase("judge.error", "judge {error}: {message}")
EMPTY = Phrase("judge.empty", "the judge returned an empty reply")
REFUSED = Phrase("judge.refused", "the judge refused to grade")
UNPARSED = Phrase("judge.unparsed", "the judge's reply could not be parsed: {what}")
NO_OBJECT = Phrase("judge.no_object", "no JSON object")
NOT_OBJECT = Phrase("judge.not_object", "JSON {type}, not an object")



@dataclass(slots=True)
class Problem:
    """Why a reply gave no verdict: the error result to report."""

    code: ErrorCode
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


_REFUSAL = re.compile(r"^\W*(?:i'?m sorry|i am sorry|sorry,|i can(?:no|')t|i cannot|i won'?t|i'?m (?:not able|unable)|"
                      r"i am (?:not able|unable)|as an ai)", re.IGNORECASE)
_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def read_object(reply: JudgeReply) -> dict[str, Any] | Problem:
    """The verdict object in ``reply``, or the ``Problem`` that stops it being one."""
    if reply.error is not None:
        return Problem(ErrorCode(reply.error), JUDGE_ERROR(error=reply.error, message=reply.message or "no message"))
    if isinstance(reply.parsed, dict):
        return reply.parsed
    text = (reply.text or "").strip()
    if not text:
        return Problem(ErrorCode.UNAVAILABLE, EMPTY())
    value = _json_in(text)
    if isinstance(value, dict):
        return value
    if _REFUSAL.match(text):
        return Problem(ErrorCode.UNAVAILABLE, REFUSED())
    what = NO_OBJECT() if value is None else NOT_OBJECT(type=type(value).__name__) \
        if not isinstance(value, str) else value
    return Problem(ErrorCode.PARSE_FAILURE, UNPARSED(what=what))


def _json_in(text: str) -> Any:
    """The JSON value ``text`` holds (see the module docstring), None when there is none, or a
    sentence (a str) saying why the text is ambiguous."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    blocks = _FENCED.findall(text)
    if len(blocks) > 1:
        return "more than one fenced block"
    if len(blocks) == 1:
        try:
            return json.loads(blocks[0])
        except ValueError:
            return None
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(text[start:end + 1])
        except ValueError:
            return None
    return None


def excerpt(reply: JudgeReply) -> str | None:
    """The raw reply cut to ``EXCERPT_CHARS`` (the parsed object when there is no text)."""
    text = reply.text if reply.text is not None else (json.dumps(reply.parsed) if reply.parsed is not None else None)
    return None if text is None else cap_text(text, EXCERPT_CHARS)


def call_details(reply: JudgeReply) -> dict[str, Any]:
    """What one judge call reports in a result's details. Keys are never included: a reply
    carries none."""
    return {"model": reply.model, "usage": dict(reply.usage), "cost_usd": reply.cost_usd, "cached": reply.cached,
            "latency_ms": reply.latency_ms, "attempts": reply.attempts, "reply": excerpt(reply)}


def merged_details(replies: list[JudgeReply]) -> dict[str, Any]:
    """Totals over several calls (pairwise, panel) with each call's own details under ``calls``."""
    usage: dict[str, int] = {}
    for r in replies:
        for k, v in r.usage.items():
            usage[k] = usage.get(k, 0) + v
    costs = [r.cost_usd for r in replies]
    return {"model": replies[0].model if len({r.model for r in replies}) == 1 else None, "usage": usage,
            "cost_usd": None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
            "cached": all(r.cached for r in replies), "latency_ms": max(r.latency_ms for r in replies),
            "attempts": sum(r.attempts for r in replies), "calls": [call_details(r) for r in replies]}


def problem_details(reply: JudgeReply, problem: Problem) -> dict[str, Any]:
    return {**call_details(reply), **problem.details}


def reasoning_of(obj: dict[str, Any]) -> str | None:
    """The judge's reasoning (``reasoning``, else ``reason``, ``explanation``) as text."""
    for key in ("reasoning", "reason", "explanation"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def judge_pass_claim(obj: dict[str, Any]) -> bool | None:
    """A ``passed``/``pass`` boolean the judge volunteered (never used for the verdict)."""
    for key in ("passed", "pass"):
        if isinstance(obj.get(key), bool):
            return bool(obj[key])
    return None
