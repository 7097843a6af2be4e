"""The "run a suite file" use case on Ray (``RunOptions.engine == "ray"``), reported as the
local engine reports it (``runner.job``).

The verdicts stream to ``--out`` as batches finish and are not kept: the summary is added up
batch by batch, and only the first problems are kept for the listing. Reports that need every
verdict (``--junit``, ``--export``, reviews written beside ``--out``) are made from ``--out``
once the run is over, read back a block at a time (``runner.tally``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.core.aggregate import SampleVerdict
from assay.core.errors import AssayError, SpecError
from assay.runner.job import VERDICT_EXPORTS, Progress, RunOptions, RunReport, checked_outputs, export, write_summary
from assay.runner.resources import Defaults
from assay.runner.results import read_results
from assay.runner.resume import check_fingerprints, read_previous
from assay.runner.reviews import load_reviews
from assay.runner.suites import Suite
from assay.runner.tally import RunTally


def run_on_ray(options: RunOptions, *, progress: Progress | None = None,
               on_loaded: Callable[[Suite], None] | None = None) -> RunReport:
    """``run_suite_file`` on Ray: the same options, outputs and report."""
    from contextlib import nullcontext

    from assay.runner.ray_engine import (
        LineSink,
        PartialSummary,
        RayPlace,
        SuiteRef,
        grade_on_ray,
        ray_session,
        require_ray,
    )

    out = options.out
    if options.keep_verdicts or (options.repeats or 1) > 1:
        raise AssayError("--baseline and --repeats run on the local engine only; with --engine ray, "
                         "write --out and use `assay compare`")
    require_ray()
    if out is None and (options.junit is not None or options.export is not None):
        raise AssayError("with --engine ray, --junit and --export are made from the results file: give --out")
    ref = SuiteRef.of(options.suite, results=options.results, dialect=options.dialect, threshold=options.threshold,
                      cost_ordered=options.cost_ordered, waza_version=options.waza_version)
    suite, source = ref.open(Defaults.context())
    if on_loaded is not None:
        on_loaded(suite)
    export_path, fingerprint = checked_outputs(suite, options)
    previous = _previous(out, suite, fingerprint) if options.resume and out is not None else []
    done = {v.id for v in previous}
    total = PartialSummary.of(previous)
    problems = [v for v in previous if not v.passed][:options.max_problems]
    del previous  # the ids are all a resumed run needs; the summary of the rest is taken
    sink = LineSink(out, fingerprint=fingerprint, append=options.resume) if out is not None else None
    known = len(suite.samples) or None  # a streamed dataset's size is not known up front
    bar = progress(known, known - len(done)) if progress is not None and known is not None else nullcontext(None)
    try:
        with ray_session(RayPlace.of(Defaults.settings())), bar as advance:
            run = grade_on_ray(ref, suite, source, settings=Defaults.settings(), sink=sink, fingerprint=fingerprint,
                               done_ids=done, concurrency=options.concurrency, on_progress=advance,
                               judge_cache_reads=not options.no_cache)
    finally:
        if sink is not None:
            sink.close()
    reviews = load_reviews(out) if out is not None else []
    if out is not None and (options.junit is not None or options.export is not None or reviews):
        # Reports that need every verdict are made from the results file, read back a block at a time.
        tally = RunTally(threshold=suite.threshold, reviews=reviews, max_problems=options.max_problems,
                         junit=options.junit, suite_name=suite.name, keep=options.export in VERDICT_EXPORTS,
                         count_judged=options.count_judged)
        read_previous(out, fingerprint, tally.add)
        tally.finish(run.duration_s, suite.warnings)
        s = tally.running.summary()
        if options.export is not None and export_path is not None:
            export(options.export, export_path, suite, tally.verdicts or [], s)
        report = RunReport(suite, s, tally.problems, run.duration_s, len(done), s.total,
                           judged=(tally.judged, tally.judged_cached), verdicts=tally.verdicts)
    else:
        total.add(run.part)
        report = RunReport(suite, total.take_intervals(), (problems + run.problems)[:options.max_problems],
                           run.duration_s, len(done), total.summary.total)
    write_summary(report, options.summary_json)
    return report


def _previous(out: Path, suite: Suite, fingerprint: str) -> list[SampleVerdict]:
    """The verdicts a resumed run keeps: those already in ``out``, which must come from this
    suite (same fingerprint) and, when its samples are loaded, name only them. A torn last
    line is cut off. (The Ray driver ships the done ids to its workers as one set.)"""
    if not out.exists():
        return []
    log = read_results(out)
    check_fingerprints(log, fingerprint)
    known = {s.id for s in suite.samples}
    # A streamed suite has no samples loaded: its ids are not known up front.
    strangers = [v.id for v in log.verdicts if v.id not in known] if suite.samples else []
    if strangers:
        raise SpecError(f"{out} holds sample {strangers[0]!r} that this suite's dataset does not have "
                        f"({len(strangers)} such samples); resume only with the dataset that started the run")
    log.drop_torn_line()
    return log.verdicts
