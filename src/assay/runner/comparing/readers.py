"""The formats a run is read from for a comparison, and how each is read.

A format is a ``RunFormat``: a test of whether a file is in it (``claims``) and a function
that yields the run's graded samples in order (``verdicts``). That is all a new format needs;
``FORMATS`` lists them, the first whose ``claims`` says yes reads the file, assay's own JSON
lines last, as the fallback that names what is wrong with a file no format claims.

A comparison reads each run twice: once for the figures (``outcomes``: what each grader
decided, nothing else) and once for the text of the few samples it lists (``texts_at``: the
flipped and the unpaired, by position). A format may give a faster ``outcomes`` (assay's
own lines skip building a ``GraderResult`` per result, which is most of the cost of a
million-line file); by default both come from ``verdicts``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from assay.core.aggregate import SampleVerdict
from assay.core.compare import OVERALL, Reasoned, grader_reason, overall_reason
from assay.core.result import Status
from assay.runner.files import open_regular
from assay.runner.results import CONFIGS_KEY, ResultsLog, iter_rows, verdict_from_row
from assay.runner.reviews import apply_reviews, load_reviews

PASSED, REASONED, FAILED, LEFT_OUT = 0, 1, 2, 3
"""What a result counts as: passed, failed with a reason to show (the first such failure of a
sample is the one shown), failed without one, or left out (an error or a pending review)."""
NAN = float("nan")


class Outcome(NamedTuple):
    """One graded sample as a comparison counts it: its verdict, then each result."""

    id: str
    cluster: str | None
    graders: tuple[str, ...]
    """The results' grader names, in order."""
    codes: list[int]
    """The verdict's code, then each result's (``PASSED`` ... ``LEFT_OUT``)."""
    scores: list[float]
    """The verdict's score, then each result's; NaN for none."""
    configs: dict[str, str] | None = None
    """Each grader's fingerprint (its type and config) where the run recorded them."""


def _code(status: Status, reasoned: bool) -> int:
    if status is Status.PASSED:
        return PASSED
    if status is Status.FAILED:
        return REASONED if reasoned else FAILED
    return LEFT_OUT


def outcome_of(v: SampleVerdict) -> Outcome:
    """The outcome of a verdict (what every format gets by default)."""
    statuses = [Status(r.status) for r in v.results]
    codes = [_code(v.status, any(s is not Status.PASSED for s in statuses))]
    codes += [_code(s, r.reason is not None) for s, r in zip(statuses, v.results, strict=True)]
    scores = [NAN if x is None else x for x in [v.score, *(r.score for r in v.results)]]
    return Outcome(v.id, v.cluster, tuple(r.name for r in v.results), codes, scores)


@dataclass(frozen=True, slots=True)
class RunFormat:
    name: str
    claims: Callable[[Path], bool]
    """Whether the file is in this format (reading as little of it as it can)."""
    verdicts: Callable[[Path], Iterator[SampleVerdict]]
    """The run's graded samples in order; a SpecError naming the file (and line) when damaged."""
    fast_outcomes: Callable[[Path], Iterator[Outcome]] | None = None
    fast_texts_at: Callable[[Path, Container[int]], Iterator[Texts]] | None = None

    def outcomes(self, path: Path) -> Iterator[Outcome]:
        if self.fast_outcomes is not None:
            return self.fast_outcomes(path)
        return (outcome_of(v) for v in self.verdicts(path))

    def texts_at(self, path: Path, positions: Container[int]) -> Iterator[Texts]:
        """What the samples at ``positions`` (their places in the run, from 0) say."""
        if self.fast_texts_at is not None:
            return self.fast_texts_at(path, positions)
        return (texts_of(i, v.cluster or v.id, v.results) for i, v in enumerate(self.verdicts(path))
                if i in positions)


class Texts(NamedTuple):
    """What a listed sample says: its key (cluster, else id) and the reasons shown beside a
    flip, by grader name (``OVERALL``: the verdict's)."""

    position: int
    key: str
    reasons: dict[str, str]


def texts_of(position: int, key: str, results: Sequence[Reasoned]) -> Texts:
    failed = {r.name for r in results if r.status is Status.FAILED}
    reasons = {name: str(said) for name in failed if (said := grader_reason(results, name)) is not None}
    overall = overall_reason(results, {})
    if overall is not None:
        reasons[OVERALL] = str(overall)
    return Texts(position, key, reasons)


def format_of(path: Path) -> RunFormat:
    """The format that reads ``path`` (assay's JSON lines when no other claims it)."""
    open_regular(path, what="results file").close()  # a clear error for a missing or special file
    return next(f for f in FORMATS if f.claims(path))


# assay's own results: JSON lines (`assay run --out`), reviews from the sidecar applied.

def _reviewed(path: Path) -> Callable[[SampleVerdict], SampleVerdict]:
    reviews = load_reviews(path)
    if not reviews:
        return lambda v: v
    ids = {r.sample_id for r in reviews}
    return lambda v: apply_reviews([v], reviews)[0] if v.id in ids else v


