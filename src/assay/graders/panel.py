"""``panel``: several LLM judges score the output at once and their scores are aggregated
(Vally's ``panel``).

Seats come from ``judges`` (each a ``model`` and/or a ``prompt`` variation, optionally named)
or Vally's ``models`` list (one seat per model, sharing ``prompt``). Every seat scores on
``scoring`` (default ``scale_1_5``) exactly as ``prompt`` does; all seats of a chunk of samples
go to the client in one ``judge_many``, so they run concurrently.

Aggregation (``aggregation``, default ``mean`` as in Vally), over the seats that answered:

- ``mean`` / ``median`` / ``min`` of the normalised scores; passed when it reaches
  ``threshold`` (default 0.5);
- ``majority``: each seat votes pass when its score reaches ``threshold``; the score is the
  share of pass votes, and the panel passes with more than half of them (a strict majority:
  an even split fails).

Disagreement is reported in details: each seat's score, vote and reasoning (``judges``), the
``spread`` (highest minus lowest normalised score) and ``agreement`` (the share of answering
seats whose vote matches the panel's verdict). A seat whose call fails (timeout, refusal,
unparseable reply) is listed with its error and left out; when fewer than ``min_judges``
(default: a majority of the seats) answer, the result is an error, not a grade.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._judge_reply import Problem, ScaleName, call_details, merged_details
from assay.graders._judge_score import read_score, score_prompt, score_schema
from assay.graders._judging import JudgeConfig, JudgeGrader, Plan
from assay.graders.prompt import DEFAULT_PROMPT


class PanelSeat(BaseModel):
    """One judge of the panel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1, description="Label in details; default: the model.")
    model: str | None = Field(default=None, min_length=1, description="This judge's model; default: the panel's.")
    prompt: str | None = Field(default=None, min_length=1, description="This judge's criteria; default: the panel's.")


class PanelConfig(JudgeConfig):
    judges: list[PanelSeat] | None = Field(default=None, min_length=1, max_length=20,
                                           description="The seats: each a model and/or prompt variation.")
    models: list[str] | None = Field(default=None, min_length=1, max_length=20,
                                     description="Vally's form: one seat per model, all with `prompt`.")
    prompt: str | None = Field(default=None, min_length=1, description="Criteria shared by the seats.")
    scoring: ScaleName = Field(default="1-5", description="The seats' scale: binary, scale_1_5, scale_1_10, 0-1.")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="Pass mark on the normalised score.")
    aggregation: Literal["majority", "mean", "median", "min"] = Field(default="mean",
                                                                      description="How seat scores combine.")
    min_judges: int | None = Field(default=None, ge=1, description="Fewest answering seats for a grade; "
                                                                   "default: a majority of the seats.")

    _seats: tuple[tuple[str, str | None, str | None], ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _build_seats(self) -> Self:
        if (self.judges is None) == (self.models is None):
            raise ValueError("give the panel's seats as judges or as models (exactly one)")
        seats = self.judges if self.judges is not None else [PanelSeat(model=m) for m in self.models or []]
        names: list[str] = []
        for i, seat in enumerate(seats, 1):
            name = seat.name or seat.model or f"judge{i}"
            names.append(name if name not in names else f"{name}#{i}")
        self._seats = tuple((n, s.model, s.prompt) for n, s in zip(names, seats, strict=True))
        if self.min_judges is not None and self.min_judges > len(seats):
            raise ValueError(f"min_judges is {self.min_judges} but the panel has {len(seats)} seat(s)")
        return self

    @property
    def seats(self) -> tuple[tuple[str, str | None, str | None], ...]:
        """Each seat as (name, model or None, prompt or None); names are distinct."""
        return self._seats

    @property
    def quorum(self) -> int:
        """The fewest answering seats that make a grade."""
        return self.min_judges if self.min_judges is not None else len(self._seats) // 2 + 1


@register
class Panel(JudgeGrader[PanelConfig]):
    type = "panel"
    description = "Several LLM judges score concurrently; majority, mean, median or min, with disagreement reported."

    def plan(self, sample: Sample) -> GraderResult | Plan:
        cfg = self.config
        texts = self.texts(sample, input=sample.input, output=sample.output)
        if isinstance(texts, GraderResult):
            return texts
        if sample.input is None:
            texts.pop("input")
        injection, stop = self.guard({"output": texts["output"]})
        if stop is not None:
            return stop
        requests = []
        for i, (name, model, prompt) in enumerate(cfg.seats):
            p = score_prompt(prompt or cfg.prompt or DEFAULT_PROMPT, cfg.scoring, texts, heading="Instructions")
            requests.append(self.request(p, score_schema(cfg.scoring), model=model, slot=f"{i}:{name}"))
        return Plan(requests, lambda replies: self._finish(replies, injection))

    def _finish(self, replies: list[Any], injection: dict[str, Any] | None) -> GraderResult:
        cfg = self.config
        rows: list[dict[str, Any]] = []
        scores: list[float] = []
        problems: list[Problem] = []
        for (name, _, _), reply in zip(cfg.seats, replies, strict=True):
            read = read_score(reply, cfg.scoring)
            row: dict[str, Any] = {"name": name, **call_details(reply)}
            if isinstance(read, Problem):
                problems.append(read)
                row.update(status="error", error=str(read.code), message=read.reason)
            else:
                scores.append(read.score)
                row.update(status="answered", raw_score=read.raw, score=round(read.score, 6),
                           vote=read.score >= cfg.threshold, reasoning=read.reasoning)
            rows.append(row)
        details = {**merged_details(replies), "judges": rows, "aggregation": cfg.aggregation,
                   "threshold": cfg.threshold, "answered": len(scores), "excluded": len(problems),
                   "min_judges": cfg.quorum}
        details.pop("calls")  # each seat's call details are in its row
        if injection:
            details["injection"] = injection
        if len(scores) < cfg.quorum:
            code = Counter(p.code for p in problems).most_common(1)[0][0]
            return self.error_result(code, f"only {len(scores)} of {len(rows)} judges answered (at least "
                                           f"{cfg.quorum} needed); first problem: {problems[0].reason}", details)
        votes = [s >= cfg.threshold for s in scores]
        if cfg.aggregation == "majority":
            score = sum(votes) / len(votes)
            passed = score > 0.5
        else:
            pick: dict[str, Callable[[list[float]], float]] = {"mean": statistics.fmean, "median": statistics.median,
                                                              "min": min}
            score = pick[cfg.aggregation](scores)
            passed = score >= cfg.threshold
        agreement = sum(v == passed for v in votes) / len(votes)
        spread = max(scores) - min(scores)
        details.update(spread=round(spread, 6), agreement=round(agreement, 6), disagreement=agreement < 1.0)
        reason = (f"{cfg.aggregation} of {len(scores)} judge(s): {score:.2f}; spread {spread:.2f}, "
                  f"{agreement:.0%} agree with the verdict")
        if problems:
            reason += f"; {len(problems)} judge(s) excluded after errors"
        return self.scored_result(passed, round(float(score), 6), reason=reason, details=details)
