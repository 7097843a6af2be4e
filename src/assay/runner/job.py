"""The "run a suite file" use case, below its edges: open the suite, resume from an earlier
results file, grade (on this machine or on Ray), tally, and write every output a run writes
(``--out``, ``--junit``, ``--summary-json``, ``--export``). The command line parses its options
into one ``RunOptions``, calls ``run_suite_file`` and prints the ``RunReport``; it holds no step
of the run itself.

Everything reported covers the whole results file (earlier verdicts of a resumed run too), with
reviews applied, exactly as ``assay report`` on that file would. Only ``--export``, a baseline
comparison and attempts of one task (their disagreements are listed) keep every verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from assay.core.aggregate import SampleVerdict
from assay.core.errors import AssayError
from assay.core.interfaces import Resources
from assay.core.summary import SuiteSummary
from assay.runner.files import check_outputs, json_bytes, write_output
from assay.runner.ids import IdIndex
from assay.runner.local_engine.repeats import run_attempts, sample_ids
from assay.runner.local_engine.stream import DatasetStream
from assay.runner.resources import Defaults, build_resources
from assay.runner.results import JsonlSink, grader_fingerprints, suite_fingerprint
from assay.runner.resume import Previous, read_previous
from assay.runner.sizing import batch_sizes
from assay.runner.suites import Suite, load_suite
from assay.runner.suites.streamed import open_streamed
from assay.runner.tally import RunTally

EXPORTS = ("waza", "vally", "every-eval-ever")
"""``--export`` formats: waza's and Vally's results files (made from every verdict), and an Every
Eval Ever record (made from the summary: no verdict is kept for it)."""
VERDICT_EXPORTS = frozenset({"waza", "vally"})

STREAMED = frozenset({".jsonl", ".ndjson", ".csv", ".tsv", ".json", ".parquet"})
"""Dataset formats the local engine reads as it grades (every one it reads)."""

Advance = Callable[[int], None]
Progress = Callable[[int, int], AbstractContextManager[Advance | None]]
"""``progress(samples, to_grade)``: a context around the grading that yields the callback
advancing a progress display by a number of graded samples, or None to show none."""


@dataclass(frozen=True)
class RunOptions:
    """What one run of a suite file is asked to do (``assay run``'s options)."""

    suite: Path
    out: Path | None = None
    junit: Path | None = None
    results: Path | None = None
    summary_json: Path | None = None
    export: str | None = None
    """One of ``EXPORTS``: also write the run in that tool's own shape."""
    export_path: Path | None = None
    threshold: float | None = None
    cost_ordered: bool | None = None
    repeats: int | None = None
    pass_k: int | None = None
    """The k of pass@k (``--pass-k``), over the suite's ``pass_k``."""
    concurrency: int = 8
    resume: bool = False
    dialect: str | None = None
    waza_version: str | None = None
    no_cache: bool = False
    engine: str = "local"
    keep_verdicts: bool = False
    """Keep every verdict in the report (a baseline comparison needs them)."""
    count_judged: bool = True
    """Count the judge results and the cache's share of them (the full report shows them)."""
    max_problems: int = 20
    """Non-passing verdicts kept for the report's listing."""


@dataclass
class RunReport:
    """What a run found, for its edge to print."""

    suite: Suite
    summary: SuiteSummary
    problems: list[SampleVerdict]
    duration_s: float
    resumed: int
    samples: int
    judged: tuple[int, int] = (0, 0)
    """Judge results, and how many the judge cache answered."""
    verdicts: list[SampleVerdict] | None = None
    inconsistent: list[dict[str, Any]] = field(default_factory=list)
    """Samples whose attempts disagreed (repeats, waza trials)."""

    @property
    def exit_code(self) -> int:
        return 0 if self.summary.all_passed else 1


def run_suite_file(options: RunOptions, *, progress: Progress | None = None,
                   on_loaded: Callable[[Suite], None] | None = None) -> RunReport:
    """Run the suite file of ``options`` as its engine says; ``on_loaded`` sees the suite
    once it is open (its warnings are then known), before any grading."""
    if options.engine == "ray":
        from assay.runner.job_ray import run_on_ray

        return run_on_ray(options, progress=progress, on_loaded=on_loaded)
    keep_for_export = options.export in VERDICT_EXPORTS
    suite, dataset = open_suite(options, whole=keep_for_export)
    if suite.repeats > 1 and dataset is not None:  # each attempt is a copy of the samples (runner.local_engine.repeats)
        suite, dataset = open_suite(options, whole=True)
    if on_loaded is not None:
        on_loaded(suite)
    export_path, fingerprint = checked_outputs(suite, options)
    if dataset is not None:
        dataset.scan()
    count = dataset.count if dataset is not None else len(suite.samples)
    clustered = bool(suite.clusters) or suite.repeats > 1
    tally = RunTally(threshold=suite.threshold, reviews=_reviews(options.out),
                     max_problems=options.max_problems, junit=options.junit, suite_name=suite.name,
                     keep=keep_for_export or options.keep_verdicts or clustered,
                     count_judged=options.count_judged, clustered=clustered, pass_k=suite.pass_at)
    out = options.out
    previous = _resume(out, suite, dataset, fingerprint, tally) if options.resume and out is not None else None
    done = previous.ids if previous is not None else IdIndex()
    sink = JsonlSink(out, fingerprint=fingerprint, append=options.resume,
                     configs=grader_fingerprints(suite)) if out is not None else None

    def graded(verdicts: list) -> None:
        if sink is not None:
            sink(verdicts)
        tally.add(verdicts)

    sizes = batch_sizes(suite.all_graders(), options.concurrency)
    try:
        with _progress_of(progress, count, count * suite.repeats - len(done)) as advance:
            result = run_attempts(suite, resources=_resources(options.no_cache), fresh=lambda: _resources(True),
                                  concurrency=options.concurrency, done_ids=done, sink=graded, on_progress=advance,
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
    summary = tally.running.summary()
    if options.export is not None and export_path is not None:
        export(options.export, export_path, suite, tally.verdicts or [], summary)
    report = RunReport(suite, summary, tally.problems, result.duration_s, resumed, count,
                       judged=(tally.judged, tally.judged_cached), verdicts=tally.verdicts,
                       inconsistent=_inconsistent(tally.verdicts))
    write_summary(report, options.summary_json)
    return report


def _reviews(out: Path | None) -> list[Any]:
    """Reviews written beside the results file (none without ``--out``: the reviews module, and
    calibration with it, are not loaded then)."""
    if out is None:
        return []
    from assay.runner.reviews import load_reviews

    return load_reviews(out)


def open_suite(options: RunOptions, *, whole: bool) -> tuple[Suite, DatasetStream | None]:
    """The suite with the command line's settings over the file's, and the dataset to stream
    when it has one (``whole``: load every sample, as ``--export`` and repeats need them)."""
    context = Defaults.context()
    if whole:
        suite = load_suite(options.suite, results=options.results, dialect=options.dialect, context=context,
                           waza_version=options.waza_version)
        dataset = None
    else:
        suite, source = open_streamed(options.suite, formats=STREAMED, results=options.results,
                                      dialect=options.dialect, context=context, waza_version=options.waza_version)
        dataset = None if source is None else DatasetStream(source, getattr(suite.definition, "delimiter", None))
    if options.threshold is not None:
        suite.threshold = options.threshold
    if options.cost_ordered is not None:
        suite.cost_ordered = options.cost_ordered
    if options.repeats is not None:
        suite.repeats = options.repeats
    if options.pass_k is not None:
        suite.pass_k = options.pass_k
    if suite.pass_k is not None and 1 < suite.repeats < suite.pass_k:
        raise AssayError(f"pass@k: k = {suite.pass_k} is more than the {suite.repeats} repeats of each sample, so no "
                         f"task could have k attempts; give --pass-k (or `pass_k:`) {suite.repeats} or less")
    return suite, dataset


def checked_outputs(suite: Suite, options: RunOptions) -> tuple[Path | None, str]:
    """Before a run (either engine): the export path (``results.<tool>.json`` unless given), once
    every output is checked not to overwrite an input; and the suite's fingerprint."""
    export_path = options.export_path
    if options.export is not None:
        export_path = export_path or Path(f"results.{options.export}.json")
    check_outputs({"--out": options.out, "--junit": options.junit, "--summary-json": options.summary_json,
                   "--export-path": export_path}, suite.inputs)
    return export_path, suite_fingerprint(suite)


def export(tool: str, path: Path, suite: Suite, verdicts: list, summary: SuiteSummary) -> None:
    """Write the run in ``tool``'s shape (one of ``EXPORTS``): waza's and Vally's from
    ``verdicts``, Every Eval Ever's from ``summary``."""
    if tool == "every-eval-ever":
        from assay.runner.export_every_eval_ever import export_every_eval_ever

        dataset = next((p.name for p in suite.inputs[1:]), None)
        doc = export_every_eval_ever(suite.name, summary, dataset=dataset)
    elif tool == "waza":
        from assay.runner.export_waza import export_waza

        doc = export_waza(suite.name, suite.samples, verdicts, skill=getattr(suite.definition, "skill", None))
    else:
        from assay.runner.export_vally import export_vally

        doc = export_vally(suite, verdicts)
    write_output(path, json_bytes(doc))


def write_summary(report: RunReport, path: Path | None) -> None:
    """``--summary-json``: the summary, the run's duration and warnings, and the samples whose
    attempts disagreed."""
    if path is None:
        return
    doc = {"suite": report.suite.name, **report.summary.to_dict(), "duration_s": report.duration_s,
           "resumed": report.resumed, "warnings": report.suite.warnings,
           **({"inconsistent": report.inconsistent} if report.inconsistent else {})}
    write_output(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def _resources(no_cache: bool) -> Resources:
    """The process's resources; with ``no_cache``, the same but with a judge client that asks
    every judge afresh (its replies still refresh the cache for the next run)."""
    resources = Defaults.resources()
    if not no_cache:
        return resources
    fresh = build_resources(Defaults.settings(), judge_cache_reads=False)
    return dataclasses.replace(resources, judge_client=fresh.judge_client)


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


def _progress_of(progress: Progress | None, samples: int, to_grade: int) -> AbstractContextManager[Advance | None]:
    if progress is None:
        from contextlib import nullcontext

        return nullcontext(None)
    return progress(samples, to_grade)


def _inconsistent(verdicts: list[SampleVerdict] | None) -> list[dict[str, Any]]:
    """Samples whose attempts disagreed (``runner.report.inconsistent``), when any has a cluster."""
    if not verdicts or not any(v.cluster is not None for v in verdicts):
        return []
    from assay.runner.report import inconsistent

    return inconsistent(verdicts)
