"""The service's Prometheus metrics, all in one place: one ``Metrics`` per server process, held
by the ``Service``, updated by whoever does the work (uploads here, the run queue and the
sandbox scheduler in theirs) and rendered by ``GET /metrics``.

Each process has its own registry (no module-level globals, so tests and several apps in
one process do not share counts). With ``assay serve --workers N``, scrape each process or
run one process per host; the runs gauges are read from the database at scrape time and are
the same from every server.

=====================================  =========  ==============================================
metric                                 type       meaning
=====================================  =========  ==============================================
``assay_runs{state}``                  gauge      runs ``queued`` / ``running`` (database, all servers)
``assay_run_slice_seconds``            histogram  time to grade one slice of a run
``assay_sandbox_queue_depth``          gauge      code evaluations waiting at the fair gate
``assay_evaluations_in_flight{user}``  gauge      sandbox workers busy per user id
``assay_ray_evaluations_in_flight{user}``  gauge   code permits held per user id on the Ray cluster
                                                 (``server.ray_permits``; the same from every server)
``assay_dataset_rows_total``           counter    dataset rows ingested (``rate()``: rows/s)
``assay_dataset_upload_rows_per_second``  gauge   rows/s of the last finished upload
``assay_dataset_upload_seconds``       histogram  time per finished upload
=====================================  =========  ==============================================
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
RUN_STATES = ("queued", "running")
"""The run states ``assay_runs`` reports."""


class Metrics:
    """The metrics of one server process, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs = Gauge("assay_runs", "Runs by state, as the database holds them (every server's).", ["state"],
                          registry=r)
        self.slice_seconds = Histogram("assay_run_slice_seconds", "Time to grade one slice of a run.", registry=r,
                                       buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self.sandbox_queue_depth = Gauge("assay_sandbox_queue_depth", "Code evaluations waiting for a sandbox.",
                                         registry=r)
        self.evaluations_in_flight = Gauge("assay_evaluations_in_flight", "Code evaluations running, per user.",
                                           ["user"], registry=r)
        self.ray_in_flight = Gauge("assay_ray_evaluations_in_flight",
                                   "Code evaluations in flight on the Ray cluster, per user (every server's).",
                                   ["user"], registry=r)
        self.dataset_rows = Counter("assay_dataset_rows", "Dataset rows ingested by uploads (rate(): rows/s).",
                                    registry=r)
        self.upload_rows_per_second = Gauge("assay_dataset_upload_rows_per_second",
                                            "Rows per second of the last finished upload.", registry=r)
        self.upload_seconds = Histogram("assay_dataset_upload_seconds", "Time per finished dataset upload.",
                                        registry=r, buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900))
        self.http_requests = Counter("assay_http_requests", "HTTP requests answered, by method, route template "
                                     "and status.", ["method", "route", "status"], registry=r)
        self.http_seconds = Histogram("assay_http_request_seconds", "Time to answer an HTTP request, by method and "
                                      "route template.", ["method", "route"], registry=r,
                                      buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.http_refused = Counter("assay_http_refused", "Requests refused at the edge (431, 408), by reason.",
                                    ["reason"], registry=r)

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request (``route`` is its template, never its path)."""
        self.http_requests.labels(method=method, route=route, status=str(status)).inc()
        self.http_seconds.labels(method=method, route=route).observe(seconds)

    def refused(self, reason: str) -> None:
        """Count a request refused at the edge: ``head_too_large``, ``too_many_headers``,
        ``head_timeout``, ``body_timeout``."""
        self.http_refused.labels(reason=reason).inc()

    def uploaded(self, rows: int, seconds: float) -> None:
        """Count a finished upload of ``rows`` rows that took ``seconds``."""
        self.upload_seconds.observe(seconds)
        if seconds > 0:
            self.upload_rows_per_second.set(rows / seconds)

    def set_runs(self, counts: Mapping[str, int]) -> None:
        """The runs gauges from the database's counts by state (a missing state counts 0)."""
        for state in RUN_STATES:
            self.runs.labels(state=state).set(counts.get(state, 0))

    def set_sandbox(self, in_flight: Mapping[str, int], waiting: int) -> None:
        """The sandbox gauges from the fair gate: workers busy per user, calls waiting."""
        self.evaluations_in_flight.clear()  # a user with nothing in flight leaves the series
        for user, count in in_flight.items():
            self.evaluations_in_flight.labels(user=user).set(count)
        self.sandbox_queue_depth.set(waiting)

    def set_ray(self, in_flight: Mapping[str, int]) -> None:
        """The Ray gauge from the cluster's book of code permits."""
        self.ray_in_flight.clear()
        for user, count in in_flight.items():
            self.ray_in_flight.labels(user=user).set(count)

    def render(self) -> bytes:
        """The text exposition format, for ``GET /metrics``."""
        return generate_latest(self.registry)
