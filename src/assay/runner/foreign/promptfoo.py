"""promptfoo's output JSON (``promptfoo eval -o results.json``), read as assay's verdicts, and
its JSON lines (``-o results.jsonl``: one EvaluateResult a line, read alike).

The file is ``{evalId, results: {version, results: [EvaluateResult], ...}, config, ...}``; every
``results.version`` from 3 on is read (the shape promptfoo has written since it dropped the
``table`` of version 2). One EvaluateResult is one sample:

- **id**: the test as promptfoo tells tests apart (its deduplication key: the vars without the
  runtime ones, ``_``-prefixed and ``sessionId``, and the red-team strategy): the test's
  ``description`` when it has one and it names one set of vars, else ``vars:`` and a short hash
  of that key. With several prompts or providers in the file, each (provider, prompt) column is
  its own sample: ``provider / prompt label / test``. A test met again in the same column
  (``--repeat``) is another attempt of that task: ``id#r2``, clustered by the test.
- **verdict**: promptfoo's own (``success``, ``score``, ``failureReason``: 0 passed, 1 failed,
  2 error), so a test ``threshold`` keeps its meaning.
- **graders**: one per assertion in ``gradingResult.componentResults``, named by its type, with
  the ``metric`` after a colon when the assertion names one (``javascript:brevity``); the same
  name twice in one test gets ``#2``. Type ``promptfoo:<assertion type>``, kind ``llm`` for the
  model-graded assertions. When the provider failed (no grading result), each assertion of the
  test is an error result carrying promptfoo's ``error``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.core.result import GraderResult, Kind, Status
from assay.runner.foreign._results import errored, graded, number, obj, text, weight_of
from assay.runner.local_engine.repeats import attempt_id

FIRST_VERSION = 3
MODEL_GRADED = frozenset({
    "llm-rubric", "g-eval", "factuality", "model-graded-factuality", "model-graded-closedqa",
    "answer-relevance", "context-faithfulness", "context-recall", "context-relevance", "select-best",
    "search-rubric", "conversation-relevance", "agent-rubric", "trajectory:goal-success"})
"""Assertion types whose verdict a model gives (promptfoo's model-graded family)."""
_LABEL_MAX = 60


def claims(doc: Any) -> bool:
    """True when ``doc`` is promptfoo's output file (of any version: an old one is refused by
    ``verdicts`` with the reason, not read as something else)."""
    inner = doc.get("results") if isinstance(doc, dict) else None
    return isinstance(inner, dict) and "version" in inner and isinstance(inner.get("results"), list) and (
        "evalId" in doc or "config" in doc or "prompts" in inner or "table" in inner)


def claims_row(row: Any) -> bool:
    """True when ``row`` is one line of promptfoo's JSON lines output (``-o results.jsonl``):
    one EvaluateResult."""
    return isinstance(row, dict) and isinstance(row.get("testCase"), dict) and "promptIdx" in row and (
        "gradingResult" in row or "success" in row)


def verdicts(doc: dict[str, Any], where: str) -> list[SampleVerdict]:
    """The samples of a promptfoo output file; SpecError naming the entry for a damaged one."""
    inner = doc["results"]
    version = inner.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < FIRST_VERSION:
        raise SpecError(f"promptfoo results version {version!r} is older than {FIRST_VERSION}, the first assay "
                        "reads; export it again with a current promptfoo (`promptfoo export`)", where=where)
    rows = inner["results"]
    return rows_verdicts(rows, [f"{where}: results.results[{i}]" for i in range(len(rows))])


def rows_verdicts(rows: list[Any], places: list[str]) -> list[SampleVerdict]:
    """The samples of promptfoo's EvaluateResult rows, ``places[i]`` naming where row i is."""
    for row, place in zip(rows, places, strict=True):
        if not isinstance(row, dict):
            raise SpecError(f"a result must be an object, got {type(row).__name__}", where=place)
    keys = _test_keys(rows)
    columns = [_column(row) for row in rows]
    one_column = len(set(columns)) <= 1
    tasks = [key if one_column else f"{column} / {key}" for key, column in zip(keys, columns, strict=True)]
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task] = counts.get(task, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for i, (row, task) in enumerate(zip(rows, tasks, strict=True)):
        n = seen[task] = seen.get(task, 0) + 1
        repeated = counts[task] > 1
        sample_id = attempt_id(task, n) if repeated else task
        out.append(_verdict(row, sample_id, task if repeated else None, places[i]))
    return out


def _verdict(row: dict[str, Any], sample_id: str, cluster: str | None, where: str) -> SampleVerdict:
    grading = row.get("gradingResult")
    results = _graders(grading, where) if isinstance(grading, dict) else _unrun(row, where)
    status = _status(row, grading)
    score = number(row.get("score"))
    score = None if status is Status.ERROR or score is None else min(1.0, max(0.0, score))
    return SampleVerdict(sample_id, status, status is Status.PASSED, score, results, [], cluster)


def _status(row: dict[str, Any], grading: Any) -> Status:
    reason = row.get("failureReason")
    if reason in (0, 1, 2) and not isinstance(reason, bool):
        return (Status.PASSED, Status.FAILED, Status.ERROR)[reason]
    # Files written before failureReason existed: an error is a failure nothing graded.
    if row.get("success") is True:
        return Status.PASSED
    return Status.FAILED if isinstance(grading, dict) or not row.get("error") else Status.ERROR


def _graders(grading: dict[str, Any], where: str) -> list[GraderResult]:
    parts = grading.get("componentResults") or []
    if not isinstance(parts, list):
        raise SpecError("`componentResults` must be a list", where=f"{where}.gradingResult")
    out: list[GraderResult] = []
    names: dict[str, int] = {}
    for j, part in enumerate(parts):
        at = f"{where}.gradingResult.componentResults[{j}]"
        if not isinstance(part, dict) or not isinstance(part.get("pass"), bool):
            raise SpecError("an assertion result must be an object with a boolean `pass`", where=at)
        assertion = obj(part.get("assertion"))
        kind_of, name = _name(assertion, names)
        details: dict[str, Any] = {k: assertion[k] for k in ("type", "metric") if k in assertion}
        metadata = obj(part.get("metadata"))
        if metadata.get("graderError"):
            out.append(errored(name, f"promptfoo:{kind_of}", _kind(kind_of), part.get("reason"),
                               weight=weight_of(assertion.get("weight"))))
            continue
        score = number(part.get("score"))
        out.append(graded(name, f"promptfoo:{kind_of}", _kind(kind_of), part["pass"],
                          score if score is not None else float(part["pass"]), part.get("reason"),
                          weight_of(assertion.get("weight")), details))
    return out


def _unrun(row: dict[str, Any], where: str) -> list[GraderResult]:
    """The test's assertions as errors: the provider failed, so none of them graded."""
    case = obj(row.get("testCase"))
    asserts = case.get("assert") or []
    if not isinstance(asserts, list):
        raise SpecError("`testCase.assert` must be a list", where=where)
    names: dict[str, int] = {}
    out = []
    for assertion in asserts:
        kind_of, name = _name(obj(assertion), names)
        out.append(errored(name, f"promptfoo:{kind_of}", _kind(kind_of), row.get("error") or "not graded",
                           weight=weight_of(obj(assertion).get("weight"))))
    return out


def _name(assertion: dict[str, Any], names: dict[str, int]) -> tuple[str, str]:
    """The assertion's type and the grader name it gets in this test (``type[:metric][#n]``)."""
    kind_of = text(assertion.get("type")) or "assertion"
    metric = text(assertion.get("metric"))
    base = f"{kind_of}:{metric}" if metric else kind_of
    n = names[base] = names.get(base, 0) + 1
    return kind_of, base if n == 1 else f"{base}#{n}"


def _kind(assertion_type: str) -> Kind:
    return "llm" if assertion_type in MODEL_GRADED else "code"


def _test_keys(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's test as promptfoo tells tests apart, as readable as it stays unique."""
    hashes = [_dedup_hash(row) for row in rows]
    descriptions = [_description(row) for row in rows]
    named: dict[str, set[str]] = {}
    for said, h in zip(descriptions, hashes, strict=True):
        if said is not None:
            named.setdefault(said, set()).add(h)
    keys = []
    for said, h in zip(descriptions, hashes, strict=True):
        if said is None:
            keys.append(f"vars:{h}")
        else:
            keys.append(said if len(named[said]) == 1 else f"{said} [{h}]")
    return keys


def _description(row: dict[str, Any]) -> str | None:
    said = obj(row.get("testCase")).get("description")
    said = said if isinstance(said, str) and said.strip() else row.get("description")
    return said.strip() if isinstance(said, str) and said.strip() else None


def _dedup_hash(row: dict[str, Any]) -> str:
    case = obj(row.get("testCase"))
    raw_vars = case.get("vars", row.get("vars"))
    kept = {k: v for k, v in raw_vars.items() if not (k.startswith("_") or k == "sessionId")} \
        if isinstance(raw_vars, dict) else raw_vars
    metadata = obj(case.get("metadata"))
    key = {"vars": kept, "strategyId": metadata.get("strategyId") or "none"}
    return hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()[:12]


def _column(row: dict[str, Any]) -> str:
    """``provider / prompt label``: the column of promptfoo's table this row sits in."""
    provider = row.get("provider")
    if isinstance(provider, dict):
        name = provider.get("label") or provider.get("id")
    else:
        name = provider
    prompt = obj(row.get("prompt"))
    label = prompt.get("label") or prompt.get("raw") or row.get("promptId") or f"prompt {row.get('promptIdx')}"
    label = str(label)
    if len(label) > _LABEL_MAX:
        label = label[:40] + "… " + hashlib.sha256(label.encode()).hexdigest()[:8]
    return f"{name or 'provider'} / {label}"
