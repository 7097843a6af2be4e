"""Reports: JUnit XML for CI and the summary table (results JSONL: ``runner.results``)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from assay.core.aggregate import SampleVerdict, SuiteSummary
from assay.core.result import Status
from assay.core.untrusted import cap_text, xml_text
from assay.runner import figures
from assay.runner.files import write_output

if TYPE_CHECKING:
    from rich.console import JustifyMethod


def write_junit(path: Path, suite_name: str, verdicts: list[SampleVerdict], duration_s: float,
                warnings: Sequence[str] = (), summary: SuiteSummary | None = None) -> None:
    """One testsuite, one testcase per sample; failures, errors and pending (as skipped) apart;
    the loader's warnings (unknown keys a peer format ignores, results matching no task) in the
    suite's ``system-err``; with ``summary``, the pass rates and mean scores with their 95%
    intervals as the suite's ``properties``."""
    writer = JunitWriter(path, suite_name)
    writer.add(verdicts)
    writer.finish(duration_s, warnings, summary=summary)


class JunitWriter:
    """``write_junit`` for verdicts that come a chunk at a time and are not kept: each testcase
    is written to an unnamed temporary file beside ``path`` as it comes, and ``finish`` writes
    the report (whose counts come before the testcases) around them."""

    def __init__(self, path: Path, suite_name: str) -> None:
        self.path, self.suite_name = path, suite_name
        self._counts = {s: 0 for s in Status}
        try:
            self._cases: IO[bytes] = tempfile.TemporaryFile(dir=path.parent if path.parent.is_dir() else None)
        except OSError:
            self._cases = tempfile.TemporaryFile()

    def add(self, verdicts: Iterable[SampleVerdict]) -> None:
        parts = []
        for v in verdicts:
            self._counts[v.status] += 1
            parts.append(_CASE_SEP + ET.tostring(self._case(v), encoding="utf-8"))
        self._cases.write(b"".join(parts))

    def finish(self, duration_s: float, warnings: Sequence[str] = (), summary: SuiteSummary | None = None) -> None:
        """Write the report and let the temporary file go."""
        counts, total = self._counts, sum(self._counts.values())
        attrs = {"tests": str(total), "failures": str(counts[Status.FAILED]), "errors": str(counts[Status.ERROR]),
                 "skipped": str(counts[Status.PENDING]), "time": f"{duration_s:.3f}"}
        root = ET.Element("testsuites", {"name": "assay", **attrs})
        ts = ET.SubElement(root, "testsuite", {"name": _x(self.suite_name), **attrs})
        if summary is not None:
            _properties(ET.SubElement(ts, "properties"), summary)
        if total:
            ET.SubElement(ts, _SLOT)  # where the testcases go
        if warnings:
            ET.SubElement(ts, "system-err").text = _x("\n".join(f"warning: {w}" for w in warnings), 64 * 1024)
        ET.indent(root)
        head, _, tail = ET.tostring(root, encoding="utf-8", xml_declaration=True).partition(f"<{_SLOT} />".encode())
        self._cases.seek(len(_CASE_SEP))  # the first testcase follows the head's own indentation
        write_output(self.path, _framed(head, self._cases, tail))
        self._cases.close()

    def _case(self, v: SampleVerdict) -> ET.Element:
        name = self.suite_name
        elapsed = sum(r.latency_ms for r in v.results) / 1000.0
        case = ET.Element("testcase", classname=_x(name), name=_x(v.id), time=f"{elapsed:.4f}")
        if v.status is Status.FAILED:
            bad = [r for r in v.results if r.status is Status.FAILED]
            msg = "; ".join(f"{r.name}: {r.reason or 'failed'}" for r in bad) or (
                "no grader scored this sample" if v.score is None else f"weighted score {v.score:.3f} below threshold")
            el = ET.SubElement(case, "failure", message=_x(msg, 500), type="failed")
            el.text = _x(_case_text(v), 64 * 1024)
        elif v.status is Status.ERROR:
            bad = [r for r in v.results if r.status is Status.ERROR]
            msg = "; ".join(f"{r.name}: [{r.error}] {r.reason}" for r in bad)
            el = ET.SubElement(case, "error", message=_x(msg, 500), type=str(bad[0].error) if bad else "error")
            el.text = _x(_case_text(v), 64 * 1024)
        elif v.status is Status.PENDING:
            ET.SubElement(case, "skipped", message="awaiting human review")
        ET.indent(case, level=2)
        return case


_SLOT = "assay-testcases"
_CASE_SEP = b"\n    "
"""What ``ET.indent`` puts between two testcases (their depth is two)."""


def _framed(head: bytes, cases: IO[bytes], tail: bytes) -> Iterator[bytes]:
    yield head
    while block := cases.read(1024 * 1024):
        yield block
    yield tail


def _properties(props: ET.Element, summary: SuiteSummary) -> None:
    """``pass_rate``, ``pass_rate_ci_low``/``_high``, ``mean_score`` (and its interval) and
    ``left_out`` for the suite, then the same prefixed ``grader.<name>.`` for each grader."""
    def add(prefix: str, doc: dict) -> None:
        for key in ("pass_rate", "mean_score"):
            if doc.get(key) is not None:
                ET.SubElement(props, "property", name=_x(prefix + key), value=f"{doc[key]:.6f}")
            if doc.get(f"{key}_ci"):
                lo, hi = doc[f"{key}_ci"]
                ET.SubElement(props, "property", name=_x(f"{prefix}{key}_ci_low"), value=f"{lo:.6f}")
                ET.SubElement(props, "property", name=_x(f"{prefix}{key}_ci_high"), value=f"{hi:.6f}")
        ET.SubElement(props, "property", name=_x(prefix + "left_out"), value=str(doc["left_out"]))

    add("", summary.to_dict())
    for g in summary.graders:
        add(f"grader.{g.name}.", g.to_dict())


