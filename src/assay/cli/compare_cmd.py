"""`assay compare BASE NEW`: did the change help, or is it noise? Two results files (or two
service runs) compared pair by pair (``core.compare``), printed as a table or JSON; with
``--fail-on-regression``, exit 1 when a pass rate fell significantly."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cli._json_stream import write_json
from assay.core.compare import compare_runs
from assay.core.errors import AssayError
from assay.core.gate import gate_failures
from assay.core.multiplicity import ADJUSTMENTS
from assay.runner.comparing.files import compare_files
from assay.runner.reviews import apply_reviews, load_reviews, load_verdicts

SERVICE_TIMEOUT_S = 120.0
_PAGES_ONLY = frozenset({"baseReasonCode", "baseReasonArgs", "newReasonCode", "newReasonArgs"})


def _reviewed(path: Path) -> list:
    got = load_verdicts(path)
    reviews = load_reviews(path)
    return apply_reviews(got, reviews, threshold=None) if reviews else got


def comparison_from_service(url: str, base: str, new: str, token: str | None, *, adjust: str = "holm",
                            alpha: float = 0.05) -> dict[str, Any]:
    """``GET {url}/api/v1/runs/{base}/compare/{new}``, its camelCase keys turned back to the
    snake_case of ``assay compare --json`` (the flips' reason codes, which serve the pages, left
    out: the same fields as a comparison of files)."""
    return _service_data(url, f"/api/v1/runs/{base}/compare/{new}", {"adjust": adjust, "alpha": str(alpha)}, token)


def online_comparison(url: str, rule: str, base: str, new: str, split: str | None,
                      token: str | None) -> dict[str, Any]:
    """``GET {url}/api/v1/online-rules/{rule}/compare``: two windows (``START/END``) or, with
    ``split``, two values of that attribute, compared unpaired; snake_case keys as above."""
    params = {"base": base, "new": new, **({"split": split} if split else {})}
    return _service_data(url, f"/api/v1/online-rules/{rule}/compare", params, token)


def _service_data(url: str, path: str, params: dict[str, str], token: str | None) -> dict[str, Any]:
    import httpx2
    from pydantic.alias_generators import to_snake

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    endpoint = url.rstrip("/") + path
    try:
        reply = httpx2.get(endpoint, params=params, headers=headers, timeout=SERVICE_TIMEOUT_S)
    except httpx2.HTTPError as exc:
        raise AssayError(f"--service {url}: cannot reach the service ({exc})") from None
    try:
        body = reply.json()
    except ValueError:
        raise AssayError(f"{endpoint}: answered {reply.status_code} without JSON") from None
    if reply.status_code != 200 or not isinstance(body, dict) or "data" not in body:
        message = body.get("message") if isinstance(body, dict) else None
        hint = " (set --token or ASSAY_TOKEN)" if reply.status_code == 401 else ""
        raise AssayError(f"{endpoint}: {reply.status_code} {message or 'unexpected answer'}{hint}")

    def snake(value: Any) -> Any:
        if isinstance(value, dict):
            return {to_snake(k): snake(v) for k, v in value.items() if k not in _PAGES_ONLY}
        if isinstance(value, list):
            return [snake(v) for v in value]
        return value

    return snake(body["data"])


def against_baseline(baseline: Path, verdicts: list, run_code: int, *, fail_on_regression: bool,
                     alpha: float) -> int:
    """`assay run --baseline`: the run's verdicts compared with ``baseline``'s, printed; the
    exit code is the gate's with ``fail_on_regression``, else the run's own."""
    doc = compare_runs(_reviewed(baseline), verdicts, alpha=alpha).to_dict()
    options = Options(as_json=False, fail_on_regression=fail_on_regression, alpha=alpha)
    code = report(doc, str(baseline), "this run", options)
    return code if code or fail_on_regression else run_code


@dataclass(frozen=True, slots=True)
class Options:
    """How `assay compare` reports and gates (its flags)."""

    as_json: bool = False
    fail_on_regression: bool = False
    alpha: float = 0.05
    adjust: str = "holm"
    margin: float | None = None
    """Non-inferiority margin as a share (0.02 for 2 points), or None for the p-value gate."""
    allow_empty: bool = False


def compare(base: str, new: str, *, service: str | None, token: str | None, options: Options,
            rule: str | None = None, split: str | None = None) -> int:
    if options.adjust not in ADJUSTMENTS:
        raise AssayError(f"--adjust: unknown method {options.adjust!r}; use {', '.join(ADJUSTMENTS)}")
    if rule is not None:
        if service is None:
            raise AssayError("--rule needs --service: the online rule's results are in an assay service")
        doc = online_comparison(service, rule, base, new, split, token)
        show_unpaired(doc, base, new, as_json=options.as_json, alpha=options.alpha)
        return gate(doc, options.alpha, options.margin) if options.fail_on_regression else 0
    if split is not None:
        raise AssayError("--split needs --rule: it names an attribute of an online rule's spans")
    if service is not None:
        doc = comparison_from_service(service, base, new, token, adjust=options.adjust, alpha=options.alpha)
        return report(doc, base, new, options)
    with compare_files(Path(base), Path(new), adjust=options.adjust, alpha=options.alpha) as doc:
        return report(doc, base, new, options)


def nothing_compared(doc: dict[str, Any], base: str, new: str) -> str | None:
    """Why the comparison compared nothing (an empty run, no sample or no grader in both), or None."""
    overall = doc["overall"]
    paired = overall["pairs"] + overall["left_out"]
    for name, alone in ((base, "base_only"), (new, "new_only")):
        if paired + len(doc["unpaired"][alone]) == 0:
            return f"{name} holds no graded samples"
    if paired == 0:
        return "no sample is in both runs (their ids differ)"
    graders = doc["graders"]
    if graders and all(g.get("present", "both") != "both" for g in graders):
        return "no grader is in both runs"
    if overall["pairs"] == 0:
        return f"none of the {paired} samples in both runs has a verdict in both (errors or pending reviews)"
    return None


def report(doc: dict[str, Any], base: str, new: str, options: Options) -> int:
    """Print the comparison and return the exit code: 2 when it compared nothing (unless
    ``allow_empty``), else the gate's with ``fail_on_regression``, else 0."""
    empty = nothing_compared(doc, base, new)
    if empty is not None and not options.allow_empty:
        raise AssayError(f"nothing to compare: {empty} (--allow-empty to report it anyway)")
    show(doc, base, new, as_json=options.as_json, alpha=options.alpha)
    if empty is not None:
        print(f"warning: nothing to compare: {empty}", file=sys.stderr)
        return 0
    return gate(doc, options.alpha, options.margin) if options.fail_on_regression else 0


