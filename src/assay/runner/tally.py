"""What `assay run` reports, added up as verdicts are graded (or read back), none of them kept.

A ``RunTally`` takes each chunk of verdicts (``add``): a resumed run's earlier ones first, then
the new ones, in file order, so its numbers are those of the whole results file. It applies
the reviews written beside the results (as ``assay report`` would), folds the verdicts into a
``RunningSummary``, keeps the first few problems for the listing, counts judge results, and
writes JUnit testcases as they come. Only ``--export`` (one JSON document of every run) makes
it keep the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.aggregate import SampleVerdict
from assay.core.result import Status
from assay.core.summary import RunningSummary
from assay.runner.report import JunitWriter

if TYPE_CHECKING:
    from assay.runner.reviews import Review


class RunTally:
    """See the module's docstring. ``max_problems``: non-passing verdicts kept for the listing;
    ``junit``: the JUnit report to write (``finish``); ``keep``: keep every verdict;
    ``clustered``: the verdicts may carry a ``cluster`` (repeats, waza trials), by which the
    intervals are then clustered as ``summarize`` clusters them (a run without costs nothing
    per sample); ``pass_k``: the k of pass@k (``core.repeats``)."""

    def __init__(self, *, threshold: float | None = None, reviews: Sequence[Review] = (), max_problems: int = 20,
                 junit: Path | None = None, suite_name: str = "", keep: bool = False,
                 count_judged: bool = True, clustered: bool = False, pass_k: int | None = None) -> None:
        self.threshold = threshold
        self.reviews = list(reviews)
        self.max_problems = max_problems
        self._clusters: dict[str, str] = {}
        """Sample id -> cluster for the chunk being added."""
        self.running = RunningSummary(cluster_of=self._cluster_of if clustered else None, pass_k=pass_k)
        self.problems: list[SampleVerdict] = []
        self.judged = self.judged_cached = 0
        """LLM results, and how many of them the judge cache answered."""
        self.verdicts: list[SampleVerdict] | None = [] if keep else None
        self._junit = JunitWriter(junit, suite_name) if junit is not None else None
        self._count_judged = count_judged

    def add(self, verdicts: Sequence[SampleVerdict]) -> None:
        if self.reviews:
            from assay.runner.reviews import apply_reviews

            verdicts = apply_reviews(verdicts, self.reviews, threshold=self.threshold)
        if self.running.cluster_of is not None:
            self._clusters = {v.id: v.cluster for v in verdicts if v.cluster is not None}
        self.running.add(verdicts)
        if len(self.problems) < self.max_problems:
            wanted = self.max_problems - len(self.problems)
            self.problems += [v for v in verdicts if v.status is not Status.PASSED][:wanted]
        if self._count_judged:
            for v in verdicts:
                for r in v.results:
                    if r.kind == "llm":
                        self.judged += 1
                        self.judged_cached += bool(r.details.get("cached"))
        if self._junit is not None:
            self._junit.add(verdicts)
        if self.verdicts is not None:
            self.verdicts.extend(verdicts)

    def _cluster_of(self, sample_id: str) -> str:
        return self._clusters.get(sample_id, sample_id)

    def finish(self, duration_s: float, warnings: Sequence[str] = ()) -> None:
        """Write the JUnit report, if one was asked for (with the summary's intervals)."""
        if self._junit is not None:
            self._junit.finish(duration_s, warnings, summary=self.running.summary())
