"""A suite summary built batch by batch, so the driver never holds every verdict.

Each batch is summarised where it was graded (``core.aggregate.summarize``); the driver adds
the parts up. Adding is exact: counts and score sums add, and the means are taken at the end
from the sums, as ``summarize`` takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.core.aggregate import GraderSummary, SampleVerdict, SuiteSummary, summarize


@dataclass(slots=True)
class PartialSummary:
    """A summary with the sums its means come from, so that two of them can be added."""

    summary: SuiteSummary = field(default_factory=SuiteSummary)
    score_sum: float = 0.0
    scored: int = 0

    @classmethod
    def of(cls, verdicts: Sequence[SampleVerdict]) -> PartialSummary:
        """The part ``verdicts`` contribute."""
        scores = [v.score for v in verdicts if v.score is not None]
        return cls(summarize(verdicts), float(sum(scores)), len(scores))

    def add(self, other: PartialSummary) -> None:
        """Fold ``other`` into this one (graders keep the order they were first seen in)."""
        mine, theirs = self.summary, other.summary
        for name in ("total", "passed", "failed", "errors", "pending"):
            setattr(mine, name, getattr(mine, name) + getattr(theirs, name))
        self.score_sum += other.score_sum
        self.scored += other.scored
        mine.mean_score = self.score_sum / self.scored if self.scored else None
        mine.rates.merge(theirs.rates)
        mine.scores.merge(theirs.scores)
        by_name = {g.name: g for g in mine.graders}
        for g in theirs.graders:
            have = by_name.get(g.name)
            if have is None:
                copy = GraderSummary(g.name, g.type, g.weight)
                mine.graders.append(copy)
                by_name[g.name] = have = copy
            _add_grader(have, g)


def _add_grader(have: GraderSummary, g: GraderSummary) -> None:
    if have.weight is None and g.weight is not None:  # a grader first seen skipped learns its type later
        have.weight, have.type = g.weight, g.type
    for name in ("total", "passed", "failed", "errors", "pending", "skipped"):
        setattr(have, name, getattr(have, name) + getattr(g, name))
    have.score_sum += g.score_sum
    have.rates.merge(g.rates)
    have.scores.merge(g.scores)
    for code, n in g.error_codes.items():
        have.error_codes[code] = have.error_codes.get(code, 0) + n
