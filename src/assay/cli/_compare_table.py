"""The table `assay compare` prints: one row a grader when the terminal is wide enough (and
always into a pipe or file, at its full width), else one block a grader whose figures wrap
between figures, never inside one; then footnotes that
say which test gave each p-value, how the p-values were adjusted, and what is not compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from assay.core.multiplicity import ADJUSTMENT_NAMES
from assay.runner import figures

MAX_LISTED = 20
COLUMNS = ("grader", "pairs", "base", "new", "delta, pts [95% CI]", "p", "p adj", "→ fail", "→ pass",
           "score delta [95% CI]", "detects")
TESTS = {"mcnemar": "exact McNemar test on the samples that changed",
         "sign": "sign test over tasks on the change in each task's pass rate (tasks graded several times)"}


def _cells(g: dict[str, Any], alpha: float) -> list[str]:
    adjusted = g.get("p_value_adjusted")
    mark = " *" if adjusted is not None and adjusted < alpha else ""
    name = g["grader"] if g["grader"] != "overall" else "samples"
    if g.get("present", "both") != "both":
        name += f" (only in {g['present']})"
    detects = g.get("detectable")
    return [name, str(g["pairs"]), figures.rate(g["base_pass_rate"], None), figures.rate(g["new_pass_rate"], None),
            figures.delta(g["delta"], g["delta_ci"]), figures.p_value(g["p_value"]),
            figures.p_value(adjusted) + mark, str(len(g["to_fail"])), str(len(g["to_pass"])),
            figures.delta(g["score_delta"], g["score_delta_ci"], percent=False),
            "-" if detects is None else f"±{detects * 100:.1f} pts"]


def print_table(console: Console, doc: dict[str, Any], base: str, new: str, *, alpha: float) -> None:
    rows = [_cells(g, alpha) for g in [*doc["graders"], doc["overall"]]]
    title = f"{new} against {base} (paired by sample id)"
    table = Table(title=title, title_justify="left")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col == "grader" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    natural = console.measure(table, options=console.options.update_width(10_000)).maximum
    if natural <= console.width or not console.is_terminal:  # a log or a file: never wrapped, never cut
        width = console.width
        console.width = max(natural, width)
        console.print(table)
        console.width = width
    else:  # a terminal too narrow for a row a grader: a block a grader, figures wrapped whole
        console.print(title, markup=False)
        for g, row in zip([*doc["graders"], doc["overall"]], rows, strict=True):
            console.print(row[0], markup=False, style="bold")
            if g.get("present", "both") == "both":
                _wrapped(console, [f"{label} {value}" for label, value in zip(COLUMNS[1:], row[1:], strict=True)])
    _footnotes(console, doc, base, new, alpha)


def _wrapped(console: Console, pieces: Sequence[str], indent: str = "  ") -> None:
    """``pieces`` on lines no wider than the console, broken between pieces only."""
    line = ""
    for piece in pieces:
        if line and len(indent) + len(line) + 3 + len(piece) > console.width:
            console.print(indent + line, markup=False, soft_wrap=True)
            line = ""
        line = f"{line} · {piece}" if line else piece
    if line:
        console.print(indent + line, markup=False, soft_wrap=True)


def _say(console: Console, text: str) -> None:
    console.print(text, markup=False)


def _footnotes(console: Console, doc: dict[str, Any], base: str, new: str, alpha: float) -> None:
    graders = [*doc["graders"], doc["overall"]]
    for test, what in TESTS.items():
        named = [g["grader"] if g["grader"] != "overall" else "samples" for g in graders if g.get("test") == test]
        if named:
            _say(console, f"p: {what} ({', '.join(named)}).")
    adjust, tested = doc.get("adjust", "none"), doc.get("tested", 0)
    compared = sum(g.get("present", "both") == "both" and g["p_value"] is not None for g in doc["graders"])
    _say(console, f"p adj: {ADJUSTMENT_NAMES.get(adjust, adjust)} over {tested} comparisons ({compared} "
                  f"grader{'s' if compared != 1 else ''} and the samples' verdicts); * marks p adj < {alpha:g}, "
                  "which is what --fail-on-regression gates on.")
    level = alpha if adjust == "none" else alpha / max(1, tested)
    _say(console, f"detects: the smallest change in pass rate these pairs would detect with 80% power at "
                  f"{level:.3g}; a smaller real change would often go unseen.")
    _say(console, "The interval is where the true difference lies with 95% confidence if these samples are "
                  "representative; a p-value above alpha means no evidence of a change, not evidence of none.")
    for side, name in (("base", base), ("new", new)):
        alone = [g["grader"] for g in doc["graders"] if g.get("present") == side]
        if alone:
            _say(console, f"only in {name} (not compared): {', '.join(alone)}")
    for g in doc["graders"]:
        if g.get("config_changed"):
            _say(console, f"warning: grader {g['grader']!r} is configured differently in the two runs (its "
                          "fingerprint changed): its figures compare two different graders")


def print_lists(console: Console, doc: dict[str, Any], base: str, new: str) -> None:
    """The samples that flipped (the first ``MAX_LISTED`` each way), those in one run only, and
    how many were left out."""
    overall = doc["overall"]
    flips = overall.get("flips", [])
    failing = len(overall["to_fail"])
    for shown, total, title in ((flips[:min(failing, MAX_LISTED)], failing, "passed in base, failed in new"),
                                (flips[failing:failing + MAX_LISTED], len(overall["to_pass"]),
                                 "failed in base, passed in new")):
        if total:
            console.print(f"[bold]{title}[/] ({total}):")
        for f in shown:
            _say(console, f"  {f['id']}\n    base: {f['base_reason'] or 'passed'}\n"
                          f"    new:  {f['new_reason'] or 'passed'}")
        if total > MAX_LISTED:
            _say(console, f"  ... and {total - MAX_LISTED} more (--json lists every one)")
    for key, where in (("base_only", base), ("new_only", new)):
        ids = doc["unpaired"][key]
        if len(ids):
            shown = ", ".join(ids[:MAX_LISTED]) + (" ..." if len(ids) > MAX_LISTED else "")
            _say(console, f"only in {where} ({len(ids)}, not paired): {shown}")
    left = overall.get("left_out") or 0
    if left:
        _say(console, f"left out: {left} paired samples errored or await review in one run or both")
