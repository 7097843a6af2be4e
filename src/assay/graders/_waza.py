"""What waza's Go graders share (microsoft/waza ``internal/graders/``): results scored as
passed checks / checks, the session digest (tool names, calls, token usage) read from a
sample, and the sequence matching with precision / recall / F1 of ``action_sequence`` and
``skill_invocation``."""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from assay.core.grader import Grader
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern, PatternError


def checks_result(grader: Grader[Any], failures: list[str], total: int, what: str,
                  details: dict[str, Any] | None = None) -> GraderResult:
    """waza's verdict: passed when no check failed; score = (checks - failures) / checks
    (1.0 with no checks); the reason lists the failures, joined with ``; ``."""
    score = (total - len(failures)) / total if total > 0 else 1.0
    reason = "; ".join(failures) if failures else f"All {what} checks passed"
    return grader.scored_result(not failures, max(0.0, min(1.0, score)), reason,
                                {**(details or {}), "failures": failures})


def go_pattern(source: str, *, ignore_case: bool = False) -> CompiledPattern:
    """A Go ``regexp`` pattern (RE2 syntax; inline ``(?i)`` flags work as in Go). Patterns Go
    cannot compile (backreferences, lookaround) are refused, not run by a backtracking engine."""
    pat = CompiledPattern(source, "i" if ignore_case else "")
    if pat.engine != "re2":
        raise PatternError("invalid regular expression for Go's regexp (RE2): backreferences and "
                           "lookaround are not supported")
    return pat


def check_patterns(values: Sequence[str], field: str, *, ignore_case: bool = False) -> None:
    """Raise ValueError naming the first pattern that does not compile."""
    for i, source in enumerate(values):
        try:
            go_pattern(source, ignore_case=ignore_case)
        except PatternError as exc:
            raise ValueError(f"{field} item {i}: {exc}") from None


def workspace_relative(path: str, field: str) -> str:
    """waza's ``validatePathInWorkspace``: a path must be relative and stay inside the workspace."""
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise ValueError(f"{field}: path {path!r} is absolute; write it relative to the workspace")
    norm = posixpath.normpath(path.replace("\\", "/"))
    if norm == "." or norm == ".." or norm.startswith("../"):
        raise ValueError(f"{field}: path {path!r} resolves outside the workspace")
    return path


class ToolCall(NamedTuple):
    """One tool call of waza's session digest: name and its ``command``/``path``/``skill`` arguments."""

    name: str
    arguments: dict[str, Any]


def _digest(sample: Sample) -> Mapping[str, Any] | None:
    digest = sample.metadata.get("session_digest") or sample.metadata.get("session")
    return digest if isinstance(digest, Mapping) else None


def session_calls(sample: Sample) -> list[ToolCall]:
    """The run's tool calls in order: the results file's ``session_digest.tool_calls`` when the
    sample carries it (waza's own digest), else the transcript's tool calls."""
    digest = _digest(sample)
    if digest is not None and isinstance(digest.get("tool_calls"), list):
        out = []
        for call in digest["tool_calls"]:
            if isinstance(call, Mapping):
                args = call.get("arguments")
                out.append(ToolCall(str(call.get("name") or ""), dict(args) if isinstance(args, Mapping) else {}))
        return out
    # waza's event collector drops ``report_intent`` calls before they reach the digest
    return [ToolCall(e.name or "", dict(e.arguments or {})) for e in sample.tool_calls if e.name != "report_intent"]


def tools_used(sample: Sample) -> list[str]:
    """waza's ``SessionDigest.ToolsUsed``: every call's tool name, in order, repeats kept."""
    digest = _digest(sample)
    if digest is not None and isinstance(digest.get("tools_used"), list):
        return [str(t) for t in digest["tools_used"]]
    return [c.name for c in session_calls(sample)]


def tool_call_count(sample: Sample) -> int:
    digest = _digest(sample)
    if digest is not None and isinstance(digest.get("tool_call_count"), int):
        return digest["tool_call_count"]
    return len(tools_used(sample))


def token_total(sample: Sample) -> int | None:
    """Input + output tokens of the run, or None when nothing recorded usage (waza then
    passes its ``max_tokens`` check)."""
    digest = _digest(sample)
    usage = digest.get("usage") if digest is not None else None
    if isinstance(usage, Mapping):
        return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    counted = [e for e in sample.transcript if e.input_tokens is not None or e.output_tokens is not None]
    if not counted:
        return None
    return sum((e.input_tokens or 0) + (e.output_tokens or 0) for e in counted)


def skills_invoked(sample: Sample) -> list[str]:
    """Skills invoked, in order: ``metadata.skill_invocations`` (names or ``{name}``) when
    given, else the calls of the ``skill`` tool (its ``skill`` argument). waza takes them from
    ``skill.invoked`` session events, which its saved transcripts do not keep."""
    given = sample.metadata.get("skill_invocations")
    if isinstance(given, list):
        return [str(s.get("name") or "") if isinstance(s, Mapping) else str(s) for s in given]
    return [str(c.arguments.get("skill")) for c in session_calls(sample)
            if c.name == "skill" and c.arguments.get("skill")]


def in_order(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Every expected item appears in ``actual`` in order, extra items allowed between."""
    i = 0
    for a in actual:
        if i < len(expected) and a == expected[i]:
            i += 1
    return i == len(expected)


def any_order(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Each expected item appears in ``actual`` at least as often as it is expected."""
    have = Counter(actual)
    return all(have[item] >= n for item, n in Counter(expected).items())


def _missing_counts(expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    have = Counter(actual)
    return [f"{item} (need {n}, got {have[item]})" for item, n in Counter(expected).items() if have[item] < n]


SequenceMode = Literal["exact", "in_order", "any_order"]


def sequence_match(mode: SequenceMode, expected: Sequence[str],
                   actual: Sequence[str], *, noun: str, wanted: str) -> tuple[bool, str]:
    """waza's three matching modes shared by ``action_sequence`` and ``skill_invocation``:
    whether ``actual`` matches and, when it does not, waza's failure text (``noun``: "actions"
    or "skills"; ``wanted``: "expected" or "required")."""
    if mode == "exact":
        return (list(actual) == list(expected),
                f"Exact match failed: expected {len(expected)} {noun} {expected}, got {len(actual)} {noun} {actual}")
    if mode == "in_order":
        return (in_order(expected, actual), f"In-order match failed: not all {wanted} {noun} {expected} "
                                            f"appeared in order within actual {actual}")
    return (any_order(expected, actual),
            f"Any-order match failed: missing or insufficient {noun}: " + ", ".join(_missing_counts(expected, actual)))


def precision_recall_f1(expected: Sequence[str], actual: Sequence[str]) -> tuple[float, float, float]:
    """Frequency-aware precision, recall and F1 of ``actual`` against ``expected``."""
    if not expected and not actual:
        return 1.0, 1.0, 1.0
    have = Counter(actual)
    hits = sum(min(n, have[item]) for item, n in Counter(expected).items())
    precision = hits / len(actual) if actual else 0.0
    recall = hits / len(expected) if expected else 0.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1
