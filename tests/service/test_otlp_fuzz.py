"""Property: whatever an exporter (or an attacker) sends to ``POST /v1/traces``, protobuf bytes
mutated or an OTLP JSON document with any value in any place, the intake answers as OTLP says
(200, with ``partialSuccess`` for what it refused; 400 for a body it cannot read) and never
fails (5xx); every span it stores has well-formed ids and times. On both databases.

Bounded so that ``make test`` stays quick (``ASSAY_FUZZ_EXAMPLES`` for a longer hunt; otherwise
derandomised, so CI is repeatable)."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from online_support import PROTOBUF  # noqa: E402
from otlp_build import NOW_NS, chat_attributes, request, span  # noqa: E402

from assay.store import Database  # noqa: E402
from assay.store.online_models import OnlineSpan  # noqa: E402

EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="ASSAY_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=list(HealthCheck))
ANSWERS = {200, 400}

VALID = request(span(b"\x07" * 16, b"\x01" * 8, "chat", chat_attributes("q", "Paris")),
                span(b"\x07" * 16, b"\x02" * 8, "tool", {"n": 3, "ok": True, "x": 1.5}, parent=b"\x01" * 8))
DOCUMENT: dict[str, Any] = {"resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]},
    "scopeSpans": [{"scope": {"name": "s"}, "spans": [
        {"traceId": "07" * 16, "spanId": "03" * 8, "parentSpanId": "", "name": "chat", "kind": 3,
         "startTimeUnixNano": str(NOW_NS), "endTimeUnixNano": str(NOW_NS + 10),
         "status": {"code": 1, "message": ""},
         "events": [{"name": "e", "timeUnixNano": str(NOW_NS), "attributes": []}],
         "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "7"}},
             {"key": "list", "value": {"arrayValue": {"values": [{"doubleValue": 1.5}, {"boolValue": True}]}}},
             {"key": "map", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"bytesValue": "AQI="}}]}}}]},
    ]}]}]}

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12)


def _places(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``node``."""
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _places(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _places(value, (*path, index))
    return out


def _replaced(document: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(document)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def _check_stored(api) -> None:
    database = Database(api.database_url)
    try:
        with database.session() as session:
            for stored in session.query(OnlineSpan).all():
                assert len(stored.trace_id) == 32 and len(stored.span_id) == 16, stored
                assert 0 <= stored.start_ns < 2**63 and 0 <= stored.end_ns < 2**63, stored
    finally:
        database.dispose()


def test_mutated_protobuf_is_answered_never_failed(api):
    valid = VALID.SerializeToString()

    @FUZZ
    @given(st.lists(st.tuples(st.integers(0, len(valid)), st.binary(max_size=6), st.integers(0, 6)), max_size=4))
    def one(edits: list[tuple[int, bytes, int]]) -> None:
        body = bytearray(valid)
        for at, inserted, dropped in edits:
            body[at:at + dropped] = inserted
        answer = api.client.post("/v1/traces", content=bytes(body), headers={**api.as_("alice"), **PROTOBUF})
        assert answer.status_code in ANSWERS, (answer.status_code, answer.content[:300])

    one()
    _check_stored(api)


def test_any_value_anywhere_in_an_otlp_json_document_is_answered_never_failed(api):
    places = _places(DOCUMENT)

    @FUZZ
    @given(st.sampled_from(places), _json_values)
    def one(path: tuple, value: Any) -> None:
        body = json.dumps(_replaced(DOCUMENT, path, value))
        answer = api.client.post("/v1/traces", content=body,
                                 headers={**api.as_("alice"), "Content-Type": "application/json"})
        assert answer.status_code in ANSWERS, (path, value, answer.status_code, answer.text[:300])
        if answer.status_code == 200 and answer.content:
            assert isinstance(answer.json().get("partialSuccess", {}), dict)

    one()
    _check_stored(api)
