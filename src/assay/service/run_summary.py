"""A finished run's summary and its comparison with another run, both from the engine's own
rules: each sample's stored results become a verdict through ``core.aggregate.judge_sample``
(a sample passes when every evaluator that graded it passed; its score is the weighted mean
of the scores it got; errors and pending results apart), and the verdicts are added up by
``core.summary.RunningSummary`` (95% intervals) or paired by ``core.compare``."""

from __future__ import annotations

import copy
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.compare import compare_runs
from assay.core.intervals import Intervals, of_sums
from assay.core.messages import code_and_args
from assay.core.result import ErrorCode, Status
from assay.core.summary import GraderSummary, Outcomes, RunningSummary
from assay.store import queue
from assay.store import runs as run_rows
from assay.store.models import EvaluationResult

_ERRORS = {e.value: e for e in ErrorCode}


def run_verdicts(session: Session, run_id: str, weights: dict[str, float], names: dict[str, str] | None = None,
                 between: tuple[int, int] | None = None, codes: bool = False) -> Iterator[SampleVerdict]:
    """The verdict of each sample of run ``run_id`` (of samples ``start <= index < stop`` when
    ``between`` says so), in dataset order, streamed (results come sample by sample). Each
    result is named by its evaluator id, so two evaluators with one name stay apart; ``names``
    (if given) is filled with id -> evaluator name. With ``codes``, the results' reasons carry
    their stored ``reason_code`` and ``reason_args`` (a summary does without)."""
    query = run_rows.results_query(run_id)
    if between is not None:
        query = query.where(EvaluationResult.sample_index >= between[0], EvaluationResult.sample_index < between[1])
    sample: str | None = None
    got: list[Any] = []  # Stored: the fields of a GraderResult that a verdict, a summary and a comparison read
    rows = run_rows.iter_result_rows(session, query, run_rows.VERDICT_COLUMNS + run_rows.CODE_COLUMNS if codes
                                     else run_rows.VERDICT_COLUMNS)
    for sample_id, evaluator_id, evaluator_name, status, score, reason, error_code, *rest in rows:
        if sample_id != sample:
            if sample is not None:
                yield judge_sample(sample, got)
            sample, got = sample_id, []
        if names is not None and evaluator_id not in names:
            names[evaluator_id] = evaluator_name
        status = _STATUSES[status]
        got.append(Stored(evaluator_id, status, score, reason, rest[0] if codes else None,
                           rest[1] if codes else None,
                           _ERRORS.get(error_code or "", ErrorCode.RUNTIME_ERROR) if status is Status.ERROR else None,
                           weights.get(evaluator_id, 1.0)))
    if sample is not None:
        yield judge_sample(sample, got)


_STATUSES = {s.value: s for s in Status}


@dataclass(slots=True)
class Stored:
    """A stored result as a summary and a comparison read it: the fields of a ``GraderResult``
    they use, without building one (a third of a comparison's time went into 30,000 of them)."""

    name: str
    status: Status
    score: float | None
    reason: str | None
    reason_code: str | None
    reason_args: dict[str, Any] | None
    error: ErrorCode | None
    weight: float
    type: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


Through = Callable[[Iterator[SampleVerdict]], Iterator[SampleVerdict]]
"""What the verdicts of a summary pass through on their way (``verdict_table.Writer.through``)."""


def summarise(session: Session, run_id: str, weights: dict[str, float], names: dict[str, str] | None = None,
              through: Through | None = None) -> dict[str, Any]:
    """The summary of run ``run_id``; ``weights`` maps evaluator id to its weight in the task
    (``names`` is filled as in ``run_verdicts``; ``through`` sees every verdict on its way).
    Pass rates leave errors and pending results out (``leftOut`` counts them); every rate and
    mean carries its 95% interval."""
    names = {} if names is None else names
    verdicts = run_verdicts(session, run_id, weights, names)
    return summary_of(_FlatRunning().add(verdicts if through is None else through(verdicts)), names)


def summary_of(running: RunningSummary, names: dict[str, str]) -> dict[str, Any]:
    """A run's summary as stored and answered, from the verdicts folded into ``running``."""
    s = running.summary()
    return {
        "samples": s.total, "samplesPassed": s.passed, "samplesFailed": s.failed, "samplesErrored": s.errors,
        "samplesPending": s.pending, "passRate": s.pass_rate, "meanScore": s.mean_score,
        "passRateCi": _pair(s.intervals.pass_rate), "meanScoreCi": _pair(s.intervals.mean_score),
        "leftOut": s.errors + s.pending,
        "evaluators": [_evaluator(g, names.get(g.name, g.name)) for g in s.graders],
    }


