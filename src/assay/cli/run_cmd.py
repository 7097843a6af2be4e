"""`assay run`: load, grade, report."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from assay.core.errors import AssayError
from assay.core.interfaces import Resources
from assay.core.result import Status
from assay.core.summary import SuiteSummary
from assay.core.untrusted import cap_text, clean_text
from assay.runner import figures
from assay.runner.files import check_outputs, json_bytes, write_output
from assay.runner.ids import IdIndex
from assay.runner.repeats import run_attempts, sample_ids
from assay.runner.resources import Defaults, build_resources
from assay.runner.results import JsonlSink, suite_fingerprint
from assay.runner.reviews import load_reviews
from assay.runner.sizing import batch_sizes
from assay.runner.stream import DatasetStream, Previous, read_previous
from assay.runner.suites import Suite, load_suite
from assay.runner.suites.streamed import open_streamed
from assay.runner.tally import RunTally

if TYPE_CHECKING:
    from rich.console import Console

    from assay.core.aggregate import SampleVerdict

PROGRESS_MIN_SAMPLES = 200
MAX_LISTED = 20
STREAMED = frozenset({".jsonl", ".ndjson", ".csv", ".tsv", ".json", ".parquet"})
"""Dataset formats the local engine reads as it grades (every one it reads)."""


def execute(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
            threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
            summary_json: Path | None, quiet: bool, export: str | None = None,
            export_path: Path | None = None, dialect: str | None = None, no_cache: bool = False,
            engine: str = "local", waza_version: str | None = None, explain_dialect: bool = False,
            repeats: int | None = None, baseline: Path | None = None, fail_on_regression: bool = False,
            alpha: float = 0.05) -> int:
    if explain_dialect:
        explained = load_suite(suite_path, results=results, dialect=dialect, context=Defaults.context(),
                               waza_version=waza_version, explain=True)
        print("\n".join(explained.explain))
        return 0
    if engine == "ray":
        from assay.cli.run_ray import execute_ray

        return execute_ray(suite_path, out=out, junit=junit, results=results, threshold=threshold,
                           concurrency=concurrency, resume=resume, cost_ordered=cost_ordered,
                           summary_json=summary_json, quiet=quiet, export=export, export_path=export_path,
                           dialect=dialect, no_cache=no_cache, waza_version=waza_version)
    suite, dataset = _open(suite_path, results=results, dialect=dialect, waza_version=waza_version,
                           whole=export is not None)
    _overrides(suite, threshold=threshold, cost_ordered=cost_ordered, repeats=repeats)
    if suite.repeats > 1 and dataset is not None:  # each attempt is a copy of the samples (runner.repeats)
        suite, dataset = _open(suite_path, results=results, dialect=dialect, waza_version=waza_version, whole=True)
        _overrides(suite, threshold=threshold, cost_ordered=cost_ordered, repeats=repeats)
    _print_warnings(suite)
    export_path, fingerprint = _checked_outputs(suite, out=out, junit=junit, summary_json=summary_json,
                                                export=export, export_path=export_path)
    if dataset is not None:
        dataset.scan()
    count = dataset.count if dataset is not None else len(suite.samples)
    # Everything reported covers the whole results file (earlier verdicts of a resumed run
    # too), with reviews applied, exactly as `assay report` on that file would. Only --export,
    # --baseline and attempts of one task (their disagreements are listed) keep every verdict.
    clustered = bool(suite.clusters) or suite.repeats > 1
    tally = RunTally(threshold=suite.threshold, reviews=load_reviews(out) if out is not None else [],
                     max_problems=MAX_LISTED, junit=junit, suite_name=suite.name,
                     keep=export is not None or baseline is not None or clustered, count_judged=not quiet,
                     clustered=clustered)
    previous = _resume(out, suite, dataset, fingerprint, tally) if resume and out is not None else None
    done = previous.ids if previous is not None else IdIndex()
    sink = JsonlSink(out, fingerprint=fingerprint, append=resume) if out is not None else None

    def graded(verdicts: list) -> None:
        if sink is not None:
            sink(verdicts)
        tally.add(verdicts)

    sizes = batch_sizes(suite.all_graders(), concurrency)
    show_progress = not quiet and sys.stderr.isatty() and count >= PROGRESS_MIN_SAMPLES
    try:
        with _progress(show_progress, count * suite.repeats - len(done)) as advance:
            result = run_attempts(suite, resources=_resources(no_cache), fresh=lambda: _resources(True),
                                  concurrency=concurrency, done_ids=done, sink=graded, on_progress=advance,
                                  chunk_size=sizes.first, max_chunk=sizes.largest, samples=dataset,
                                  keep_verdicts=False)
    finally:
        if sink is not None:
            sink.close()
    resumed = previous.count if previous is not None else 0
    if result.resumed != resumed:
        raise AssayError(f"{out} holds {resumed} samples but {result.resumed} were skipped as done (two sample ids "
                         "share a 64-bit hash, a chance of about one in 10^7); run again without --resume")
    tally.finish(result.duration_s, suite.warnings)
    if export is not None and export_path is not None:
        _export(export, export_path, suite, tally.verdicts or [])
    code = _report(suite, tally.running.summary(), tally.problems, result.duration_s, resumed,
                   judged=(tally.judged, tally.judged_cached), summary_json=summary_json, quiet=quiet, samples=count,
                   verdicts=tally.verdicts)
    if baseline is None:
        return code
    from assay.cli.compare_cmd import against_baseline

    return against_baseline(baseline, tally.verdicts or [], code, fail_on_regression=fail_on_regression, alpha=alpha)


def _overrides(suite: Suite, *, threshold: float | None, cost_ordered: bool | None, repeats: int | None) -> None:
    """The command line's settings over the suite file's."""
    if threshold is not None:
        suite.threshold = threshold
    if cost_ordered is not None:
        suite.cost_ordered = cost_ordered
    if repeats is not None:
        suite.repeats = repeats


def _open(path: Path, *, results: Path | None, dialect: str | None, waza_version: str | None,
          whole: bool) -> tuple[Suite, DatasetStream | None]:
    """The suite, and the dataset to stream when it has one (``whole``: load every sample, as
    ``--export`` and repeats need them)."""
    if whole:
        return load_suite(path, results=results, dialect=dialect, context=Defaults.context(),
                          waza_version=waza_version), None
    suite, source = open_streamed(path, formats=STREAMED, results=results, dialect=dialect,
                                  context=Defaults.context(), waza_version=waza_version)
    if source is None:
        return suite, None
    return suite, DatasetStream(source, getattr(suite.definition, "delimiter", None))


def _report(suite: Suite, s: SuiteSummary, problems: list, duration_s: float, resumed_count: int, *,
            judged: tuple[int, int], summary_json: Path | None, quiet: bool, samples: int,
            verdicts: list | None = None) -> int:
    """Print the summary (and write ``summary_json``); the exit code. ``problems`` are the
    first verdicts that did not pass; ``samples`` is the dataset's size; ``judged`` the judge
    results and how many the cache answered; ``verdicts`` every verdict when they were kept
    (a clustered run's: the samples whose attempts disagreed are listed).

    With ``quiet`` only the closing line is printed, plainly: the console library is not even
    loaded (a sixth of a short preset run's start-up)."""
    wavering = _inconsistent(verdicts) if verdicts and (summary_json is not None or not quiet) else []
    if summary_json is not None:
        doc = {"suite": suite.name, **s.to_dict(), "duration_s": duration_s, "resumed": resumed_count,
               "warnings": suite.warnings, **({"inconsistent": wavering} if wavering else {})}
        write_output(summary_json, orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    if not quiet:
        from assay.cli._console import make_console
        from assay.runner.report import summary_table

        console = make_console()
        if suite.missing:
            console.print(f"not graded (no output found): {', '.join(suite.missing)}", markup=False)
        console.print(summary_table(s, f"{suite.name} ({suite.dialect}, {samples} samples)"))
        for v in problems[:MAX_LISTED]:
            _print_problem(console, v)
        if s.total - s.passed > MAX_LISTED:
            console.print(f"... and {s.total - s.passed - MAX_LISTED} more (see --out for every result)")
        if wavering:
            shown = ", ".join(f"{w['sample']} {w['grader']} {w['passed']}/{w['attempts']}"
                              for w in wavering[:MAX_LISTED])
            console.print(f"inconsistent across attempts ({len(wavering)}): {shown}"
                          + (" ..." if len(wavering) > MAX_LISTED else ""), markup=False)
    mean = "-" if s.mean_score is None else f"{s.mean_score:.3f}"
    resumed = f", {resumed_count} resumed from the earlier run" if resumed_count else ""
    line = (f"{s.passed}/{s.total} passed, {s.failed} failed, {s.errors} errors, {s.pending} pending"
            f"{resumed}; mean score {mean}; pass rate {figures.rate(s.pass_rate, s.intervals.pass_rate)} "
            f"(95% CI{f'; {s.errors + s.pending} errors/pending left out' if s.errors + s.pending else ''}); "
            f"{duration_s:.2f}s")
    if suite.threshold is not None:
        line += f"; threshold {suite.threshold}"
    if judged[0] and not quiet:
        console.print(f"judge results: {judged[0]} ({judged[1]} from the judge cache)", markup=False)
    print(line, flush=True)
    return 0 if s.all_passed else 1


def _inconsistent(verdicts: list) -> list:
    """Samples whose attempts disagreed (``runner.report.inconsistent``), when any has a cluster."""
    if not any(v.cluster is not None for v in verdicts):
        return []
    from assay.runner.report import inconsistent

    return inconsistent(verdicts)


def _resources(no_cache: bool) -> Resources:
    """The process's resources; with --no-cache, the same but with a judge client that asks
    every judge afresh (its replies still refresh the cache for the next run)."""
    resources = Defaults.resources()
    if not no_cache:
        return resources
    fresh = build_resources(Defaults.settings(), judge_cache_reads=False)
    return dataclasses.replace(resources, judge_client=fresh.judge_client)


def _print_warnings(suite: Suite) -> None:
    """What the loader noticed (results matching no task, keys a peer dialect ignores), on
    stderr and even with --quiet: a dropped result must not pass unseen."""
    for warning in suite.warnings:
        print(f"warning: {cap_text(clean_text(warning), 2000)}", file=sys.stderr)


def _checked_outputs(suite: Suite, *, out: Path | None, junit: Path | None, summary_json: Path | None,
                     export: str | None, export_path: Path | None) -> tuple[Path | None, str]:
    """Before a run (either engine): the export path (``results.<tool>.json`` unless given), once
    every output is checked not to overwrite an input; and the suite's fingerprint."""
    if export is not None:
        export_path = export_path or Path(f"results.{export}.json")
    check_outputs({"--out": out, "--junit": junit, "--summary-json": summary_json, "--export-path": export_path},
                  suite.inputs)
    return export_path, suite_fingerprint(suite)


def _resume(out: Path, suite: Suite, dataset: DatasetStream | None, fingerprint: str,
            tally: RunTally) -> Previous | None:
    """The results a resumed run keeps, handed to ``tally``: those already in ``out``, which must
    come from this suite (same fingerprint) and name only its samples. A torn last line is cut off."""
    if not out.exists():
        return None
    ids = sample_ids(suite) if dataset is None else set()
    previous = read_previous(out, fingerprint, tally.add,
                             known=dataset.ids.contains if dataset is not None else lambda b: [i in ids for i in b])
    previous.log.drop_torn_line()
    return previous


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


def _export(tool: str, path: Path, suite: Suite, verdicts: list) -> None:
    if tool == "waza":
        from assay.runner.export_waza import export_waza

        doc = export_waza(suite.name, suite.samples, verdicts, skill=getattr(suite.definition, "skill", None))
    else:
        from assay.runner.export_vally import export_vally

        doc = export_vally(suite, verdicts)
    write_output(path, json_bytes(doc))




def _print_problem(console: Console, v: SampleVerdict) -> None:
    score = "-" if v.score is None else f"{v.score:.3f}"
    console.print(f"[bold]{v.status.value.upper()}[/] {v.id} (score {score})")
    for r in v.results:
        if r.status is not Status.PASSED:
            code = f" [{r.error.value}]" if r.error else ""
            console.print(f"    {r.name}{code}: {r.reason or r.status.value}", markup=False)
    if v.skipped:
        console.print(f"    skipped: {', '.join(v.skipped)}", markup=False)
