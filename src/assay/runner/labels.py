"""Human labels for calibrating a judge, and the calibration records kept beside a results file.

Labels come from the reviews sidecar of a results file (``human_calibration`` reviews aimed
at the judge, else ``human`` reviews) or from a labels file: JSON lines
``{"sample_id": ..., "passed": true|false, "score": 0.8}`` (``score`` optional; ``comment`` and
``reviewer`` allowed and ignored).

``calibrate_results`` compares a judge's results in a results file with the labels
(``runner.calibration``) and records the outcome, with the judge's spec fingerprint, in
``results.calibration.json`` so that ``assay report`` can show it and a later calibration can
tell when the judge changed (``stale``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.core.result import GraderResult, Status
from assay.runner.calibration import (
    DEFAULT_MIN_KAPPA,
    DEFAULT_MIN_LABELS,
    Pair,
    calibration_status,
    compare,
    judge_fingerprint,
)
from assay.runner.files import open_regular
from assay.runner.results import read_results, suite_fingerprint
from assay.runner.reviews import Review, load_reviews, load_verdicts, reviews_path

_LABEL_KEYS = {"sample_id", "passed", "score", "comment", "reviewer"}


@dataclass(frozen=True, slots=True)
class Label:
    """A person's verdict on one sample."""

    sample_id: str
    passed: bool
    score: float | None = None


def read_labels(path: str | Path) -> list[Label]:
    """Labels from a JSON-lines file; SpecError naming ``file:line`` for a bad or repeated one."""
    with open_regular(Path(path), what="labels file") as fh:
        data = fh.read()
    out: list[Label] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"not JSON ({exc})", where=where) from None
        label = _label(row, where)
        if label.sample_id in seen:
            raise SpecError(f"sample {label.sample_id!r} is labelled twice (first on line {seen[label.sample_id]})",
                            where=where)
        seen[label.sample_id] = n
        out.append(label)
    return out


def _label(row: Any, where: str) -> Label:
    if not isinstance(row, dict):
        raise SpecError(f"a label must be an object {{sample_id, passed, score?}}, got {type(row).__name__}",
                        where=where)
    unknown = sorted(set(row) - _LABEL_KEYS)
    if unknown:
        raise SpecError(f"unknown field {unknown[0]!r}; a label has sample_id, passed and optionally score",
                        where=where)
    sid, passed, score = row.get("sample_id"), row.get("passed"), row.get("score")
    if not isinstance(sid, str) or not sid:
        raise SpecError("`sample_id` must be non-empty text", where=where)
    if not isinstance(passed, bool):
        raise SpecError(f"`passed` must be true or false, got {passed!r}", where=where)
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                              or not 0.0 <= score <= 1.0):
        raise SpecError(f"`score` must be a number between 0 and 1, got {score!r}", where=where)
    return Label(sid, passed, None if score is None else float(score))


def review_labels(verdicts: Sequence[SampleVerdict], reviews: Sequence[Review], judge: str) -> list[Label]:
    """Labels for ``judge`` from reviews: those of ``human_calibration`` graders calibrating
    it, or, when there are none, of ``human`` graders. The latest review of a sample wins."""
    aimed: set[str] = set()
    plain: set[str] = set()
    for v in verdicts:
        for r in v.results:
            if r.type == "human_calibration" and r.details.get("calibrate_grader") == judge:
                aimed.add(r.name)
            elif r.type == "human":
                plain.add(r.name)
    graders = aimed or plain
    latest: dict[str, Label] = {}
    for rv in reviews:
        if rv.grader in graders:
            latest[rv.sample_id] = Label(rv.sample_id, rv.passed, rv.score)
    return list(latest.values())


def pair_up(verdicts: Sequence[SampleVerdict], labels: Sequence[Label],
            judge: str) -> tuple[list[Pair], dict[str, int]]:
    """The (judge, label) pairs, and what was left out: labels of samples not in the results
    (``missing``) or whose judge result is an error or pending (``unscored``)."""
    results: dict[str, GraderResult] = {}
    for v in verdicts:
        for r in v.results:
            if r.name == judge:
                results[v.id] = r
    if not results:
        names = sorted({r.name for v in verdicts for r in v.results})
        raise SpecError(f"no grader named {judge!r} in the results (graders: {', '.join(names) or 'none'})")
    pairs: list[Pair] = []
    left = {"missing": 0, "unscored": 0}
    for label in labels:
        found = results.get(label.sample_id)
        if found is None:
            left["missing"] += 1
        elif not found.scored:
            left["unscored"] += 1
        else:
            pairs.append(Pair(label.sample_id, found.status is Status.PASSED, found.score, label.passed, label.score))
    return pairs, left


def records_path(results_path: str | Path) -> Path:
    """The calibration records of ``results_path`` (``results.jsonl`` → ``results.calibration.json``)."""
    p = Path(results_path)
    return p.with_name(p.stem + ".calibration.json")


