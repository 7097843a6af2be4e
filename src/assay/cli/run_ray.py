"""`assay run --engine ray`: the suite graded on Ray Data, reported as `assay run` reports.

The verdicts stream to ``--out`` as batches finish and are not kept: the summary is added up
batch by batch, and only the first problems are kept for the listing. Reports that need every
verdict (``--junit``, ``--export``, reviews written beside ``--out``) read them back from
``--out`` once the run is over.
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay.core.aggregate import summarize
from assay.core.errors import AssayError
from assay.runner.resources import Defaults
from assay.runner.results import read_results
from assay.runner.reviews import apply_reviews, load_reviews


def execute_ray(suite_path: Path, *, out: Path | None, junit: Path | None, results: Path | None,
                threshold: float | None, concurrency: int, resume: bool, cost_ordered: bool | None,
                summary_json: Path | None, quiet: bool, export: str | None = None,
                export_path: Path | None = None, dialect: str | None = None, no_cache: bool = False) -> int:
    """`assay run` on Ray; the same arguments and exit codes as ``run_cmd.execute``."""
    from assay.cli.run_cmd import MAX_LISTED, PROGRESS_MIN_SAMPLES, _outputs, _print_warnings, _progress, _report
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
    ref = SuiteRef.of(suite_path, results=results, dialect=dialect, threshold=threshold, cost_ordered=cost_ordered)
    suite, source = ref.open(Defaults.context())
    _print_warnings(suite)
    export_path, fingerprint, previous = _outputs(suite, out=out, junit=junit, summary_json=summary_json,
                                                  export=export, export_path=export_path, resume=resume)
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
        verdicts = read_results(out).verdicts
        if reviews:
            verdicts = apply_reviews(verdicts, reviews, threshold=suite.threshold)
        return _report(suite, verdicts, summarize(verdicts), run.duration_s, len(done), junit=junit,
                       export=export, export_path=export_path, summary_json=summary_json, quiet=quiet,
                       samples=len(verdicts))
    total.add(run.part)
    return _report(suite, (problems + run.problems)[:MAX_LISTED], total.take_intervals(), run.duration_s, len(done),
                   junit=None, export=None, export_path=None, summary_json=summary_json, quiet=quiet,
                   samples=total.summary.total, complete=False)
