"""service.online.filters and the sampling of service.online.schedule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from assay.service.online.filters import FilterError, parse
from assay.service.online.schedule import sampled


@dataclass
class S:
    name: str = "chat gpt-4o"
    kind: int = 3
    status_code: int = 0
    start_ns: int = 0
    end_ns: int = 2_500_000_000
    attributes: dict[str, Any] = field(default_factory=lambda: {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 120,
        "tags": ["beta", "eu"], "gen_ai.input.messages": "[...]", "user.id": 12345678901234567891})
    resource: dict[str, Any] = field(default_factory=lambda: {"service.name": "checkout-api"})


@pytest.mark.parametrize("text, expected", [
    ("", True),
    ('gen_ai.operation.name == "chat"', True),
    ("gen_ai.operation.name == 'embeddings'", False),
    ('gen_ai.request.model in ["gpt-4o", "gpt-4o-mini"] and gen_ai.usage.input_tokens >= 100', True),
    ("gen_ai.usage.input_tokens < 100 or span.duration_ms > 2000", True),
    ("not (span.status == \"error\") and span.kind == \"client\"", True),
    ('resource.service.name startswith "checkout"', True),
    ('tags contains "eu" and span.name contains "gpt"', True),
    ("gen_ai.output.messages", False),
    ("gen_ai.input.messages", True),
    ('gen_ai.request.model > 3', False),  # a type mismatch is no match, never an error
    ("missing != null", False),
    ("user.id == 12345678901234567891", True),  # a 20-digit id compared exactly, not as a float
    ("user.id == 12345678901234567890", False),
    ("gen_ai.usage.input_tokens == 1.2e2", True),
])
def test_filters_select_spans(text, expected):
    assert parse(text)(S()) is expected


@pytest.mark.parametrize("text, position, words", [
    ("gen_ai.request.model ==", 24, "expected a value"),
    ('a == "x" b', 10, "expected 'and', 'or' or the end"),
    ("a in ['x'", 10, "expected ',' or ']'"),
    ("(a == 1", 8, "expected ')'"),
    ("a == 1 && b", 8, "expected a name, a value or an operator"),
    ("== 1", 1, "expected an attribute name"),
    ("a > 1e400", 5, "expected a number below 1.8e308, found '1e400'"),
])
def test_a_bad_filter_names_the_position(text, position, words):
    with pytest.raises(FilterError) as caught:
        parse(text)
    assert caught.value.position == position
    assert f"at position {position}: {words}" in str(caught.value)


def test_a_filter_is_bounded():
    with pytest.raises(FilterError, match="longer than 2000 characters"):
        parse("a" * 2001)
    with pytest.raises(FilterError, match="nested deeper than 32 levels"):
        parse("(" * 40 + "a" + ")" * 40)
    with pytest.raises(FilterError, match="nested deeper than 32 levels"):
        parse("not " * 400 + "a")
    long_chain = " and ".join(["a"] * 300)  # within 2,000 characters: parsed and evaluated without recursion trouble
    assert parse(long_chain)(S()) is False


def test_sampling_is_deterministic_and_nested():
    traces = [f"{n:032x}" for n in range(4000)]
    ten = {t for t in traces if sampled(t, 0.1)}
    twenty = {t for t in traces if sampled(t, 0.2)}
    assert ten <= twenty  # a trace in at 10% is in at 20%
    assert 300 < len(ten) < 500 and 650 < len(twenty) < 950
    assert ten == {t for t in traces if sampled(t, 0.1)}
    assert all(sampled(t, 1.0) for t in traces[:10]) and not any(sampled(t, 0.0) for t in traces[:10])
