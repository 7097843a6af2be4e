"""Human reviews of ``human`` and ``human_calibration`` results.

Reviews live in an append-only sidecar beside a results file (``results.jsonl`` →
``results.reviews.jsonl``); the results file is never rewritten. Reports apply the reviews
on load: ``apply_reviews`` turns pending human results into passed/failed ones carrying the
reviewer's score and re-judges each reviewed sample, so suite summaries recompute. When a
sample is reviewed twice for the same grader, the later review wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from assay.core import registry
from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.errors import SpecError
from assay.core.result import GraderResult, Status
from assay.core.untrusted import clean_json
from assay.runner.calibration import DEFAULT_MIN_KAPPA, DEFAULT_MIN_LABELS, Pair, calibration_status, compare
from assay.runner.files import open_regular
from assay.runner.foreign import read_foreign
from assay.runner.results import read_results, verdict_from_row


def reviewable(grader_type: str) -> bool:
    """True when results of ``grader_type`` wait for a person's review (its traits say so)."""
    cls = registry.get(grader_type)
    return cls is not None and cls.traits.reviewable


@dataclass(frozen=True, slots=True)
class Review:
    sample_id: str
    grader: str
    passed: bool
    score: float
    comment: str | None = None
    reviewer: str | None = None
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reviews_path(results_path: str | Path) -> Path:
    """The sidecar that holds reviews of ``results_path``."""
    p = Path(results_path)
    return p.with_name(p.stem + ".reviews.jsonl")


def load_verdicts(results_path: str | Path) -> list[SampleVerdict]:
    """Sample verdicts from a results file: the JSON lines ``assay run --out`` writes (read
    strictly, see ``runner.results``), one JSON document holding them under ``samples``
    or ``verdicts`` (an export), or a run another tool wrote (promptfoo, Inspect AI:
    ``runner.foreign``)."""
    path = Path(results_path)
    if (foreign := read_foreign(path)) is not None:  # promptfoo's and Inspect AI's runs (runner.foreign)
        return foreign
    log = _document(path)
    return log if log is not None else read_results(path).verdicts


def _document(path: Path) -> list[SampleVerdict] | None:
    """Verdicts of a results file written as one JSON document, or None for JSON lines."""
    with open_regular(path, what="results file") as fh:
        head = fh.read(1)
        if head != b"{":
            return None
        try:
            doc = orjson.loads(head + fh.read())
        except orjson.JSONDecodeError:
            return None
    rows = doc.get("samples") or doc.get("verdicts") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return None
    return [verdict_from_row(row, f"{path}: samples[{i}]") for i, row in enumerate(rows)]


def submit_review(results_path: str | Path, sample_id: str, grader_name: str, passed: bool,
                  score: float | None = None, comment: str | None = None,
                  reviewer: str | None = None) -> Review:
    """Record a review of ``grader_name`` on ``sample_id`` and return it.

    The sample must exist in the results file and the grader must be a ``human`` or
    ``human_calibration`` grader there; otherwise SpecError says what exists. ``score``
    defaults to 1.0 when passed, else 0.0.
    """
    if score is None:
        score = 1.0 if passed else 0.0
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
        raise SpecError(f"score must be a number between 0 and 1, got {score!r}")
    verdicts = {v.id: v for v in load_verdicts(results_path)}
    verdict = verdicts.get(str(sample_id))
    if verdict is None:
        known = ", ".join(list(verdicts)[:10])
        raise SpecError(f"no sample {sample_id!r} in {results_path} (samples: {known or 'none'})")
    human = [r.name for r in verdict.results if reviewable(r.type)]
    if grader_name not in human:
        hint = f"human graders on this sample: {', '.join(human)}" if human else "it has no human graders"
        raise SpecError(f"sample {sample_id!r} has no human grader {grader_name!r} ({hint})")
    review = Review(str(sample_id), grader_name, bool(passed), float(score), comment, reviewer,
                    datetime.now(timezone.utc).isoformat(timespec="seconds"))
    line = orjson.dumps(clean_json(review.to_dict())).decode() + "\n"
    with open(reviews_path(results_path), "a", encoding="utf-8") as fh:
        fh.write(line)  # one write per line: concurrent reviewers do not interleave
    return review


def load_reviews(results_path: str | Path) -> list[Review]:
    """Reviews recorded for ``results_path``, oldest first; [] when there are none."""
    path = reviews_path(results_path)
    if not path.exists():
        return []
    with open_regular(path, what="reviews file") as fh:
        data = fh.read()
    out = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(_review(orjson.loads(line)))
        except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise SpecError(f"unreadable review: {exc}", where=f"{path}:{n}") from None
    return out


