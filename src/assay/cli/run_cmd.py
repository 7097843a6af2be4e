"""`assay run`: load, grade, report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from assay.core.result import Status
from assay.runner.report import JsonlSink, completed_ids, summary_table, write_junit
from assay.runner.run import run_suite
from assay.runner.suite import load_suite

PROGRESS_MIN_SAMPLES = 200
MAX_LISTED = 20


def execute(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
            threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
            summary_json: Path | None, quiet: bool, export: str | None = None,
            export_path: Path | None = None) -> int:
    from assay.cli._console import make_console

    console = make_console()
    suite = load_suite(suite_path, results=results)
    if threshold is not None:
        suite.threshold = threshold
    if cost_ordered is not None:
        suite.cost_ordered = cost_ordered
    done = completed_ids(out) if (resume and out is not None) else set()
    sink = JsonlSink(out, append=resume) if out is not None else None
    show_progress = not quiet and sys.stderr.isatty() and len(suite.samples) >= PROGRESS_MIN_SAMPLES
    try:
        with _progress(show_progress, len(suite.samples) - len(done)) as advance:
            result = run_suite(suite, concurrency=concurrency, done_ids=done, sink=sink, on_progress=advance,
                               chunk_size=_chunk(suite, concurrency))
    finally:
        if sink is not None:
            sink.close()
    if junit is not None:
        write_junit(junit, suite.name, result.verdicts, result.duration_s)
    if export is not None:
        _export(export, export_path or Path(f"results.{export}.json"), suite.name, result)
    s = result.summary
    if summary_json is not None:
        summary_json.write_bytes(orjson.dumps({"suite": suite.name, **s.to_dict(),
                                               "duration_s": result.duration_s}, option=orjson.OPT_INDENT_2))
    missing = suite.metadata.get("missing") if suite.metadata else None
    if missing and not quiet:
        console.print(f"not graded (no output found): {', '.join(map(str, missing))}", markup=False)
    if not quiet:
        console.print(summary_table(s, f"{suite.name} ({suite.format}, {len(suite.samples)} samples)"))
        problems = [v for v in result.verdicts if v.status is not Status.PASSED]
        for v in problems[:MAX_LISTED]:
            _print_problem(console, v)
        if len(problems) > MAX_LISTED:
            console.print(f"... and {len(problems) - MAX_LISTED} more (see --out for every result)")
    mean = "-" if s.mean_score is None else f"{s.mean_score:.3f}"
    resumed = f", {result.resumed} resumed" if result.resumed else ""
    line = (f"{s.passed}/{s.total} passed, {s.failed} failed, {s.errors} errors, {s.pending} pending"
            f"{resumed}; mean score {mean}; {result.duration_s:.2f}s")
    if suite.threshold is not None:
        line += f"; threshold {suite.threshold}"
    console.print(line)
    return 0 if s.all_passed else 1


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


def _export(tool: str, path: Path, name: str, result) -> None:
    from assay.runner import exports

    convert = exports.verdict_to_waza if tool == "waza" else exports.verdict_to_vally
    doc = {"name": name, "summary": result.summary.to_dict(), "samples": [convert(v) for v in result.verdicts]}
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2, default=str))


def _chunk(suite, concurrency: int) -> int:
    """Samples per chunk: large for pure graders (vectorised batches), small when a sandbox,
    program or LLM grader is involved, so progress and the results file advance steadily."""
    specs = list(suite.graders) + [s for extra in suite.sample_graders.values() for s in extra]
    if any(spec.grader_cls.io_bound for spec in specs):
        return max(16, concurrency * 4)
    return 1000


def _print_problem(console, v) -> None:
    score = "-" if v.score is None else f"{v.score:.3f}"
    console.print(f"[bold]{v.status.value.upper()}[/] {v.id} (score {score})")
    for r in v.results:
        if r.status is not Status.PASSED:
            code = f" [{r.error.value}]" if r.error else ""
            console.print(f"    {r.name}{code}: {r.reason or r.status.value}", markup=False)
    if v.skipped:
        console.print(f"    skipped: {', '.join(v.skipped)}", markup=False)
