"""What waza's ``code`` assertions and ``script`` graders see, edition by edition. Pure.

- **Python edition** (the package until early 2026; ``waza/runner.py``, ``graders/base.py``,
  ``graders/code_graders.py``): the transcript handed to graders is a normalised conversation,
  ``{"role": "user" | "assistant", "content"}`` and, for every ``tool.*`` event,
  ``{"role": "tool", "name", "content": str(arguments)[:500]}``; ``tool_calls`` are the entries
  with role ``tool`` (or a legacy ``type: tool_call``), ``errors`` those of type ``error`` or
  whose content mentions "error" in any case. ``script`` graders read the whole grading context
  (``task`` as waza's Task model dumps it, ``transcript``, ``output``, ``outcome``,
  ``duration_ms``, ``metadata``) as JSON on stdin.
- **Go edition** (``internal/graders/inline_script_grader.go``, ``data/eval_wrapper.py``,
  ``internal/models/events.go``): the transcript is the session's events as
  ``{"type": "tool.execution_start", "tool_name", "tool_call_id", "arguments", ...}``;
  ``tool_calls`` pairs starts with completions (``{"name", "arguments": {path, file_text,
  command, description, skill}, "result", "success"}``); ``errors`` are events whose type or
  content contains "error" (case-sensitive).
- ``None`` (assay's own format): the richer context assay has always given (both shapes' keys,
  plus ``input``, ``expected``, ``workspace``), from ``core.transcript.waza_context``.
"""

from __future__ import annotations

from typing import Any, Literal

from assay.core.sample import Event, Sample
from assay.core.transcript import waza_context

Edition = Literal["python", "go"]

TASK_KEY = "waza_task"
"""Where the waza dialect keeps, in a sample's metadata, the task as waza's Python edition
dumps it (``Task.model_dump()``), for ``script`` graders."""

_GO_TYPES = {"tool_call": "tool.execution_start", "tool_result": "tool.execution_complete",
             "assistant_message": "assistant.message", "user_message": "user.message",
             "error": "session.error"}
_GO_ARGUMENTS = ("path", "file_text", "command", "description", "skill")


def assertion_context(sample: Sample, edition: Edition | None) -> dict[str, Any]:
    """The names a ``code`` grader's assertions evaluate against."""
    if edition == "go":
        transcript = go_transcript(sample.transcript)
        return {"output": _text(sample.output), "outcome": sample.outcome or {}, "transcript": transcript,
                "tool_calls": go_tool_calls(sample.transcript), "errors": go_errors(transcript),
                "duration_ms": _ms(sample.duration_ms)}
    if edition == "python":
        return python_context(sample)
    return waza_context(sample)


def script_context(sample: Sample, edition: Edition | None) -> dict[str, Any]:
    """The JSON a ``script`` grader reads on stdin (waza's ``GraderContext``)."""
    if edition is None:
        return waza_context(sample)
    context = python_context(sample)
    return {k: context[k] for k in ("task", "transcript", "output", "outcome", "duration_ms", "metadata")}


def python_context(sample: Sample) -> dict[str, Any]:
    """waza Python edition: the grading context and its derived ``tool_calls`` / ``errors``."""
    conversation = python_conversation(sample.transcript)
    task = sample.metadata.get(TASK_KEY)
    if not isinstance(task, dict):
        task = {"id": sample.id, "name": sample.id, "inputs": {"prompt": _text(sample.input)}}
    return {
        "task": task, "transcript": conversation, "output": _text(sample.output),
        "outcome": sample.outcome or {}, "duration_ms": _ms(sample.duration_ms), "metadata": {},
        "tool_calls": [t for t in conversation if t.get("role") == "tool" or t.get("type") == "tool_call"],
        "errors": [t for t in conversation
                   if t.get("type") == "error" or "error" in str(t.get("content", "")).lower()],
    }


def python_conversation(events: list[Event]) -> list[dict[str, Any]]:
    """Events as the Python edition's normalised conversation. A tool call read from such a
    conversation keeps its recorded ``content``; otherwise the content is ``str(arguments)``
    cut to 500 characters, as waza wrote it. waza made an entry of every ``tool.*`` event, so a
    tool result is a tool entry too (its content the event's data); errors have none."""
    out: list[dict[str, Any]] = []
    for e in events:
        if e.type == "user_message":
            out.append({"role": "user", "content": e.content or ""})
        elif e.type == "assistant_message":
            out.append({"role": "assistant", "content": e.content or ""})
        elif e.type == "tool_call":
            content = e.content if e.content is not None else str(e.arguments or {})[:500]
            out.append({"role": "tool", "name": e.name or "tool", "content": content})
        elif e.type == "tool_result":
            data = {k: v for k, v in (("toolCallId", e.call_id), ("success", e.success), ("result", e.result))
                    if v is not None}
            out.append({"role": "tool", "name": e.name or "tool", "content": str(data)[:500]})
    return out


def go_transcript(events: list[Event]) -> list[dict[str, Any]]:
    """Events as waza's ``TranscriptEvent`` JSON (fields left out when empty, as its
    ``omitempty`` tags do)."""
    out = []
    for e in events:
        kind = _GO_TYPES.get(e.type)
        if kind is None:
            continue
        entry: dict[str, Any] = {"type": kind}
        if e.content is not None and e.type in ("assistant_message", "user_message"):
            entry["content"] = e.content
        if e.type == "error" and e.message is not None:
            entry["message"] = e.message
        if e.type == "tool_call":
            entry.update({k: v for k, v in (("tool_call_id", e.call_id), ("tool_name", e.name),
                                             ("arguments", e.arguments)) if v is not None})
        if e.type == "tool_result":
            entry.update({k: v for k, v in (("tool_call_id", e.call_id), ("success", e.success),
                                             ("tool_result", _go_result(e.result))) if v is not None})
        out.append(entry)
    return out


def go_tool_calls(events: list[Event]) -> list[dict[str, Any]]:
    """waza's ``FilterToolCalls``: each start with a name and an id, in start order, its
    ``success`` and ``result`` taken from the completion with the same id."""
    calls: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.type == "tool_call" and e.name is not None and e.call_id is not None:
            args = e.arguments or {}
            calls[e.call_id] = {"name": e.name,
                                "arguments": {k: args[k] if isinstance(args.get(k), str) else ""
                                              for k in _GO_ARGUMENTS},
                                "success": False}
        elif e.type == "tool_result" and e.call_id in calls:
            call = calls[e.call_id]
            if e.success is not None:
                call["success"] = e.success
            result = _go_result(e.result)
            if result is None:
                call.pop("result", None)
            else:
                call["result"] = result
    return list(calls.values())


def go_errors(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Go edition's ``errors``: events whose type or content contains "error"."""
    return [t for t in transcript if "error" in t.get("type", "") or "error" in str(t.get("content", ""))]


def _go_result(result: Any) -> Any:
    """A tool result as the Copilot SDK's ``Result`` (``{"content": ...}``) unless it is one."""
    if result is None or isinstance(result, dict):
        return result
    return {"content": result if isinstance(result, str) else str(result)}


def _text(value: Any) -> Any:
    return "" if value is None else value


def _ms(value: float | None) -> int:
    return int(value or 0)
