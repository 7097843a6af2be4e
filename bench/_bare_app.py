"""The bare FastAPI app of ``bench/service.py``: the test route's path and body model and a
constant answer, nothing else (no token, no database, no grading). Its rate is the ceiling
FastAPI and uvicorn set on this machine; ``assay serve`` is measured against it."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Body(BaseModel):
    input: str
    output: str
    expected: str | None = None
    metadata: dict[str, Any] = {}


@app.post("/api/v1/evaluators/{evaluator_id}/test")
async def test(evaluator_id: str, body: Body) -> dict[str, Any]:
    return {"code": 200, "data": {"passed": body.output == body.expected, "score": 1.0, "reason": None,
                                  "latencyMs": 0.0, "error": None, "status": "passed", "details": {}}}


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}
