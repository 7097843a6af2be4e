"""`assay run`: load, grade, report."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from assay.core.aggregate import SampleVerdict, SuiteSummary, summarize
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.result import Status
from assay.core.untrusted import cap_text, clean_text
from assay.runner import figures
from assay.runner.files import check_outputs, json_bytes, write_output
from assay.runner.repeats import run_attempts, sample_ids
from assay.runner.resources import Defaults, build_resources
from assay.runner.results import JsonlSink, read_results, suite_fingerprint
from assay.runner.reviews import apply_reviews, load_reviews
from assay.runner.sizing import batch_sizes
from assay.runner.suites import Suite, load_suite

if TYPE_CHECKING:
    from rich.console import Console

PROGRESS_MIN_SAMPLES = 200
MAX_LISTED = 20


def execute(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
            threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
            summary_json: Path | None, quiet: bool, export: str | None = None,
            export_path: Path | None = None, dialect: str | None = None, no_cache: bool = False,
            engine: str = "local", waza_version: str | None = None, explain_dialect: bool = False,
            repeats: int | None = None, baseline: Path | None = None, fail_on_regression: bool = False,
            alpha: float = 0.05) -> int:
    if explain_dialect:
        explained = load_suite(suite_path, results=results, dialect=dialect, context=Defaults.context(),
                               waza_version=waza_version)
        print("\n".join(explained.explain))
        return 0
    if engine == "ray":
        from assay.cli.run_ray import execute_ray

        if waza_version is not None:  # the Ray engine's workers load suites by the newest release
            raise SpecError("--waza-version is not supported with --engine ray yet; set the suite's "
                            "waza_version key, or grade with --engine local")
        return execute_ray(suite_path, out=out, junit=junit, results=results, threshold=threshold,
                           concurrency=concurrency, resume=resume, cost_ordered=cost_ordered,
                           summary_json=summary_json, quiet=quiet, export=export, export_path=export_path,
                           dialect=dialect, no_cache=no_cache)
    suite = load_suite(suite_path, results=results, dialect=dialect, context=Defaults.context(),
                       waza_version=waza_version)
    _print_warnings(suite)
    if threshold is not None:
        suite.threshold = threshold
    if cost_ordered is not None:
        suite.cost_ordered = cost_ordered
    if repeats is not None:
        suite.repeats = repeats
    export_path, fingerprint, previous = _outputs(suite, out=out, junit=junit, summary_json=summary_json,
                                                  export=export, export_path=export_path, resume=resume)
    sink = JsonlSink(out, fingerprint=fingerprint, append=resume) if out is not None else None
    done = {v.id for v in previous}
    sizes = batch_sizes(suite.all_graders(), concurrency)
    show_progress = not quiet and sys.stderr.isatty() and len(suite.samples) >= PROGRESS_MIN_SAMPLES
    try:
        with _progress(show_progress, len(suite.samples) * suite.repeats - len(done)) as advance:
            result = run_attempts(suite, resources=_resources(no_cache), fresh=lambda: _resources(True),
                                  concurrency=concurrency, done_ids=done, sink=sink, on_progress=advance,
                                  chunk_size=sizes.first, max_chunk=sizes.largest)
    finally:
        if sink is not None:
            sink.close()
    # Everything below covers the whole results file (earlier verdicts of a resumed run
    # too), with reviews applied, exactly as `assay report` on that file would.
    verdicts = previous + result.verdicts
    reviews = load_reviews(out) if out is not None else []
    if reviews:
        verdicts = apply_reviews(verdicts, reviews, threshold=suite.threshold)
    code = _report(suite, verdicts, summarize(verdicts), result.duration_s, len(previous), junit=junit,
                   export=export, export_path=export_path, summary_json=summary_json, quiet=quiet)
    if baseline is None:
        return code
    from assay.cli.compare_cmd import against_baseline

    return against_baseline(baseline, verdicts, code, fail_on_regression=fail_on_regression, alpha=alpha)


def _report(suite: Suite, verdicts: list[SampleVerdict], s: SuiteSummary, duration_s: float, resumed_count: int, *,
            junit: Path | None, export: str | None, export_path: Path | None, summary_json: Path | None,
            quiet: bool, samples: int | None = None, complete: bool = True) -> int:
    """Write the reports asked for and print the summary; the exit code. ``verdicts`` are all
    the run's verdicts, or (``complete`` False: a Ray run without per-sample reports) the first
    problems it kept; ``samples`` is the dataset's size when the suite holds no samples.

    With ``quiet`` only the closing line is printed, plainly: the console library is not even
    loaded (a sixth of a short preset run's start-up)."""
    if junit is not None:
        from assay.runner.report import write_junit

        write_junit(junit, suite.name, verdicts, duration_s, suite.warnings, summary=s)
    if export is not None and export_path is not None:
        _export(export, export_path, suite, s, verdicts)
    wavering = _inconsistent(verdicts) if complete and (summary_json is not None or not quiet) else []
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
        count = len(suite.samples) if samples is None else samples
        console.print(summary_table(s, f"{suite.name} ({suite.dialect}, {count} samples)"))
        problems = [v for v in verdicts if v.status is not Status.PASSED]
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
    judged = _judge_counts(verdicts) if complete and not quiet else (0, 0)
    if judged[0]:
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


def _outputs(suite: Suite, *, out: Path | None, junit: Path | None, summary_json: Path | None, export: str | None,
             export_path: Path | None, resume: bool) -> tuple[Path | None, str, list[SampleVerdict]]:
    """Before a run (either engine): the export path (``results.<tool>.json`` unless given), once
    every output is checked not to overwrite an input; the suite's fingerprint; and, with
    ``resume``, the verdicts already in ``out``."""
    if export is not None:
        export_path = export_path or Path(f"results.{export}.json")
    check_outputs({"--out": out, "--junit": junit, "--summary-json": summary_json, "--export-path": export_path},
                  suite.inputs)
    fingerprint = suite_fingerprint(suite)
    previous = _previous(out, suite, fingerprint) if resume and out is not None else []
    return export_path, fingerprint, previous


def _previous(out: Path, suite: Suite, fingerprint: str) -> list[SampleVerdict]:
    """The verdicts a resumed run keeps: those already in ``out``, which must come from this
    suite (same fingerprint) and name only its samples. A torn last line is cut off."""
    if not out.exists():
        return []
    log = read_results(out)
    others = log.fingerprints - {fingerprint}
    if others:
        written = "without a fingerprint (an older assay)" if others == {None} else \
            f"by another suite or grader set (fingerprint {sorted(map(str, others))[0]})"
        raise SpecError(f"{out} was written {written}, not by this suite (fingerprint {fingerprint}); "
                        "write to another --out, or run without --resume to start again")
    known = sample_ids(suite)
    # A streamed suite (--engine ray) has no samples loaded: its ids are not known up front.
    strangers = [v.id for v in log.verdicts if v.id not in known] if suite.samples else []
    if strangers:
        raise SpecError(f"{out} holds sample {strangers[0]!r} that this suite's dataset does not have "
                        f"({len(strangers)} such samples); resume only with the dataset that started the run")
    log.drop_torn_line()
    return log.verdicts


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


def _export(tool: str, path: Path, suite: Suite, summary: SuiteSummary, verdicts: list[SampleVerdict]) -> None:
    if tool == "waza":
        from assay.runner.export_waza import export_waza

        doc = export_waza(suite.name, suite.samples, verdicts, skill=getattr(suite.definition, "skill", None))
    else:
        from assay.runner.export_vally import export_vally

        doc = export_vally(suite, verdicts)
    write_output(path, json_bytes(doc))


def _judge_counts(verdicts: list[SampleVerdict]) -> tuple[int, int]:
    """LLM results in ``verdicts``, and how many of them the judge cache answered."""
    total = cached = 0
    for v in verdicts:
        for r in v.results:
            if r.kind == "llm":
                total += 1
                cached += bool(r.details.get("cached"))
    return total, cached


def _print_problem(console: Console, v: SampleVerdict) -> None:
    score = "-" if v.score is None else f"{v.score:.3f}"
    console.print(f"[bold]{v.status.value.upper()}[/] {v.id} (score {score})")
    for r in v.results:
        if r.status is not Status.PASSED:
            code = f" [{r.error.value}]" if r.error else ""
            console.print(f"    {r.name}{code}: {r.reason or r.status.value}", markup=False)
    if v.skipped:
        console.print(f"    skipped: {', '.join(v.skipped)}", markup=False)
