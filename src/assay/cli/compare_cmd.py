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
    import httpx2
    from pydantic.alias_generators import to_snake

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    endpoint = f"{url.rstrip('/')}/api/v1/runs/{base}/compare/{new}"
    try:
        reply = httpx2.get(endpoint, headers=headers, params={"adjust": adjust, "alpha": alpha},
                           timeout=SERVICE_TIMEOUT_S)
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


def compare(base: str, new: str, *, service: str | None, token: str | None, options: Options) -> int:
    if options.adjust not in ADJUSTMENTS:
        raise AssayError(f"--adjust: unknown method {options.adjust!r}; use {', '.join(ADJUSTMENTS)}")
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
