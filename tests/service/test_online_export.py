"""Verdicts back into the telemetry: a real OTLP/HTTP logs receiver on 127.0.0.1 (refusing the
first batch with 503, as a busy collector does) gets each online verdict as a
``gen_ai.evaluation.result`` event parented to the graded span."""

from __future__ import annotations

import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest  # noqa: E402
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402
from service_support import make_api  # noqa: E402


class Collector:
    """Records the log requests it takes; answers 503 (Retry-After: 0) to the first ``refuse``."""

    def __init__(self, refuse: int = 1) -> None:
        self.bodies: list[tuple[dict[str, str], bytes]] = []
        self.refused = 0
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/v1/logs":
                    self.send_response(404)
                elif collector.refused < refuse:
                    collector.refused += 1
                    self.send_response(503)
                    self.send_header("Retry-After", "0")
                else:
                    collector.bodies.append((dict(self.headers), body))
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Collector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def records(self) -> list:
        out = []
        for _headers, body in self.bodies:
            message = ExportLogsServiceRequest()
            message.ParseFromString(body)
            out += [r for rl in message.resource_logs for sl in rl.scope_logs for r in sl.log_records]
        return out


def _attributes(record) -> dict:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in record.attributes}


def test_each_verdict_is_sent_as_an_evaluation_event_of_its_span(tmp_path, shared_resources):
    with Collector() as collector:
        for api in make_api(f"sqlite:///{tmp_path / 'e.db'}", shared_resources, otlp_export_url=collector.url,
                            otlp_export_headers="Authorization=Bearer%20collector-key"):
            made = api.call("POST", "/evaluators", json={"name": "says Paris", "type": "preset", "config": {
                "presetType": "regex", "params": {"pattern": "Paris"}}})
            rule = api.call("POST", "/online-rules", json={"name": "answers", "evaluators": [
                {"evaluatorId": made.json()["data"]["id"]}]}).json()["data"]
            trace = new_trace_id()
            good = {**chat_attributes("q", "Paris"), "gen_ai.response.id": "chatcmpl-1"}
            assert api.client.post("/v1/traces", content=request(
                span(trace, b"\x01" * 8, "chat", good), span(trace, b"\x02" * 8, "chat", chat_attributes("q", "Rome")),
                span(trace, b"\x03" * 8, "GET", {})).SerializeToString(),
                headers={**api.as_("alice"), "Content-Type": "application/x-protobuf"}).status_code == 200
            deadline = time.monotonic() + 20
            while len(collector.records()) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            records = {r.span_id.hex(): r for r in collector.records()}
            assert set(records) == {"01" * 8, "02" * 8, "03" * 8}
            assert collector.refused == 1  # the first batch was refused, then sent again
            passed, failed, bare = records["01" * 8], records["02" * 8], records["03" * 8]
            assert passed.event_name == "gen_ai.evaluation.result" and passed.trace_id == trace
            assert _attributes(passed) == {
                "gen_ai.evaluation.name": "says Paris", "gen_ai.evaluation.score.label": "pass",
                "gen_ai.evaluation.score.value": 1.0, "gen_ai.response.id": "chatcmpl-1", "assay.rule.id": rule["id"],
                "assay.evaluator.id": made.json()["data"]["id"],
                "assay.evaluator.version": _attributes(passed)["assay.evaluator.version"], "assay.generation": 1}
            assert _attributes(failed)["gen_ai.evaluation.score.label"] == "fail"
            assert _attributes(failed)["gen_ai.evaluation.score.value"] == 0.0
            assert "Paris" in _attributes(failed)["gen_ai.evaluation.explanation"]  # the regex's reason
            assert _attributes(bare)["gen_ai.evaluation.score.label"] == "not_applicable"
            assert "gen_ai.evaluation.score.value" not in _attributes(bare)
            assert collector.bodies[0][0]["Authorization"] == "Bearer collector-key"