class LiveSummaries:
    """The summaries so far of the runs being graded, for their pages' live view, each kept
    up to date from the slices done since it was last read: a read costs the results graded
    since the one before, not the run's every result (a run of millions is read every few
    seconds by each open page). Samples of slices still being graded are not in it yet; the
    run's final summary (``summarise``) is exact. The samples of the slices being graded whose
    every evaluator's result is in are counted too, read afresh at each read (they are at most
    the slices in flight): the figures keep up with the progress bar, which counts results.
    One per server, holding a few numbers per
    run and evaluator (``_Sums``) and the ids of the slices folded in; ``keep`` runs at once
    (the least recently read is dropped, and a run is rebuilt from its done slices when read
    again)."""

    def __init__(self, keep: int = 16) -> None:
        self.keep = keep
        self._runs: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.Lock()

    def summary(self, session: Session, run_id: str, weights: dict[str, float]) -> dict[str, Any]:
        with self._lock:
            live = self._runs.get(run_id)
            if live is None:
                live = self._runs[run_id] = _Live()
            self._runs.move_to_end(run_id)
            while len(self._runs) > self.keep:
                self._runs.popitem(last=False)
        with live.lock:  # two pages of one run: one folds the new slices, the other waits for it
            new = sorted((start, stop, i) for i, start, stop in queue.done_slices(session, run_id)
                         if i not in live.folded)
            for start, stop in _ranges([(start, stop) for start, stop, _ in new]):
                live.running.add(run_verdicts(session, run_id, weights, live.names, between=(start, stop)))
            live.folded.update(i for _, _, i in new)
            running = live.running
            graders = len(weights)
            for start, stop in _ranges(queue.leased_slices(session, run_id)):
                partial = [v for v in run_verdicts(session, run_id, weights, live.names, between=(start, stop))
                           if len(v.results) >= graders]  # a sample whose every evaluator is graded
                if partial:
                    if running is live.running:
                        running = copy.deepcopy(live.running)  # (a few numbers per evaluator)
                    running.add(partial)
            return summary_of(running, live.names)

    def forget(self, run_id: str) -> None:
        """The run ended: its stored summary is read from now on."""
        with self._lock:
            self._runs.pop(run_id, None)


class _Sums(Outcomes):
    """Outcomes kept as the sums an unclustered interval reads (a service run has no
    clusters), not as 9 bytes per result: a summary of a run of millions, live or final, keeps
    a few numbers per evaluator. The intervals are ``core.intervals.of_arrays``' without
    clusters; only the order of the additions differs (a mean's last bits)."""

    __slots__ = ("n", "passes", "scored", "total", "squares")

    def __init__(self) -> None:
        super().__init__()
        self.n, self.passes, self.scored, self.total, self.squares = 0, 0, 0, 0.0, 0.0

    def __len__(self) -> int:
        return self.n

    def _add(self, passed: bool, score: float | None, cluster: int | None) -> None:
        self.n += 1
        self.passes += passed
        if score is not None and not math.isnan(score):  # of_arrays: a result without a score is out of the mean
            self.scored += 1
            self.total += score
            self.squares += score * score

    def intervals(self, pass_k: int | None = None) -> Intervals:
        return of_sums(self.n, float(self.passes), self.scored, self.total, self.squares)


class _FlatRunning(RunningSummary):
    """A ``RunningSummary`` whose outcomes are ``_Sums``: the engine's counting rules, in
    memory that does not grow with the run."""

    def _outcomes(self) -> Outcomes:
        return _Sums()


class _Live:
    def __init__(self) -> None:
        self.running: RunningSummary = _FlatRunning()
        self.names: dict[str, str] = {}
        self.folded: set[int] = set()
        self.lock = threading.Lock()


def _ranges(spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Sorted ``(start, stop)`` spans with the adjacent ones joined (one query for a stretch)."""
    first = last = None
    for start, stop in spans:
        if last is not None and start == last:
            last = stop
            continue
        if first is not None and last is not None:
            yield first, last
        first, last = start, stop
    if first is not None and last is not None:
        yield first, last


def _evaluator(g: GraderSummary, name: str) -> dict[str, Any]:
    return {"evaluatorId": g.name, "name": name, "passed": g.passed, "failed": g.failed, "error": g.errors,
            "pending": g.pending, "passRate": g.pass_rate, "meanScore": g.mean_score,
            "passRateCi": _pair(g.intervals.pass_rate), "meanScoreCi": _pair(g.intervals.mean_score),
            "leftOut": g.errors + g.pending}


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval else None


def compare(session: Session, base: tuple[str, dict[str, float]], new: tuple[str, dict[str, float]], *,
            adjust: str = "holm", alpha: float = 0.05) -> dict[str, Any]:
    """Run ``new`` against run ``base`` (each: run id, evaluator weights), as ``assay compare
    --json`` prints it (``schemas.compare`` makes it camelCase); each evaluator's entry names
    it by ``grader`` (its name) and ``evaluator_id``."""
    names: dict[str, str] = {}
    doc = compare_runs(run_verdicts(session, base[0], base[1], names, codes=True),
                       run_verdicts(session, new[0], new[1], names, codes=True), labels=names, adjust=adjust,
                       alpha=alpha).to_dict()
    return named(doc, names)


def named(doc: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A comparison's ``to_dict`` as the service answers it: each evaluator named (``names``:
    id -> name) beside its id, each flip's reasons' phrase codes beside their text."""
    for g in doc["graders"]:
        g["evaluator_id"], g["grader"] = g["grader"], names.get(g["grader"], g["grader"])
    for g in [*doc["graders"], doc["overall"]]:
        for flip in g["flips"]:  # each reason's phrase beside its text, for the page to say
            for side in ("base", "new"):
                flip[f"{side}_reason_code"], flip[f"{side}_reason_args"] = code_and_args(flip[f"{side}_reason"])
    return doc
