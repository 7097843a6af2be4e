"""Verdicts back into the telemetry: each online result sent, as OTLP asks of a
``gen_ai.evaluation.result`` event, to ``ASSAY_OTLP_EXPORT_URL`` (``/v1/logs``): a log record
whose trace and span ids are the graded span's (so Phoenix, Logfire or a collector shows it
beside the trace), with ``gen_ai.evaluation.name`` (the evaluator), ``.score.value``,
``.score.label`` (``pass``, ``fail``, or the status), ``.explanation`` (the reason),
``gen_ai.response.id`` (when the span has one) and ``error.type`` (an error's code).

Sending never holds grading up: results wait in a bounded queue (``MAX_WAITING``; past it the
oldest are dropped and counted) and one thread sends them in batches, retrying a refused or
failed batch with a growing pause (``Retry-After`` honoured) up to ``ATTEMPTS`` times.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from assay.store.outage import Backoff

log = logging.getLogger("assay.server.online")
EVENT = "gen_ai.evaluation.result"
MAX_WAITING = 10_000
BATCH = 512
ATTEMPTS = 5
EXPLANATION_CHARS = 4000
SEVERITY_INFO = 9


def parse_headers(text: str | None) -> dict[str, str]:
    """``key=value,key2=value2`` (values URL-encoded), as ``OTEL_EXPORTER_OTLP_HEADERS``."""
    out: dict[str, str] = {}
    for pair in (text or "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            out[key.strip()] = unquote(value.strip())
    return out


def log_records(results: Sequence[Mapping[str, Any]], response_ids: Mapping[str, str]) -> bytes:
    """An ``ExportLogsServiceRequest`` of ``results`` (rows of ``online_results``), serialised."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="assay")))
    scope = resource_logs.scope_logs.add()
    scope.scope.name = "assay.online"
    for result in results:
        record = scope.log_records.add()
        moment = int(result["graded_at"].timestamp() * 1e9)
        record.time_unix_nano = record.observed_time_unix_nano = moment
        record.event_name = EVENT
        record.severity_number = SEVERITY_INFO
        record.trace_id = bytes.fromhex(result["trace_id"])
        record.span_id = bytes.fromhex(result["span_id"])
        status = result["status"]
        attributes: dict[str, Any] = {
            "gen_ai.evaluation.name": result["evaluator_name"],
            "gen_ai.evaluation.score.label": {"passed": "pass", "failed": "fail"}.get(status, status),
            "assay.rule.id": result["rule_id"], "assay.evaluator.id": result["evaluator_id"],
            "assay.evaluator.version": result["evaluator_version"], "assay.generation": result["generation"]}
        if result.get("score") is not None:
            attributes["gen_ai.evaluation.score.value"] = float(result["score"])
        if result.get("reason"):
            attributes["gen_ai.evaluation.explanation"] = str(result["reason"])[:EXPLANATION_CHARS]
        if result.get("error_code"):
            attributes["error.type"] = result["error_code"]
        response_id = response_ids.get(result["span_id"])
        if response_id:
            attributes["gen_ai.response.id"] = response_id
        for key, value in attributes.items():
            record.attributes.append(KeyValue(key=key, value=_any(AnyValue, value)))
    return bytes(request.SerializeToString())


def _any(any_value: Any, value: Any) -> Any:
    if isinstance(value, bool):
        return any_value(bool_value=value)
    if isinstance(value, int):
        return any_value(int_value=value)
    if isinstance(value, float):
        return any_value(double_value=value)
    return any_value(string_value=str(value))


class ResultExporter:
    """One thread sending this server's verdicts to ``url`` + ``/v1/logs``."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout_s: float = 10.0) -> None:
        self.endpoint = url.rstrip("/") + "/v1/logs"
        self.headers = {**headers, "Content-Type": "application/x-protobuf"}
        self.timeout_s = timeout_s
        self.sent = 0
        self.dropped = 0
        self._waiting: deque[tuple[dict[str, Any], str | None]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="assay-online-export", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def offer(self, results: Sequence[dict[str, Any]], response_ids: Mapping[str, str]) -> None:
        """Queue ``results`` to send; never blocks (the oldest are dropped past ``MAX_WAITING``)."""
        with self._lock:
            for result in results:
                if len(self._waiting) >= MAX_WAITING:
                    self._waiting.popleft()
                    self.dropped += 1
                self._waiting.append((result, response_ids.get(result["span_id"])))
        self._wake.set()

    def close(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.timeout_s + 5)

    def alive(self) -> bool:
        return self._thread.is_alive() or not self._thread.ident

    def _take(self) -> list[tuple[dict[str, Any], str | None]]:
        with self._lock:
            return [self._waiting.popleft() for _ in range(min(BATCH, len(self._waiting)))]

    def _loop(self) -> None:
        import httpx2

        with httpx2.Client(timeout=self.timeout_s) as client:
            while not (self._stopping.is_set() and not self._waiting):
                batch = self._take()
                if not batch:
                    if self._stopping.is_set():
                        return
                    self._wake.wait(1.0)
                    self._wake.clear()
                    continue
                body = log_records([r for r, _ in batch], {r["span_id"]: rid for r, rid in batch if rid})
                if self._send(client, body):
                    self.sent += len(batch)
                else:
                    self.dropped += len(batch)

    def _send(self, client: Any, body: bytes) -> bool:
        backoff = Backoff(first_s=0.5, longest_s=8.0)
        for attempt in range(ATTEMPTS):
            pause = backoff.pause()
            try:
                reply = client.post(self.endpoint, content=body, headers=self.headers)
                if reply.status_code < 300:
                    return True
                if reply.status_code not in (429, 502, 503, 504):
                    log.warning("verdicts not accepted by %s: %s", self.endpoint, reply.status_code)
                    return False
                pause = _retry_after(reply.headers.get("retry-after"), pause)
            except Exception as exc:  # noqa: BLE001 - the collector away: try again, then drop
                log.debug("sending verdicts to %s failed: %s", self.endpoint, exc)
            if attempt + 1 < ATTEMPTS and self._stopping.wait(pause):
                return False
        log.warning("verdicts dropped: %s did not take them in %d attempts", self.endpoint, ATTEMPTS)
        return False


def _retry_after(value: str | None, default: float) -> float:
    if value is not None and value.strip().isdigit():
        return min(float(value), 30.0)
    return default


__all__ = ["EVENT", "ResultExporter", "log_records", "parse_headers"]
