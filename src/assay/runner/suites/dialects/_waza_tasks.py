"""waza tasks that are not task files, and tasks as waza's Python edition hands them to scripts.

- ``tasks_from`` (Go edition, ``internal/orchestration/runner.go`` ``loadTestCasesFromCSV``,
  ``internal/dataset/csv.go``): a CSV inside the eval's folder whose header names the columns;
  each row is a task. Its id is the ``id`` column, else ``name``, else ``row-N``; its name the
  ``name`` column, else ``row-N``; its prompt the ``prompt`` column, rendered as a Go template
  over ``inputs`` and the row (the row wins). ``range: [first, last]`` keeps those rows (1-based,
  inclusive). assay renders the template forms waza documents (``{{.Vars.name}}``,
  ``{{.TaskName}}``, ``{{.JobID}}``, ``{{.Timestamp}}``, ``{{.Iteration}}``, ``{{.Attempt}}``);
  a prompt with other template actions is kept as written, with a warning.
- ``task_prompt``: a task's prompt, from ``inputs.prompt`` or, from 0.27, the file
  ``inputs.prompt_file`` names (``internal/models/testcase.go`` ``resolvePromptFile`` at
  f249bad6): a relative path, read from the task file's folder; both set, an absolute path, a
  cleaned path containing ``..`` or an unreadable file is an error, in waza's words.
- ``python_task_dump``: a task file as the Python edition's ``Task.model_dump()`` (defaults
  filled, unknown keys dropped), which its ``script`` graders read as ``task``.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.core.errors import SpecError
from assay.runner.dataset import csv_rows
from assay.runner.files import open_regular, read_regular
from assay.runner.yamlsrc import MAX_SUITE_BYTES, YamlDoc

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_VAR = re.compile(r"\.Vars\.([A-Za-z_][A-Za-z0-9_]*)")


def csv_tasks(doc: YamlDoc, name: str, rows: list[int] | None, inputs: Mapping[str, Any],
              base: Path) -> list[tuple[YamlDoc, Any]]:
    """The tasks of a ``tasks_from`` CSV, each paired with the eval's document (where their
    problems are reported). Raises SpecError naming the field or the CSV row."""
    from assay.runner.suites.dialects._waza_files import WazaTask

    path = (base / name).resolve()
    if not path.is_relative_to(base):
        raise doc.error(f"tasks_from path {name!r} escapes the eval's folder", "tasks_from")
    first, last = _range(doc, rows)
    with open_regular(path, what="tasks_from CSV") as fh:
        table = list(csv_rows(fh, path, ","))
    out = []
    job = f"run-{int(time.time())}"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for n, (line, row) in enumerate(table, 1):
        if first and not first <= n <= last:
            continue
        label = f"row-{n}"
        task_id = row.get("id") or row.get("name") or label
        task_name = row.get("name") or label
        variables = {**{k: str(v) for k, v in inputs.items()}, **row}
        prompt = _render(row.get("prompt", ""), variables, task_name, job, stamp, f"{path}:{line}")
        out.append((doc, WazaTask.model_validate({"id": task_id, "name": task_name, "inputs": {"prompt": prompt}})))
    return out


def _range(doc: YamlDoc, rows: list[int] | None) -> tuple[int, int]:
    if not rows:
        return 0, 0
    if len(rows) != 2 or rows[0] <= 0 or rows[1] <= 0:
        raise doc.error(f"range must be [first, last] with both > 0, got {rows}", "range")
    if rows[0] > rows[1]:
        raise doc.error(f"range start ({rows[0]}) must be <= end ({rows[1]})", "range")
    return rows[0], rows[1]


def _render(text: str, variables: Mapping[str, str], task: str, job: str, stamp: str, where: str) -> str:
    if "{{" not in text:
        return text
    system = {".TaskName": task, ".JobID": job, ".Timestamp": stamp, ".Iteration": "0", ".Attempt": "0"}

    def action(match: re.Match[str]) -> str:
        expr = match.group(1)
        var = _VAR.fullmatch(expr)
        if var is not None:
            if var.group(1) not in variables:
                raise SpecError(f"prompt template: no variable {var.group(1)!r} (columns and inputs: "
                                f"{', '.join(sorted(variables))})", where=where)
            return variables[var.group(1)]
        if expr in system:
            return system[expr]
        raise _Unsupported(expr)

    try:
        return _ACTION.sub(action, text)
    except _Unsupported:
        return text


class _Unsupported(Exception):
    """A template action beyond plain variables: the prompt is kept as written."""


def python_task_dump(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A task file as waza's Python edition dumps its ``Task`` model (waza/schemas/task.py)."""
    inputs = _mapping(raw.get("inputs"))
    expected = _mapping(raw.get("expected"))
    behavior = _mapping(expected.get("behavior"))
    return {
        "id": raw.get("id"), "name": raw.get("name"), "description": raw.get("description") or "",
        "inputs": {"prompt": inputs.get("prompt"), "context": _mapping(inputs.get("context")),
                   "files": [_file(f) for f in _list(inputs.get("files"))],
                   "environment": _mapping(inputs.get("environment"))},
        "expected": {
            "outcomes": [_pick(o, ("type", "value", "condition")) for o in _list(expected.get("outcomes"))],
            "tool_calls": {k: [_pick(p, ("pattern", "args_pattern", "count")) for p in _list(v)]
                           for k, v in _mapping(expected.get("tool_calls")).items()},
            "behavior": {"max_tool_calls": behavior.get("max_tool_calls"),
                         "max_iterations": behavior.get("max_iterations"), "max_tokens": behavior.get("max_tokens"),
                         "required_tools": _list(behavior.get("required_tools")),
                         "forbidden_tools": _list(behavior.get("forbidden_tools"))},
            "output_contains": _list(expected.get("output_contains")),
            "output_not_contains": _list(expected.get("output_not_contains")),
        },
        "graders": [{"name": g.get("name"), "type": g.get("type", "code"), "assertions": _list(g.get("assertions")),
                     "rubric": g.get("rubric"), "weight": g.get("weight", 1.0)}
                    for g in _list(raw.get("graders")) if isinstance(g, Mapping)],
        "tags": _list(raw.get("tags")), "enabled": raw.get("enabled", True),
        "timeout_seconds": raw.get("timeout_seconds"), "context_dir": raw.get("context_dir"),
    }


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _pick(value: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(value, Mapping):
        return value
    return {k: value.get(k) for k in keys}


def _file(value: Any) -> Any:
    return _pick(value, ("path", "content")) if isinstance(value, Mapping) else value


def task_prompt(tdoc: YamlDoc, inputs: Mapping[str, Any], read_file: bool) -> Any:
    """The task's prompt: ``inputs.prompt``, else (``read_file``: the release reads it) the
    text of ``inputs.prompt_file``. Raises SpecError at ``inputs.prompt_file``."""
    name = inputs.get("prompt_file")
    if name is None or not read_file:
        return inputs.get("prompt")
    at = ("inputs", "prompt_file")
    if inputs.get("prompt") not in (None, ""):
        raise tdoc.error("cannot specify both prompt and prompt_file", *at)
    if not isinstance(name, str) or not name:
        raise tdoc.error(f"prompt_file must be a relative path, got {name!r}", *at)
    if Path(name).is_absolute():
        raise tdoc.error(f"prompt_file must be a relative path, got {name!r}", *at)
    clean = posixpath.normpath(name)
    if ".." in clean:  # waza refuses any "..", as strings.Contains does
        raise tdoc.error(f"prompt_file must not contain path traversal, got {name!r}", *at)
    folder = tdoc.path.parent.resolve()
    path = (folder / clean).resolve()
    if not path.is_relative_to(folder):  # a symbolic link out of the task's folder
        raise tdoc.error(f"prompt_file {name!r} leads outside the task's folder {folder}", *at)
    try:
        data = read_regular(path, limit=MAX_SUITE_BYTES, what="prompt file")
    except SpecError as exc:
        raise tdoc.error(f"reading prompt_file {name!r}: {exc.message}", *at) from None
    return data.decode("utf-8", errors="replace")