def _jsonl_verdicts(path: Path) -> Iterator[SampleVerdict]:
    review = _reviewed(path)
    for n, _, row in iter_rows(ResultsLog(path)):
        yield review(verdict_from_row(row, f"{path}:{n}"))


class _Light(NamedTuple):
    name: str
    status: Status
    reason: str | None
    reason_code: str | None = None
    reason_args: dict[str, Any] | None = None


def _jsonl_texts_at(path: Path, positions: Container[int]) -> Iterator[Texts]:
    """The texts of a line come from its row (results files hold no reason codes; the first
    pass checked every line), those of a reviewed sample from its verdict, as the first pass
    read them."""
    review = _reviewed(path)
    reviewed = {r.sample_id for r in load_reviews(path)}
    for n, position, row in iter_rows(ResultsLog(path), positions.__contains__):
        if row["id"] not in reviewed:
            results = [_Light(r["name"], _STATUS[r["status"]], r.get("reason"), r.get("reason_code"),
                              r.get("reason_args")) for r in row["results"]]
            yield texts_of(position, row.get("cluster") or row["id"], results)
        else:
            v = review(verdict_from_row(row, f"{path}:{n}"))
            yield texts_of(position, v.cluster or v.id, v.results)


def _jsonl_outcomes(path: Path) -> Iterator[Outcome]:
    reviews = load_reviews(path)
    reviewed = {r.sample_id for r in reviews}
    for n, _, row in iter_rows(ResultsLog(path)):
        got = _quick(row) if not reviewed else None
        if got is None:
            v = verdict_from_row(row, f"{path}:{n}")
            configs = row.get(CONFIGS_KEY)
            got = outcome_of(apply_reviews([v], reviews)[0] if v.id in reviewed else v)._replace(
                configs=configs if isinstance(configs, dict) and all(isinstance(c, str) for c in configs.values())
                else None)
        yield got


_CODES = {"passed": PASSED, "failed": FAILED, "error": LEFT_OUT, "pending": LEFT_OUT}
_STATUS = {s.value: s for s in Status}


def _quick(row: Any) -> Outcome | None:
    """The outcome of a well-formed results line without building its results; None for
    anything unusual (then ``verdict_from_row`` reads it, and names what is wrong)."""
    try:
        sample_id, cluster, verdict, overall = row["id"], row.get("cluster"), _CODES[row["status"]], row.get("score")
        names, codes, scores = [], [verdict], [NAN if overall is None else overall]
        for r in row["results"]:
            code, score = _CODES[r["status"]], r.get("score")
            if (type(r["name"]) is not str or type(r["type"]) is not str or type(r["passed"]) is not bool
                    or not (score is None or type(score) is float and 0.0 <= score <= 1.0)):
                return None
            names.append(r["name"])
            codes.append(REASONED if code == FAILED and r.get("reason") is not None else code)
            scores.append(NAN if score is None else score)
    except (KeyError, TypeError, AttributeError):
        return None
    if (type(sample_id) is not str or not sample_id or not (cluster is None or type(cluster) is str)
            or not (overall is None or type(overall) is float) or not isinstance(row.get("skipped", []), list)):
        return None
    if verdict == FAILED and any(c != PASSED for c in codes[1:]):
        codes[0] = REASONED
    configs = row.get(CONFIGS_KEY)
    if configs is not None and not (type(configs) is dict and all(type(v) is str for v in configs.values())):
        return None
    return Outcome(sample_id, cluster, tuple(names), codes, scores, configs)


# An export of assay's verdicts as one JSON document, under `samples` or `verdicts`.

def _is_document(path: Path) -> bool:
    """A JSON document rather than JSON lines: its first line is not a whole JSON object (a
    document written with indentation), or is one holding a list of samples."""
    with open_regular(path, what="results file") as fh:
        first = fh.readline()
    if first[:1] != b"{":
        return False
    try:
        row = orjson.loads(first)
    except orjson.JSONDecodeError:
        return True
    return isinstance(row, dict) and (isinstance(row.get("samples"), list) or isinstance(row.get("verdicts"), list))


def _document_verdicts(path: Path) -> Iterator[SampleVerdict]:
    with open_regular(path, what="results file") as fh:
        try:
            doc = orjson.loads(fh.read())
        except orjson.JSONDecodeError:
            doc = None
    rows = doc.get("samples") or doc.get("verdicts") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return _jsonl_verdicts(path)  # JSON lines after all, whose reading names the damaged line
    review = _reviewed(path)
    return (review(verdict_from_row(row, f"{path}: samples[{i}]")) for i, row in enumerate(rows))


DOCUMENT = RunFormat("assay document", _is_document, _document_verdicts)
JSONL = RunFormat("assay", lambda path: True, _jsonl_verdicts, _jsonl_outcomes, _jsonl_texts_at)

FORMATS: tuple[RunFormat, ...] = (DOCUMENT, JSONL)
"""Tried in order: the first whose ``claims`` says yes reads the file; JSONL claims every file."""
