"""Shared helpers for the judge tests: the test key, a schema, and a request builder."""

from __future__ import annotations

from assay.core.judge import JudgeMessage, JudgeRequest

KEY = "sk-test-7f3a9c1e5b2d4f60"
SCHEMA = {"name": "verdict", "schema": {"type": "object", "properties": {"score": {"type": "integer"}},
                                        "required": ["score"], "additionalProperties": False}}


def ask(text: str = "Grade this.", **kw) -> JudgeRequest:
    return JudgeRequest(messages=(JudgeMessage("system", "You grade."), JudgeMessage("user", text)), **kw)
