"""vally_metric: Vally's metric thresholds with the linear fall-off past max
(microsoft.github.io/vally/reference/graders/metric-thresholds/)."""

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec

CALL = {"type": "tool_call", "name": "bash"}
ERR = {"type": "error", "message": "x"}
MSG = {"type": "assistant_message", "content": "ok"}


def usage(i, o):
    return {"type": "token_usage", "input_tokens": i, "output_tokens": o}


@pytest.mark.parametrize("metric, max_, sample, passed, score", [
    ("token-budget", 50000, {"transcript": [usage(1000, 500)]}, True, 1.0),
    ("token-budget", 1000, {"transcript": [usage(1000, 500)]}, False, 0.5),          # 1.5 x max
    ("token-budget", 1000, {"transcript": [usage(1500, 500), usage(100, 0)]}, False, 0.0),
    ("token-budget", 100, {"outcome": {"metrics": {"totalTokens": 120}}}, False, 0.8),
    ("token-budget", 0, {}, True, 1.0),
    ("tool-call-count", 2, {"transcript": [CALL, CALL]}, True, 1.0),                 # exactly max passes
    ("tool-call-count", 2, {"transcript": [CALL] * 3}, False, 0.5),
    ("tool-call-count", 4, {"transcript": [CALL] * 5}, False, 0.75),
    ("error-count", 0, {"transcript": []}, True, 1.0),
    ("error-count", 0, {"transcript": [ERR]}, False, 0.0),                            # max 0: any excess scores 0
    ("turn-count", 1, {"transcript": [MSG, MSG]}, False, 0.0),                         # max(max, 1) = 1
    ("turn-count", 10, {"outcome": {"turns": 12}}, False, 0.8),
    ("wall-time", "2m", {"duration_ms": 120_000}, True, 1.0),
    ("wall-time", "2m", {"duration_ms": 150_000}, False, 0.75),
    ("wall-time", "30s", {"duration_ms": 90_000}, False, 0.0),
    ("wall-time", "1h", {"duration_ms": 1}, True, 1.0),
])
def test_metric(grade, metric, max_, sample, passed, score):
    r = grade({"type": "vally_metric", "config": {"metric": metric, "max": max_}}, output="x", **sample)
    assert (r.passed, r.score) == (passed, pytest.approx(score)), r.reason


def test_reason_and_details(grade):
    r = grade({"type": "vally_metric", "config": {"metric": "token-budget", "max": 50000}}, output="x",
              transcript=[usage(70000, 5000)])
    assert r.reason == "75000 tokens exceeds max of 50000" and r.details == {"value": 75000.0, "max": 50000.0}


def test_wall_time_without_duration_is_unavailable(grade):
    r = grade({"type": "vally_metric", "config": {"metric": "wall-time", "max": "30s"}}, output="x")
    assert r.status.value == "error" and r.error == "unavailable"


@pytest.mark.parametrize("config, message", [
    ({"metric": "token-budget"}, "max"),
    ({"metric": "token-budget", "max": -1}, "non-negative"),
    ({"metric": "tool-call-count", "max": "20"}, "integer"),
    ({"metric": "turn-count", "max": 1.5}, "integer"),
    ({"metric": "wall-time", "max": "soon"}, "invalid duration"),
    ({"metric": "latency", "max": 1}, "metric"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_metric", "config": config})
