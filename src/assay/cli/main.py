"""`assay`: grade suites, list graders, check the sandbox. Commands translate and delegate."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from assay.core.errors import AssayError
from assay.core.untrusted import cap_text, clean_text

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Grade the outputs of LLMs and agents.")

EXIT_PASS, EXIT_FAIL, EXIT_INVALID = 0, 1, 2


def _fail_invalid(exc: Exception) -> None:
    typer.echo(f"error: {cap_text(clean_text(str(exc)), 2000)}", err=True)
    raise typer.Exit(EXIT_INVALID)


def _delegate(fn: Callable[..., int], *args: Any, **kwargs: Any) -> None:
    """Run a command's body; invalid input, a file that cannot be read or written, or any
    other failure exits 2 with one line, never a traceback (``ASSAY_DEBUG=1`` shows it)."""
    try:
        code = fn(*args, **kwargs)
    except AssayError as exc:
        _fail_invalid(exc)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        _fail_invalid(AssayError(f"{where}{exc.strerror or exc}"))
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001  the edge turns every failure into one line
        if _debug():
            raise
        _fail_invalid(AssayError(f"internal error ({type(exc).__name__}: {exc}); "
                                 "please report it; ASSAY_DEBUG=1 shows the traceback"))
    raise typer.Exit(code)


def _debug() -> bool:
    from assay.runner.resources import Defaults

    try:
        return Defaults.settings().debug
    except AssayError:
        return False


# Options shared by several commands.
Threshold = Annotated[Optional[float], typer.Option(
    "--threshold", min=0.0, max=1.0, help="Minimum weighted score for a sample to pass.")]
ResultsFile = Annotated[Path, typer.Argument(help="A results JSONL written by `assay run --out`.")]
Junit = Annotated[Optional[Path], typer.Option("--junit", help="Write a JUnit XML report for CI.")]


@app.command()
def run(
    suite: Annotated[Path, typer.Argument(
        help="eval.yaml (assay, waza or Vally format) or a directory holding one.")],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Write results JSONL: one line per sample.")] = None,
    junit: Junit = None,
    results: Annotated[Optional[Path], typer.Option(
        "--results", help="Outputs to grade (JSONL/CSV), overriding the suite's dataset.")] = None,
    threshold: Threshold = None,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-j", min=1, help="Concurrent evaluations for sandbox, program and LLM graders.")] = 8,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Skip samples already in --out and append the rest.")] = False,
    cost_ordered: Annotated[Optional[bool], typer.Option(
        "--cost-ordered/--no-cost-ordered", help="Skip costlier graders once a sample can no longer pass.")] = None,
    summary_json: Annotated[Optional[Path], typer.Option(
        "--summary-json", help="Write the summary (per grader counts) as JSON.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the one-line total.")] = False,
    export: Annotated[Optional[str], typer.Option(
        "--export", help="Also write results shaped for another tool: waza or vally (JSON).")] = None,
    export_path: Annotated[Optional[Path], typer.Option(
        "--export-path", help="Where --export writes (default: results.<tool>.json).")] = None,
    dialect: Annotated[Optional[str], typer.Option(
        "--dialect", help="Read the suite as assay, waza or vally rather than detecting it.")] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Ask every LLM judge afresh instead of reusing cached replies "
                           "(fresh replies still refresh the cache).")] = False,
) -> None:
    """Grade every sample of a suite with every grader; exit 0 if all pass, 1 if not, 2 if invalid."""
    from assay.cli.run_cmd import execute

    if resume and out is None:
        _fail_invalid(AssayError("--resume needs --out (the results file to continue)"))
    if export not in (None, "waza", "vally"):
        _fail_invalid(AssayError(f"--export: unknown format {export!r}; use waza or vally"))
    _delegate(execute, suite, out=out, junit=junit, results=results, threshold=threshold,
              concurrency=concurrency, resume=resume, cost_ordered=cost_ordered,
              summary_json=summary_json, quiet=quiet, export=export, export_path=export_path, dialect=dialect,
              no_cache=no_cache)


@app.command("review")
def review_cmd(
    results: ResultsFile,
    sample: Annotated[str, typer.Option("--sample", "-s", help="Sample id.")],
    grader: Annotated[str, typer.Option("--grader", "-g", help="Name of the human grader.")],
    passed: Annotated[bool, typer.Option("--pass/--fail", help="The reviewer's verdict.")],
    score: Annotated[Optional[float], typer.Option(
        "--score", min=0.0, max=1.0, help="Score in [0, 1] (default 1 or 0).")] = None,
    comment: Annotated[Optional[str], typer.Option("--comment", "-m", help="Why.")] = None,
    reviewer: Annotated[Optional[str], typer.Option("--reviewer", help="Who reviewed.")] = None,
    threshold: Threshold = None,
) -> None:
    """Record a human review of a pending result and print the updated report."""
    from assay.cli.review_cmd import review

    _delegate(review, results, sample, grader, passed, score, comment, reviewer, threshold)


@app.command("report")
def report_cmd(
    results: ResultsFile,
    threshold: Threshold = None,
    junit: Junit = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Summarise a results file again, with human reviews applied."""
    from assay.cli.review_cmd import report

    _delegate(report, results, threshold=threshold, junit=junit, as_json=as_json)


@app.command("calibrate")
def calibrate_cmd(
    results: ResultsFile,
    judge: Annotated[str, typer.Option("--judge", help="Name of the judge grader to calibrate.")],
    labels: Annotated[Optional[Path], typer.Option(
        "--labels", help="Human labels, JSONL {sample_id, passed, score?} (default: the reviews of RESULTS).")] = None,
    suite: Annotated[Optional[Path], typer.Option(
        "--suite", help="The suite as it is now: a changed judge (rubric, model, parameters) makes it stale.")] = None,
    min_labels: Annotated[int, typer.Option("--min-labels", min=1, help="Fewest labels to be calibrated.")] = 20,
    min_kappa: Annotated[float, typer.Option(
        "--min-kappa", min=-1.0, max=1.0, help="Lowest Cohen's kappa to be calibrated.")] = 0.6,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (for CI).")] = False,
    record: Annotated[bool, typer.Option(
        "--record/--no-record", help="Keep the outcome in RESULTS' .calibration.json for `assay report`.")] = True,
) -> None:
    """Compare a judge with human labels: agreement, kappa, TPR/TNR, best threshold, ROC, and a
    status (exit 0 when calibrated, 1 when uncalibrated or stale)."""
    from assay.cli.calibrate_cmd import calibrate

    _delegate(calibrate, results, judge, labels=labels, suite=suite, min_labels=min_labels, min_kappa=min_kappa,
              as_json=as_json, record=record)


@app.command()
def graders(
    type_: Annotated[Optional[str], typer.Argument(metavar="TYPE", help="Show one grader's config schema.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print every grader with its config JSON Schema as JSON.")] = False,
) -> None:
    """List the registered graders: one-line description and the JSON Schema of each config."""
    from assay.cli.info import show_graders

    raise typer.Exit(show_graders(type_, as_json))


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Report which isolation layers this machine offers and whether untrusted code can run."""
    from assay.cli.info import show_doctor

    _delegate(show_doctor, as_json)  # a malformed ASSAY_* setting is one line, not a traceback


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
