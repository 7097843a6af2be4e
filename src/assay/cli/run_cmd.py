"""`assay run`: parse the options, run the suite (``runner.job``), print what it found."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.result import Status
from assay.core.untrusted import cap_text, clean_text
from assay.runner import figures
from assay.runner.job import RunOptions, RunReport, run_suite_file
from assay.runner.resources import Defaults
from assay.runner.suites import Suite, load_suite

if TYPE_CHECKING:
    from rich.console import Console

    from assay.core.aggregate import SampleVerdict

PROGRESS_MIN_SAMPLES = 200
MAX_LISTED = 20


def execute(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
            threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
            summary_json: Path | None, quiet: bool, export: str | None = None,
            export_path: Path | None = None, dialect: str | None = None, no_cache: bool = False,
            engine: str = "local", waza_version: str | None = None, explain_dialect: bool = False,
            repeats: int | None = None, pass_k: int | None = None, baseline: Path | None = None,
            fail_on_regression: bool = False, alpha: float = 0.05) -> int:
    """Parse into ``RunOptions``, run (``runner.job``), print; the exit code."""
    if explain_dialect:
        explained = load_suite(suite_path, results=results, dialect=dialect, context=Defaults.context(),
                               waza_version=waza_version, explain=True)
        print("\n".join(explained.explain))
        return 0
    options = RunOptions(suite=suite_path, out=out, junit=junit, results=results, summary_json=summary_json,
                         export=export, export_path=export_path, threshold=threshold, cost_ordered=cost_ordered,
                         repeats=repeats, pass_k=pass_k, concurrency=concurrency, resume=resume, dialect=dialect,
                         waza_version=waza_version, no_cache=no_cache, engine=engine,
                         keep_verdicts=baseline is not None, count_judged=not quiet, max_problems=MAX_LISTED)
    show = not quiet and sys.stderr.isatty()
    report = run_suite_file(options, on_loaded=_print_warnings,
                            progress=lambda samples, to_grade: _progress(show and samples >= PROGRESS_MIN_SAMPLES,
                                                                         to_grade))
    code = _report(report, quiet=quiet)
    if baseline is None:
        return code
    from assay.cli.compare_cmd import against_baseline

    return against_baseline(baseline, report.verdicts or [], code, fail_on_regression=fail_on_regression, alpha=alpha)


def _report(report: RunReport, *, quiet: bool) -> int:
    """Print the summary; the exit code. With ``quiet`` only the closing line is printed,
    plainly: the console library is not even loaded (a sixth of a short preset run's start-up)."""
    suite, s = report.suite, report.summary
    if not quiet:
        from assay.cli._console import make_console
        from assay.runner.report import summary_table

        console = make_console()
        if suite.missing:
            console.print(f"not graded (no output found): {', '.join(suite.missing)}", markup=False)
        console.print(summary_table(s, f"{suite.name} ({suite.dialect}, {report.samples} samples)"))
        for v in report.problems[:MAX_LISTED]:
            _print_problem(console, v)
        if s.total - s.passed > MAX_LISTED:
            console.print(f"... and {s.total - s.passed - MAX_LISTED} more (see --out for every result)")
        if report.inconsistent:
            wavering = report.inconsistent
            shown = ", ".join(f"{w['sample']} {w['grader']} {w['passed']}/{w['attempts']}"
                              for w in wavering[:MAX_LISTED])
            console.print(f"inconsistent across attempts ({len(wavering)}): {shown}"
                          + (" ..." if len(wavering) > MAX_LISTED else ""), markup=False)
    mean = "-" if s.mean_score is None else f"{s.mean_score:.3f}"
    resumed = f", {report.resumed} resumed from the earlier run" if report.resumed else ""
    line = (f"{s.passed}/{s.total} passed, {s.failed} failed, {s.errors} errors, {s.pending} pending"
            f"{resumed}; mean score {mean}; pass rate {figures.rate(s.pass_rate, s.intervals.pass_rate)} "
            f"(95% CI{f'; {s.errors + s.pending} errors/pending left out' if s.errors + s.pending else ''}); "
            f"{report.duration_s:.2f}s")
    if suite.threshold is not None:
        line += f"; threshold {suite.threshold}"
    judged, cached = report.judged
    if judged and not quiet:
        console.print(f"judge results: {judged} ({cached} from the judge cache)", markup=False)
    print(line, flush=True)
    return report.exit_code


def _print_warnings(suite: Suite) -> None:
    """What the loader noticed (results matching no task, keys a peer dialect ignores), on
    stderr and even with --quiet: a dropped result must not pass unseen."""
    for warning in suite.warnings:
        print(f"warning: {cap_text(clean_text(warning), 2000)}", file=sys.stderr)


@contextmanager
def _progress(show: bool, total: int) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr, yielding the callback that advances it (None when hidden)."""
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("grading", total=total)
        yield lambda n: bar.advance(task, n)


def _print_problem(console: Console, v: SampleVerdict) -> None:
    score = "-" if v.score is None else f"{v.score:.3f}"
    console.print(f"[bold]{v.status.value.upper()}[/] {v.id} (score {score})")
    for r in v.results:
        if r.status is not Status.PASSED:
            code = f" [{r.error.value}]" if r.error else ""
            console.print(f"    {r.name}{code}: {r.reason or r.status.value}", markup=False)
    if v.skipped:
        console.print(f"    skipped: {', '.join(v.skipped)}", markup=False)
