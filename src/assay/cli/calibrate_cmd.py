"""`assay calibrate`: a judge's results against human labels, printed as tables (or JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from assay.cli._console import make_console
from assay.runner import figures

ROC_ROWS = 25
"""ROC points shown in the table; --json has them all."""


def calibrate(results: Path, judge: str, *, labels: Path | None, suite: Path | None, min_labels: int,
              min_kappa: float, as_json: bool, record: bool) -> int:
    """Compare, print, record; exit 0 when the judge is calibrated, 1 when not (or stale)."""
    from assay.runner.labels import calibrate_results

    loaded = None
    if suite is not None:
        from assay.runner.suites.loader import load_suite

        loaded = load_suite(suite)
    report = calibrate_results(results, judge, labels=labels, suite=loaded, min_labels=min_labels,
                               min_kappa=min_kappa, record=record)
    if as_json:
        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    else:
        _print(report)
    return 0 if report["status"] == "calibrated" else 1


def _num(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _print(report: dict[str, Any]) -> None:
    from rich.table import Table

    console = make_console()
    title = (f"judge {report['judge']} ({report['type']}) against {report['labels']} human labels "
             f"from {report['labels_source']}")
    stats = Table(title=title, title_justify="left")
    stats.add_column("measure")
    stats.add_column("value", justify="right")
    conf = report["confusion"]
    best = report["best"]
    rows = [
        ("compared", str(report["n"])),
        ("left out: sample not in results", str(report["missing"])),
        ("left out: judge error or pending", str(report["unscored"])),
        ("agreement [95% CI]", figures.rate(report["agreement"], report.get("agreement_ci"))),
        ("Cohen's kappa", _num(report["kappa"])),
        ("true-positive rate (human pass)", figures.rate(report["tpr"], report.get("tpr_ci"))),
        ("true-negative rate (human fail)", figures.rate(report["tnr"], report.get("tnr_ci"))),
        ("confusion tp / fp / fn / tn", f"{conf['tp']} / {conf['fp']} / {conf['fn']} / {conf['tn']}"),
        ("mean |judge - human score|", _num(report["mean_abs_diff"])),
        ("judge's threshold", _num(report["judge_threshold"], "g")),
        ("best threshold (agreement)", "-" if best is None else f"{best['threshold']:g} ({best['agreement']:.1%})"),
    ]
    for name, value in rows:
        stats.add_row(name, value)
    console.print(stats)
    roc = report["roc"]
    if roc:
        table = Table(title="ROC: the judge passing scores >= threshold", title_justify="left")
        for col in ("threshold", "TPR", "FPR", "agreement", ""):
            table.add_column(col, justify="right" if col else "left")
        for point in roc[:ROC_ROWS]:
            mark = "◀ best" if best is not None and point["threshold"] == best["threshold"] else ""
            table.add_row(f"{point['threshold']:g}", _num(point["tpr"], ".1%"), _num(point["fpr"], ".1%"),
                          _num(point["agreement"], ".1%"), mark)
        console.print(table)
        if len(roc) > ROC_ROWS:
            console.print(f"... {len(roc) - ROC_ROWS} more points (--json has them all)", markup=False)
    console.print(f"status: {report['status']} ({report['reason']})", markup=False)
    for note in report["notes"]:
        console.print(f"note: {note}", markup=False)