def _review(row: Any) -> Review:
    if not isinstance(row, dict):
        raise TypeError(f"a review must be an object, got {type(row).__name__}")
    review = Review(**row)
    texts = (review.sample_id, review.grader, review.created_at)
    if not all(isinstance(t, str) for t in texts) or not isinstance(review.passed, bool):
        raise TypeError("sample_id, grader and created_at must be text and passed a boolean")
    if any(v is not None and not isinstance(v, str) for v in (review.comment, review.reviewer)):
        raise TypeError("comment and reviewer must be text or null")
    score = review.score
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be a number between 0 and 1, got {score!r}")
    return review


def apply_reviews(verdicts: Sequence[SampleVerdict], reviews: Iterable[Review], *,
                  threshold: float | None = None, errors_as_zero: bool = False) -> list[SampleVerdict]:
    """Verdicts with reviews applied; reviewed samples are re-judged under ``threshold``."""
    latest: dict[tuple[str, str], Review] = {}
    for given in reviews:
        latest[(given.sample_id, given.grader)] = given
    out = []
    for v in verdicts:
        changed = False
        results = []
        for r in v.results:
            review = latest.get((v.id, r.name)) if reviewable(r.type) else None
            if review is not None:
                r = _reviewed(r, review, v.results)
                changed = True
            results.append(r)
        out.append(judge_sample(v.id, results, threshold=threshold, errors_as_zero=errors_as_zero)
                   if changed else v)
    return out


def _reviewed(result: GraderResult, review: Review, siblings: list[GraderResult]) -> GraderResult:
    details = dict(result.details)
    details["review"] = {"reviewer": review.reviewer, "comment": review.comment, "at": review.created_at}
    if result.type == "human_calibration":
        details["calibration"] = _compare(details.get("calibrate_grader"), review, siblings)
    reason = review.comment or (f"reviewed by {review.reviewer}" if review.reviewer else "human review")
    data = result.model_dump()
    data.update(status=Status.PASSED if review.passed else Status.FAILED, passed=review.passed,
                score=review.score, reason=reason, details=details, error=None)
    return GraderResult.model_validate(data)


def _compare(target: str | None, review: Review, siblings: list[GraderResult]) -> dict[str, Any]:
    other = next((s for s in siblings if s.name == target), None)
    row: dict[str, Any] = {"grader": target, "human_passed": review.passed, "human_score": review.score}
    if other is None or not other.scored:
        row.update(compared=False, grader_status=other.status.value if other else "missing")
        return row
    row.update(compared=True, grader_passed=other.passed, grader_score=other.score,
               agree=other.passed == review.passed, abs_diff=abs((other.score or 0.0) - review.score))
    return row


def calibration_summary(verdicts: Sequence[SampleVerdict], *, min_labels: int = DEFAULT_MIN_LABELS,
                        min_kappa: float = DEFAULT_MIN_KAPPA) -> dict[str, dict[str, Any]]:
    """Per ``human_calibration`` grader: how well the calibrated grader agrees with people
    (``runner.calibration.compare`` over the labelled samples where it scored).

    ``agreement_rate`` is the share of compared samples where both said pass or both said
    fail; ``cohen_kappa`` corrects it for chance (None when undefined); ``tpr`` / ``tnr`` the
    judge's rates on human passes / fails; ``mean_abs_diff`` the mean |grader score - human
    score|; ``confusion`` counts pass/fail pairs (``tp``: both pass, ``fp``: grader pass /
    human fail, ...); ``best_threshold`` the grader score that would agree most; ``status``
    ``calibrated`` or ``uncalibrated`` (``min_labels``, ``min_kappa``) with its ``reason``.
    """
    rows: dict[str, list[Pair]] = {}
    targets: dict[str, Any] = {}
    labelled: dict[str, int] = {}
    for v in verdicts:
        for r in v.results:
            if r.type != "human_calibration":
                continue
            cal = r.details.get("calibration")
            rows.setdefault(r.name, [])
            targets.setdefault(r.name, r.details.get("calibrate_grader"))
            if cal is not None:
                labelled[r.name] = labelled.get(r.name, 0) + 1
                if cal.get("compared"):
                    rows[r.name].append(Pair(v.id, bool(cal["grader_passed"]), cal.get("grader_score"),
                                             bool(cal["human_passed"]), cal.get("human_score")))
    out = {}
    for name, pairs in rows.items():
        cmp = compare(pairs)
        status, why = calibration_status(cmp, min_labels=min_labels, min_kappa=min_kappa)
        out[name] = {"grader": targets[name], "labelled": labelled.get(name, 0), "compared": cmp.n,
                     "agreement_rate": cmp.agreement, "cohen_kappa": cmp.kappa, "tpr": cmp.tpr, "tnr": cmp.tnr,
                     "mean_abs_diff": cmp.mean_abs_diff, "confusion": cmp.confusion,
                     "best_threshold": cmp.best.threshold if cmp.best else None,
                     "status": status, "reason": why}
    return out
