"""`assay review` and `assay report`: human verdicts recorded beside a results file, and the
report recomputed from that file with the reviews applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from assay.cli._console import make_console
from assay.core.aggregate import summarize
from assay.core.result import Status
from assay.runner.labels import judge_calibrations
from assay.runner.reviews import apply_reviews, calibration_summary, load_reviews, load_verdicts, submit_review


def review(results: Path, sample_id: str, grader: str, passed: bool, score: float | None,
           comment: str | None, reviewer: str | None, threshold: float | None) -> int:
    rv = submit_review(results, sample_id, grader, passed, score=score, comment=comment, reviewer=reviewer)
    make_console().print(
        f"recorded: {rv.grader} on {rv.sample_id} {'passed' if rv.passed else 'failed'} (score {rv.score:g})",
        markup=False)
    return report(results, threshold=threshold, junit=None, as_json=False)


def report(results: Path, *, threshold: float | None, junit: Path | None, as_json: bool) -> int:
    """Recompute the summary of a results file, reviews applied; exit 0 when all samples pass."""
    from assay.runner.report import summary_table, write_junit

    verdicts = apply_reviews(load_verdicts(results), load_reviews(results), threshold=threshold)
    summary = summarize(verdicts)
    calibration = calibration_summary(verdicts)
    judges = judge_calibrations(results, calibration)
    if junit is not None:
        write_junit(junit, results.stem, verdicts, 0.0, summary=summary)
    if as_json:
        doc = {**summary.to_dict(), "calibration": calibration, "judges": judges}
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        console = make_console()
        console.print(summary_table(summary, f"{results} ({len(verdicts)} samples, reviews applied)"))
        if judges:
            console.print(_judges_table(judges))
        pending = [v.id for v in verdicts if v.status is Status.PENDING]
        if pending:
            console.print(f"awaiting review: {', '.join(pending[:20])}" + (" ..." if len(pending) > 20 else ""),
                          markup=False)
        console.print(f"{summary.passed}/{summary.total} passed, {summary.failed} failed, "
                      f"{summary.errors} errors, {summary.pending} pending", markup=False)
    return 0 if summary.all_passed else 1


def _judges_table(rows: list[dict[str, Any]]) -> Any:
    """Each judge that has human labels, with its calibration status."""
    from rich.table import Table

    table = Table(title="judges against human labels", title_justify="left")
    for col in ("judge", "labels from", "compared", "agreement", "kappa", "status", "why"):
        table.add_column(col, justify="right" if col in ("compared", "agreement", "kappa") else "left")
    for r in rows:
        agreement = "-" if r["agreement"] is None else f"{r['agreement']:.1%}"
        kappa = "-" if r["kappa"] is None else f"{r['kappa']:.3f}"
        table.add_row(str(r["judge"]), r["source"], str(r["compared"]), agreement, kappa, r["status"], r["reason"])
    return table
