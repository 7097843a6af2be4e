"""`assay run --engine ray`: the suite graded on Ray Data, reported as `assay run` reports.

The verdicts stream to ``--out`` as batches finish and are not kept: the summary is added up
batch by batch, and only the first problems are kept for the listing. Reports that need every
verdict (``--junit``, ``--export``, reviews written beside ``--out``) are made from ``--out``
once the run is over, read back a block at a time (``runner.tally``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay.core.aggregate import SampleVerdict
from assay.core.errors import AssayError, SpecError
from assay.runner.resources import Defaults
from assay.runner.results import read_results
from assay.runner.reviews import load_reviews
from assay.runner.stream import check_fingerprints, read_previous
from assay.runner.suites import Suite
from assay.runner.tally import RunTally


def execute_ray(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
                threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
                summary_json: Path | None, quiet: bool, export: str | None = None,
                export_path: Path | None = None, dialect: str | None = None, no_cache: bool = False,
                waza_version: str | None = None) -> int:
    """`assay run` on Ray; the same arguments and exit codes as ``run_cmd.execute``."""
    from assay.cli.run_cmd import (
        MAX_LISTED,
        PROGRESS_MIN_SAMPLES,
        _checked_outputs,
        _export,
        _print_warnings,
        _progress,
        _report,
    )
    from assay.runner.ray_engine import (
        LineSink,
        PartialSummary,
        RayPlace,
        SuiteRef,
        grade_on_ray,
        ray_session,
        require_ray,
    )

    require_ray()
    if out is None and (junit is not None or export is not None):
        raise AssayError("with --engine ray, --junit and --export are made from the results file: give --out")
    ref = SuiteRef.of(suite_path, results=results, dialect=dialect, threshold=threshold, cost_ordered=cost_ordered,
                      waza_version=waza_version)
    suite, source = ref.open(Defaults.context())
    _print_warnings(suite)
    export_path, fingerprint = _checked_outputs(suite, out=out, junit=junit, summary_json=summary_json,
                                                export=export, export_path=export_path)
    previous = _previous(out, suite, fingerprint) if resume and out is not None else []
    done = {v.id for v in previous}
    total = PartialSummary.of(previous)
    problems = [v for v in previous if not v.passed][:MAX_LISTED]
    del previous  # the ids are all a resumed run needs; the summary of the rest is taken
    sink = LineSink(out, fingerprint=fingerprint, append=resume) if out is not None else None
    known = len(suite.samples) or None
    show_progress = not quiet and sys.stderr.isatty() and (known or PROGRESS_MIN_SAMPLES) >= PROGRESS_MIN_SAMPLES
    try:
        with ray_session(RayPlace.from_env()), _progress(show_progress and known is not None,
                                                         (known or 0) - len(done)) as advance:
            run = grade_on_ray(ref, suite, source, settings=Defaults.settings(), sink=sink, fingerprint=fingerprint,
                               done_ids=done, concurrency=concurrency, on_progress=advance,
                               judge_cache_reads=not no_cache)
    finally:
        if sink is not None:
            sink.close()
    reviews = load_reviews(out) if out is not None else []
    if out is not None and (junit is not None or export is not None or reviews):
        # Reports that need every verdict are made from the results file, read back a block at a time.
        tally = RunTally(threshold=suite.threshold, reviews=reviews, max_problems=MAX_LISTED, junit=junit,
                         suite_name=suite.name, keep=export is not None, count_judged=not quiet)
        read_previous(out, fingerprint, tally.add)
        tally.finish(run.duration_s, suite.warnings)
        if export is not None and export_path is not None:
            _export(export, export_path, suite, tally.verdicts or [])
        s = tally.running.summary()
        return _report(suite, s, tally.problems, run.duration_s, len(done), judged=(tally.judged, tally.judged_cached),
                       summary_json=summary_json, quiet=quiet, samples=s.total, verdicts=tally.verdicts)
    total.add(run.part)
    return _report(suite, total.take_intervals(), (problems + run.problems)[:MAX_LISTED], run.duration_s, len(done),
                   judged=(0, 0), summary_json=summary_json, quiet=quiet, samples=total.summary.total)


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
