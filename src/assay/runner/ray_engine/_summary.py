"""A suite summary built batch by batch, so the driver never holds every verdict.

Each batch is summarised where it was graded (``core.aggregate.summarize``); the driver adds
the parts up. Adding is exact: counts and score sums add, and the means are taken from the
sums (``core.summary.mean_score``), as ``summarize`` takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.core.aggregate import GraderSummary, SampleVerdict, SuiteSummary
from assay.core.summary import Outcomes, RunningSummary


@dataclass(slots=True)
class PartialSummary:
    """A summary with the sums its means come from, so that two of them can be added."""

    summary: SuiteSummary = field(default_factory=SuiteSummary)
    verdicts: Outcomes = field(default_factory=Outcomes)
    """The compact outcomes the intervals are taken from (``core.summary.Outcomes``), added up."""
    graders: dict[str, Outcomes] = field(default_factory=dict)

    @classmethod
    def of(cls, verdicts: Sequence[SampleVerdict]) -> PartialSummary:
        """The part ``verdicts`` contribute."""
        running = RunningSummary().add(verdicts)
        return cls(running.summary(), running.verdicts, running.graders)

    def take_intervals(self) -> SuiteSummary:
        """The summary with the intervals of everything added (once, at the end: each is a
        pass over the outcomes)."""
        self.summary.intervals = self.verdicts.intervals()
        for g in self.summary.graders:
            if g.name in self.graders:
                g.intervals = self.graders[g.name].intervals()
        return self.summary

    def add(self, other: PartialSummary) -> None:
        """Fold ``other`` into this one (graders keep the order they were first seen in)."""
        mine, theirs = self.summary, other.summary
        for name in ("total", "passed", "failed", "errors", "pending", "score_sum", "scored"):
            setattr(mine, name, getattr(mine, name) + getattr(theirs, name))
        _extend(self.verdicts, other.verdicts)
        for name, outcomes in other.graders.items():
            _extend(self.graders.setdefault(name, Outcomes()), outcomes)
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
    for name in ("total", "passed", "failed", "errors", "pending", "skipped", "score_sum", "scored"):
        setattr(have, name, getattr(have, name) + getattr(g, name))
    for code, n in g.error_codes.items():
        have.error_codes[code] = have.error_codes.get(code, 0) + n


def _extend(have: Outcomes, more: Outcomes) -> None:
    have.passed += more.passed
    have.scores.extend(more.scores)
