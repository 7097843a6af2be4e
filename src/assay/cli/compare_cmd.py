"""`assay compare BASE NEW`: did the change help, or is it noise? Two results files (or two
service runs) compared pair by pair (``core.compare``), printed as a table or JSON; with
``--fail-on-regression``, exit 1 when a pass rate fell significantly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from assay.core.compare import compare_runs
from assay.core.errors import AssayError
from assay.runner import figures
from assay.runner.reviews import apply_reviews, load_reviews, load_verdicts

MAX_LISTED = 20
SERVICE_TIMEOUT_S = 120.0
_PAGES_ONLY = frozenset({"baseReasonCode", "baseReasonArgs", "newReasonCode", "newReasonArgs"})


def comparison_of_files(base: Path, new: Path) -> dict[str, Any]:
    """The comparison of two results files (human reviews applied, as `assay report` does)."""
    return compare_runs(_reviewed(base), _reviewed(new)).to_dict()


def _reviewed(path: Path) -> list:
    got = load_verdicts(path)
    reviews = load_reviews(path)
    return apply_reviews(got, reviews, threshold=None) if reviews else got


def comparison_from_service(url: str, base: str, new: str, token: str | None) -> dict[str, Any]:
    """``GET {url}/api/v1/runs/{base}/compare/{new}``, its camelCase keys turned back to the
    snake_case of ``assay compare --json`` (the flips' reason codes, which serve the pages, left
    out: the same fields as a comparison of files)."""
    return _service_data(url, f"/api/v1/runs/{base}/compare/{new}", {}, token)


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
    doc = compare_runs(_reviewed(baseline), verdicts).to_dict()
    show(doc, str(baseline), "this run", as_json=False, alpha=alpha)
    return gate(doc, alpha) if fail_on_regression else run_code


def regressions(doc: dict[str, Any], alpha: float) -> list[str]:
    """Graders (and ``overall``) whose pass rate fell with p < ``alpha``."""
    return [g["grader"] for g in [*doc["graders"], doc["overall"]]
            if g["delta"] is not None and g["delta"] < 0 and g["p_value"] is not None and g["p_value"] < alpha]


def compare(base: str, new: str, *, service: str | None, token: str | None, as_json: bool,
            fail_on_regression: bool, alpha: float, rule: str | None = None, split: str | None = None) -> int:
    if rule is not None:
        if service is None:
            raise AssayError("--rule needs --service: the online rule's results are in an assay service")
        doc = online_comparison(service, rule, base, new, split, token)
        show_unpaired(doc, base, new, as_json=as_json, alpha=alpha)
        return gate(doc, alpha) if fail_on_regression else 0
    if split is not None:
        raise AssayError("--split needs --rule: it names an attribute of an online rule's spans")
    if service is not None:
        doc = comparison_from_service(service, base, new, token)
    else:
        doc = comparison_of_files(Path(base), Path(new))
    show(doc, base, new, as_json=as_json, alpha=alpha)
    return gate(doc, alpha) if fail_on_regression else 0


def gate(doc: dict[str, Any], alpha: float) -> int:
    """1 when a pass rate fell with p < ``alpha`` (said on stderr), else 0."""
    import sys

    fell = regressions(doc, alpha)
    if fell:
        print(f"regression: pass rate fell with p < {alpha:g} for {', '.join(fell)}", file=sys.stderr)
    return 1 if fell else 0


def show_unpaired(doc: dict[str, Any], base: str, new: str, *, as_json: bool, alpha: float) -> None:
    """An online rule's two slices: independent samples, so no pairs and no flips."""
    if as_json:
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    from rich.table import Table

    from assay.cli._console import make_console

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
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    from rich.table import Table

    from assay.cli._console import make_console

    console = make_console()
    table = Table(title=f"{new} against {base} (paired by sample id)", title_justify="left")
    for col in ("grader", "pairs", "base", "new", "delta, pts [95% CI]", "p", "→ fail", "→ pass",
                "score delta [95% CI]"):
        table.add_column(col, justify="left" if col == "grader" else "right", no_wrap=True)
    for g in [*doc["graders"], doc["overall"]]:
        mark = " *" if g["p_value"] is not None and g["p_value"] < alpha else ""
        table.add_row(g["grader"] if g["grader"] != "overall" else "[bold]samples[/]", str(g["pairs"]),
                      figures.rate(g["base_pass_rate"], None), figures.rate(g["new_pass_rate"], None),
                      figures.delta(g["delta"], g["delta_ci"]), figures.p_value(g["p_value"]) + mark,
                      str(len(g["to_fail"])), str(len(g["to_pass"])),
                      figures.delta(g["score_delta"], g["score_delta_ci"], percent=False))
    console.print(table)
    console.print(f"* p < {alpha:g}: exact McNemar test on the samples that changed. The interval is where the "
                  "true difference lies with 95% confidence if these samples are representative; a p-value "
                  "above alpha means no evidence of a change, not evidence of none.", markup=False)
    overall = doc["overall"]
    for way, title in (("to_fail", "passed in base, failed in new"), ("to_pass", "failed in base, passed in new")):
        flips = [f for f in overall.get("flips", []) if f["direction"] == way]
        if flips:
            console.print(f"[bold]{title}[/] ({len(flips)}):")
        for f in flips[:MAX_LISTED]:
            console.print(f"  {f['id']}\n    base: {f['base_reason'] or 'passed'}\n"
                          f"    new:  {f['new_reason'] or 'passed'}", markup=False)
        if len(flips) > MAX_LISTED:
            console.print(f"  ... and {len(flips) - MAX_LISTED} more (--json lists every one)")
    for key, where in (("base_only", base), ("new_only", new)):
        ids = doc["unpaired"][key]
        if ids:
            shown = ", ".join(ids[:MAX_LISTED]) + (" ..." if len(ids) > MAX_LISTED else "")
            console.print(f"only in {where} ({len(ids)}, not paired): {shown}", markup=False)
    left = overall.get("left_out") or 0
    if left:
        console.print(f"left out: {left} paired samples errored or await review in one run or both", markup=False)