def _x(text: str, limit: int = 1024) -> str:
    """Text as XML can hold it: no control characters or lone surrogates, capped."""
    return xml_text(cap_text(text, limit))


def _case_text(v: SampleVerdict) -> str:
    lines = [f"score: {v.score if v.score is None else round(v.score, 4)}"]
    for r in v.results:
        score = "-" if r.score is None else f"{r.score:.3f}"
        lines.append(f"{r.status.value:7} {r.name} (w={r.weight:g}) score={score} {r.reason or ''}".rstrip())
    if v.skipped:
        lines.append("skipped: " + ", ".join(v.skipped))
    return "\n".join(lines)


def summary_table(summary: SuiteSummary, title: str) -> Any:
    """A Rich table: per grader, pass rate and mean score with their 95% intervals, errors;
    with a caption for the samples' pass rate and, when tasks were attempted several times,
    pass@k, pass^k and self-agreement."""
    from rich.table import Table

    graders = summary.graders
    k = next((g.intervals.repeats.k for g in graders if g.intervals.repeats is not None), None)
    show_pending = any(g.pending for g in graders)
    show_skipped = any(g.skipped for g in graders)
    table = Table(title=title, title_justify="left", caption=_caption(summary), caption_justify="left")
    columns: list[tuple[str, JustifyMethod]] = [
        ("grader", "left"), ("type", "left"), ("weight", "right"), ("pass rate [95% CI]", "right"),
        ("mean score [95% CI]", "right"), ("passed", "right"), ("failed", "right"), ("errors", "right")]
    columns += [(f"pass@{k} [95% CI]", "right")] if k is not None else []
    columns += [("pending", "right")] if show_pending else []
    columns += [("skipped", "right")] if show_skipped else []
    for col, just in columns:
        table.add_column(col, justify=just)
    for g in graders:
        rate = figures.rate(g.pass_rate, g.intervals.pass_rate)
        mean = figures.mean(g.mean_score, g.intervals.mean_score)
        errors = str(g.errors)
        if g.error_codes:
            errors += " (" + ", ".join(f"{k}: {n}" for k, n in sorted(g.error_codes.items())) + ")"
        weight = "-" if g.weight is None else f"{g.weight:g}"
        row = [g.name, g.type, weight, rate, mean, str(g.passed), str(g.failed), errors]
        again = g.intervals.repeats
        row += [("-" if again is None else figures.rate(again.pass_at_k, again.pass_at_k_ci))] if k is not None else []
        row += [str(g.pending)] if show_pending else []
        row += [str(g.skipped)] if show_skipped else []
        table.add_row(*row)
    return table


def _caption(summary: SuiteSummary) -> str:
    parts = [f"samples: pass rate {figures.rate(summary.pass_rate, summary.intervals.pass_rate)}"]
    if summary.errors + summary.pending:
        parts.append(f"{summary.errors + summary.pending} left out (errors, pending)")
    if summary.intervals.clusters:
        parts.append(f"intervals clustered by task ({summary.intervals.clusters} tasks)")
    again = summary.intervals.repeats
    if again:
        k = again.k
        parts.append(f"over {again.tasks} tasks with {k}+ scored attempts: pass@{k} "
                     f"{figures.rate(again.pass_at_k, again.pass_at_k_ci)}, pass^{k} "
                     f"{figures.rate(again.pass_hat_k, again.pass_hat_k_ci)}, self-agreement "
                     f"{figures.rate(again.consistency, again.consistency_ci)}")
    graders = [(g.name, g.intervals.repeats) for g in summary.graders]
    for name, r in [("samples", again), *graders]:
        if r is not None and r.short:
            named = ", ".join(map(str, r.short_tasks)) + (", ..." if r.short > len(r.short_tasks) else "")
            parts.append(f"{name}: {r.short} tasks with fewer than {r.k} scored attempts left out of pass@{r.k} "
                         f"({named})")
    agreement = ", ".join(f"{name} {figures.rate(r.consistency, r.consistency_ci)}" for name, r in graders
                          if r is not None)
    if again and agreement:
        parts.append(f"grader self-agreement: {agreement}")
    return "; ".join(parts)


def inconsistent(verdicts: Sequence[SampleVerdict]) -> list[dict[str, Any]]:
    """Per-sample consistency across attempts (repeats, trials): each task and grader whose
    attempts disagreed, ``{sample, grader, passed, attempts}`` (errors and pending left out), in
    the order tasks first appear. Empty when no sample was attempted twice."""
    tally: dict[tuple[str, str], list[int]] = {}
    for v in verdicts:
        if v.cluster is None:
            continue
        for r in v.results:
            if r.status is Status.PASSED or r.status is Status.FAILED:
                seen = tally.setdefault((v.cluster, r.name), [0, 0])
                seen[0] += r.status is Status.PASSED
                seen[1] += 1
    return [{"sample": cluster, "grader": name, "passed": c, "attempts": n}
            for (cluster, name), (c, n) in tally.items() if 0 < c < n]