def load_records(results_path: str | Path) -> dict[str, dict[str, Any]]:
    """Calibration records by judge name; {} when there are none."""
    path = records_path(results_path)
    if not path.exists():
        return {}
    with open_regular(path, what="calibration record") as fh:
        try:
            doc = orjson.loads(fh.read())
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"damaged calibration record ({exc}); delete it and calibrate again",
                            where=str(path)) from None
    judges = doc.get("judges") if isinstance(doc, dict) else None
    if not isinstance(judges, dict):
        raise SpecError("a calibration record holds {\"judges\": {...}}", where=str(path))
    return {k: v for k, v in judges.items() if isinstance(v, dict)}


def save_record(results_path: str | Path, record: dict[str, Any]) -> None:
    """Store ``record`` under its judge's name, replacing the previous one (written whole, then
    renamed into place, so a reader never sees half a file)."""
    records = load_records(results_path)
    records[record["judge"]] = record
    path = records_path(results_path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps({"judges": records}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    os.replace(tmp, path)


def calibrate_results(results: Path, judge: str, *, labels: Path | None = None, suite: Any = None,
                      min_labels: int = DEFAULT_MIN_LABELS, min_kappa: float = DEFAULT_MIN_KAPPA,
                      record: bool = True) -> dict[str, Any]:
    """Compare ``judge``'s results in ``results`` with human labels (``labels``, or the
    reviews sidecar) and return the report ``assay calibrate`` prints.

    ``suite`` (a loaded ``Suite``) gives the judge's spec as it is now. The labels were
    compared with the judge that wrote ``results``: its fingerprint is the suite's when the
    results were written by this very suite, or the one recorded by an earlier calibration of
    the same results; the status is ``stale`` when that differs from the current one.
    """
    verdicts = load_verdicts(results)
    if labels is not None:
        found, source = read_labels(labels), str(labels)
    else:
        found, source = review_labels(verdicts, load_reviews(results), judge), str(reviews_path(results))
    pairs, left = pair_up(verdicts, found, judge)
    comparison = compare(pairs)
    run_fps = sorted(fp for fp in _run_fingerprints(results) if fp)
    previous = load_records(results).get(judge)
    current = compared_with = None
    threshold = _judge_threshold(verdicts, judge)
    if suite is not None:
        spec = next((s for s in suite.all_graders() if s.name == judge), None)
        if spec is None:
            raise SpecError(f"the suite has no grader named {judge!r}")
        current = judge_fingerprint(spec)
        if suite_fingerprint(suite) in run_fps:  # this very suite wrote the results
            compared_with = current
            if threshold is None and isinstance(getattr(spec.config, "threshold", None), (int, float)):
                threshold = float(spec.config.threshold)
    if compared_with is None and previous is not None and previous.get("run_fingerprints") == run_fps:
        compared_with = previous.get("fingerprint")
    notes = []
    if suite is None:
        notes.append("give the suite (--suite) to check whether the judge changed since these labels were compared")
    elif compared_with is None:
        notes.append("the suite changed since the results were written and no earlier calibration of them "
                     "recorded the judge's spec: re-run the suite to know whether the judge changed")
    status, why = calibration_status(comparison, min_labels=min_labels, min_kappa=min_kappa,
                                     compared_with=compared_with, current=current)
    judge_type = next((r.type for v in verdicts for r in v.results if r.name == judge), None)
    report = {"judge": judge, "type": judge_type, "results": str(results), "labels_source": source,
              "labels": len(found), **left, **comparison.to_dict(), "status": status, "reason": why, "notes": notes,
              "min_labels": min_labels, "min_kappa": min_kappa, "fingerprint": compared_with, "current": current,
              "run_fingerprints": run_fps, "judge_threshold": threshold,
              "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if record:
        save_record(results, {k: v for k, v in report.items() if k != "roc"})
    return report


def _run_fingerprints(results: Path) -> set[str | None]:
    try:
        return read_results(results).fingerprints
    except SpecError:  # a JSON export rather than JSON lines: it carries no fingerprints
        return set()


def _judge_threshold(verdicts: Sequence[SampleVerdict], judge: str) -> float | None:
    """The pass mark the judge used, when its results say (judges put it in ``details.threshold``)."""
    for v in verdicts:
        for r in v.results:
            if r.name == judge and isinstance(r.details.get("threshold"), (int, float)):
                return float(r.details["threshold"])
    return None


def judge_calibrations(results_path: str | Path, summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per judge with labels, for ``assay report``: from each ``human_calibration``
    summary (``summary``, computed now) and each calibration record of ``results_path``
    (as recorded; marked when the results have been rewritten since)."""
    rows = [{"judge": s["grader"], "source": f"human_calibration {name}", "compared": s["compared"],
             "agreement": s["agreement_rate"], "kappa": s["cohen_kappa"], "status": s["status"],
             "reason": s["reason"]} for name, s in summary.items()]
    records = load_records(results_path)
    now = sorted(fp for fp in _run_fingerprints(Path(results_path)) if fp) if records else []
    for name, rec in sorted(records.items()):
        reason = str(rec.get("reason", ""))
        if rec.get("run_fingerprints") != now:
            reason += f" (recorded {rec.get('at', '?')} on an earlier run of these results)"
        rows.append({"judge": name, "source": str(rec.get("labels_source", "?")), "compared": rec.get("n", 0),
                     "agreement": rec.get("agreement"), "kappa": rec.get("kappa"),
                     "status": str(rec.get("status", "?")), "reason": reason})
    return rows