def gate(doc: dict[str, Any], alpha: float, margin: float | None = None) -> int:
    """1 when a comparison fails the gate (``core.gate``; said on stderr), else 0."""
    failed = gate_failures(doc, alpha, margin)
    if not failed:
        return 0
    if margin is None:
        adjusted = "" if doc.get("adjust", "none") == "none" else f" (adjusted: {doc['adjust']})"
        print(f"regression: pass rate fell with p < {alpha:g}{adjusted} for {', '.join(g for g, _ in failed)}",
              file=sys.stderr)
    else:
        print(f"regression: a drop of {margin * 100:g} pts or more is not ruled out for "
              f"{', '.join(f'{g} ({why})' for g, why in failed)}", file=sys.stderr)
    return 1


def show_unpaired(doc: dict[str, Any], base: str, new: str, *, as_json: bool, alpha: float) -> None:
    """An online rule's two slices: independent samples, so no pairs and no flips."""
    if as_json:
        import orjson

        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    from rich.table import Table

    from assay.cli._console import make_console
    from assay.runner import figures

    console = make_console()
    table = Table(title=f"{new} against {base} (unpaired: independent samples of traffic)", title_justify="left")
    for col in ("grader", "base n", "new n", "base", "new", "delta, pts [95% CI]", "p", "score delta"):
        table.add_column(col, justify="left" if col == "grader" else "right", no_wrap=True)
    for g in [*doc["graders"], doc["overall"]]:
        mark = " *" if g["p_value"] is not None and g["p_value"] < alpha else ""
        table.add_row(g["grader"] if g["grader"] != "overall" else "[bold]overall[/]", str(g["base_graded"]),
                      str(g["new_graded"]), figures.rate(g["base_pass_rate"], g["base_pass_rate_ci"]),
                      figures.rate(g["new_pass_rate"], g["new_pass_rate_ci"]), figures.delta(g["delta"], g["delta_ci"]),
                      figures.p_value(g["p_value"]) + mark, figures.delta(g["score_delta"], None, percent=False))
    console.print(table)
    console.print(f"* p < {alpha:g}: pooled two-proportion z test; the interval is Newcombe's for independent "
                  "samples. Errors, not-applicable and skipped results are left out of both sides.", markup=False)


def show(doc: dict[str, Any], base: str, new: str, *, as_json: bool, alpha: float) -> None:
    if as_json:
        write_json(doc, sys.stdout)
        sys.stdout.write("\n")
        return
    from assay.cli._compare_table import print_lists, print_table
    from assay.cli._console import make_console

    console = make_console()
    print_table(console, doc, base, new, alpha=alpha)
    print_lists(console, doc, base, new)
