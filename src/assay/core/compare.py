"""Compare two runs pair by pair: did the change help, or is it noise?

Samples are paired by id (by cluster, when a run graded a sample several times: repeats,
waza trials); a sample graded in one run only is listed apart, never paired. Per grader and
for the samples' verdicts: both pass rates, the paired difference with its 95% interval
(Newcombe's method 10 on single attempts; over samples when they were repeated,
``stats.paired_mean_interval``, bounded by [-1, 1] and small-sample safe), the exact McNemar
p-value on the discordant pairs (a sign test on the per-sample changes when repeated), and for
scores ``stats.paired_mean_interval`` of the mean difference. Errors and pending results are left out
(and counted), as in every summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.core import stats
from assay.core.aggregate import SampleVerdict
from assay.core.messages import Phrase, Said, in_turn, said_again
from assay.core.result import GraderResult, Status

OVERALL = "overall"
FAILING = Phrase("compare.failing", "{name}: {reason}")
"""One grader's part in a sample's overall flip reason (the grader's own reason kept inside)."""
NO_REASON = {Status.FAILED: Phrase("compare.no_reason.failed", "{name}: failed"),
             Status.ERROR: Phrase("compare.no_reason.error", "{name}: error"),
             Status.PENDING: Phrase("compare.no_reason.pending", "{name}: pending")}
"""A grader that did not pass and gave no reason, by its status."""


@dataclass(slots=True)
class _Tally:
    """One sample (cluster) under one grader in one run: scored attempts, passes, score sum,
    and the first failure's reason (shown beside a flip)."""

    attempts: int = 0
    passes: int = 0
    score_sum: float = 0.0
    scores: int = 0
    left_out: int = 0
    reason: str | None = None
    """A ``Said`` when the product wrote it (codes kept, for the pages), else as written."""

    def add(self, status: Status, score: float | None, reason: str | None) -> None:
        if status is not Status.PASSED and status is not Status.FAILED:
            self.left_out += 1
            return
        self.attempts += 1
        self.passes += status is Status.PASSED
        if score is not None:
            self.score_sum += score
            self.scores += 1
        if status is Status.FAILED and self.reason is None:
            self.reason = reason


Run = dict[str, dict[str, _Tally]]
"""cluster (sample id) -> grader name (or OVERALL) -> tally."""


def _collect(verdicts: Iterable[SampleVerdict], labels: Mapping[str, str]) -> tuple[Run, list[str]]:
    run: Run = {}
    graders: dict[str, None] = {}
    for v in verdicts:
        per = run.setdefault(v.cluster or v.id, {})
        failing = [_failing(r, labels.get(r.name, r.name)) for r in v.results if r.status is not Status.PASSED]
        per.setdefault(OVERALL, _Tally()).add(v.status, v.score, in_turn(failing) if failing else None)
        for r in v.results:
            graders.setdefault(r.name)
            status = Status(r.status)
            per.setdefault(r.name, _Tally()).add(status, r.score, _reason(r) if status is Status.FAILED else None)
    return run, list(graders)


def _reason(result: GraderResult) -> str | None:
    """A result's reason, as its phrase said it when it carries the phrase's code."""
    return said_again(result.reason, result.reason_code, result.reason_args) if result.reason else result.reason


def _failing(result: GraderResult, name: str) -> Said:
    reason = _reason(result)
    return FAILING(name=name, reason=reason) if reason else NO_REASON[Status(result.status)](name=name)


@dataclass(slots=True)
class Flip:
    id: str
    base_reason: str | None
    new_reason: str | None


@dataclass(slots=True)
class GraderComparison:
    """One grader (or the verdicts, ``grader`` = "overall") compared across the paired samples."""

    grader: str
    pairs: int
    base_pass_rate: float | None
    new_pass_rate: float | None
    delta: float | None
    delta_ci: stats.Interval | None
    p_value: float | None
    to_fail: list[Flip] = field(default_factory=list)
    to_pass: list[Flip] = field(default_factory=list)
    left_out: int = 0
    """Paired samples without a scored result in one run or both (errors, pending, absent)."""
    base_mean_score: float | None = None
    new_mean_score: float | None = None
    score_delta: float | None = None
    score_delta_ci: stats.Interval | None = None

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (``assay compare --json``), plus the score comparison,
        the number of pairs and those left out, and each flip's two reasons."""
        return {
            "grader": self.grader, "base_pass_rate": self.base_pass_rate, "new_pass_rate": self.new_pass_rate,
            "delta": self.delta, "delta_ci": list(self.delta_ci) if self.delta_ci else None,
            "p_value": self.p_value, "to_fail": [f.id for f in self.to_fail], "to_pass": [f.id for f in self.to_pass],
            "pairs": self.pairs, "left_out": self.left_out,
            "base_mean_score": self.base_mean_score, "new_mean_score": self.new_mean_score,
            "score_delta": self.score_delta,
            "score_delta_ci": list(self.score_delta_ci) if self.score_delta_ci else None,
            "flips": [{"id": f.id, "direction": way, "base_reason": f.base_reason, "new_reason": f.new_reason}
                      for way, flips in (("to_fail", self.to_fail), ("to_pass", self.to_pass)) for f in flips],
        }


@dataclass(slots=True)
class Comparison:
    graders: list[GraderComparison]
    overall: GraderComparison
    base_only: list[str]
    new_only: list[str]

    def regressions(self, alpha: float) -> list[GraderComparison]:
        """Graders (and the verdicts) whose pass rate fell with p < ``alpha``."""
        return [g for g in [*self.graders, self.overall]
                if g.delta is not None and g.delta < 0 and g.p_value is not None and g.p_value < alpha]

    def to_dict(self) -> dict[str, Any]:
        return {"graders": [g.to_dict() for g in self.graders], "overall": self.overall.to_dict(),
                "unpaired": {"base_only": self.base_only, "new_only": self.new_only}}


def compare_runs(base: Iterable[SampleVerdict], new: Iterable[SampleVerdict], *,
                 seed: int = stats.SEED, labels: Mapping[str, str] | None = None) -> Comparison:
    """Compare run ``new`` with run ``base`` (see the module's docstring). Each flip's reasons
    are ``Said`` where the product wrote them (``core.messages.code_and_args`` reads their
    codes); ``labels`` names graders in the overall reasons (grader key -> shown name; it may
    be filled while the verdicts are read)."""
    labels = {} if labels is None else labels
    b, b_graders = _collect(base, labels)
    n, n_graders = _collect(new, labels)
    paired = [k for k in b if k in n]
    names = b_graders + [g for g in n_graders if g not in set(b_graders)]
    graders = [_compare(name, paired, b, n, seed) for name in names]
    return Comparison(graders, _compare(OVERALL, paired, b, n, seed),
                      base_only=[k for k in b if k not in n], new_only=[k for k in n if k not in b])


def _compare(name: str, paired: list[str], base: Run, new: Run, seed: int) -> GraderComparison:
    pairs: list[tuple[str, _Tally, _Tally]] = []
    left_out = 0
    for key in paired:
        x, y = base[key].get(name), new[key].get(name)
        if x is None or y is None or not x.attempts or not y.attempts:
            left_out += 1
        else:
            pairs.append((key, x, y))
    out = GraderComparison(name, len(pairs), None, None, None, None, None, left_out=left_out)
    if not pairs:
        return out
    xr = np.array([x.passes / x.attempts for _, x, _ in pairs])
    yr = np.array([y.passes / y.attempts for _, _, y in pairs])
    d = yr - xr
    out.base_pass_rate, out.new_pass_rate = float(xr.mean()), float(yr.mean())
    out.delta = out.new_pass_rate - out.base_pass_rate
    down, up = int((d < 0).sum()), int((d > 0).sum())
    out.p_value = stats.mcnemar_exact(down, up)
    if all(x.attempts == 1 and y.attempts == 1 for _, x, y in pairs):
        both = int(((xr == 1) & (yr == 1)).sum())
        out.delta_ci = stats.paired_rate_interval(both, down, up, len(pairs) - both - down - up)
    else:
        out.delta_ci = stats.paired_mean_interval(d)
    out.to_fail = [Flip(k, x.reason, y.reason) for (k, x, y), di in zip(pairs, d) if di < 0]
    out.to_pass = [Flip(k, x.reason, y.reason) for (k, x, y), di in zip(pairs, d) if di > 0]
    scored = [(x.score_sum / x.scores, y.score_sum / y.scores) for _, x, y in pairs if x.scores and y.scores]
    if scored:
        s = np.array(scored)
        out.base_mean_score, out.new_mean_score = float(s[:, 0].mean()), float(s[:, 1].mean())
        out.score_delta = out.new_mean_score - out.base_mean_score
        out.score_delta_ci = stats.paired_mean_interval(s[:, 1] - s[:, 0])
    return out
