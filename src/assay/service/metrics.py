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
                                                 (``service.ray_permits``; the same from every server)
``assay_dataset_rows_total``           counter    dataset rows ingested (``rate()``: rows/s)
``assay_dataset_upload_rows_per_second``  gauge   rows/s of the last finished upload
``assay_dataset_upload_seconds``       histogram  time per finished upload
``assay_dataset_uploads{outcome}``     counter    uploads ``stored``, ``refused`` (a 422: a bad row, a limit),
                                                 ``failed`` (the client went away, an internal error)
``assay_dataset_upload_bytes``         counter    bytes of rows stored by finished uploads (as stored JSON)
``assay_http_requests{method, route, status}``  counter  answered requests, by route template
``assay_http_request_seconds{method, route}``  histogram  time to answer
``assay_http_refused{reason}``         counter    refused at the edge: ``head_too_large``, ``too_many_headers``,
                                                 ``head_timeout`` (431/408 by ``server.protocol``), ``body_timeout``
``assay_runs_started``                 counter    runs this server queued
``assay_runs_finished{outcome, reason}``  counter  runs that ended here: ``completed``, ``cancelled``,
                                                 ``failed`` with the reason (``database``, ``memory``, ...;
                                                 counted per failing slice: two slices of one run
                                                 failing at once count twice)
``assay_results_stored``               counter    evaluation results this server stored
``assay_run_slices_leased``            counter    slices this server claimed to grade
``assay_run_slices_retaken``           counter    of them, slices another server had held (its lease
                                                 expired, or it gave the slice back)
``assay_run_slices{state}``            gauge      slices of unfinished runs ``pending``, ``leased``, and
                                                 ``expired`` (leased past its lease: its server is gone)
                                                 (database, all servers)
``assay_grading_backlog_results``      gauge      results queued and running runs still lack (database)
``assay_sandbox_evaluations{language, outcome}``  counter  code evaluations, ``ok`` or the error
                                                 code (``timeout``, ``memory``, ``sandbox_violation``, ...)
``assay_sandbox_evaluation_seconds{language}``  histogram  time of one code evaluation in the sandbox
``assay_judge_calls{outcome}``         counter    judge calls: ``ok``, ``cached``, or the error code
``assay_judge_call_seconds``           histogram  time of a judge call (retries included; not cached ones)
``assay_judge_tokens{kind}``           counter    tokens of judge calls: ``prompt``, ``completion``
``assay_db_pool_connections{state}``   gauge      the database pool's connections ``checked_out``, ``idle``,
                                                 ``overflow``, and its ``size``
``assay_db_pool_wait_seconds``         histogram  time to get a connection from the pool (waiting for a
                                                 free one, or opening one)
``assay_db_pool_timeouts``             counter    requests for a connection that gave up waiting
``assay_database_unreachable``         gauge      1 while this server's grading sees the database away
``assay_database_outages``             gauge      outages this server has seen since it started
``assay_database_requests_waiting``    gauge      requests in line for the requests' pool
``assay_database_requests_refused_total``  counter  requests answered 503 + Retry-After (line full,
                                                 or no connection in time: ``server.admission``)
=====================================  =========  ==============================================
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
RUN_STATES = ("queued", "running")
"""The run states ``assay_runs`` reports."""
SLICE_STATES = ("pending", "leased", "expired")
"""The slice states ``assay_run_slices`` reports."""


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
        self.uploads = Counter("assay_dataset_uploads", "Dataset uploads by outcome (stored, refused, failed).",
                               ["outcome"], registry=r)
        self.upload_bytes = Counter("assay_dataset_upload_bytes", "Bytes of rows stored by finished uploads.",
                                    registry=r)
        self.runs_started = Counter("assay_runs_started", "Runs queued by this server.", registry=r)
        self.runs_finished = Counter("assay_runs_finished", "Runs that ended on this server, by outcome and, for "
                                     "failures, reason.", ["outcome", "reason"], registry=r)
        self.results_stored = Counter("assay_results_stored", "Evaluation results stored by this server.",
                                      registry=r)
        self.slices_leased = Counter("assay_run_slices_leased", "Slices this server claimed to grade.", registry=r)
        self.slices_retaken = Counter("assay_run_slices_retaken", "Slices this server took over from another "
                                      "(its lease expired, or it gave the slice back).", registry=r)
        self.slices = Gauge("assay_run_slices", "Slices of unfinished runs by state (database, all servers).",
                            ["state"], registry=r)
        self.backlog = Gauge("assay_grading_backlog_results", "Results that queued and running runs still lack "
                             "(database, all servers).", registry=r)
        self.sandbox_evaluations = Counter("assay_sandbox_evaluations", "Code evaluations by language and outcome.",
                                           ["language", "outcome"], registry=r)
        self.sandbox_seconds = Histogram("assay_sandbox_evaluation_seconds", "Time of one code evaluation.",
                                         ["language"], registry=r,
                                         buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self.judge_calls = Counter("assay_judge_calls", "Judge calls by outcome (ok, cached, or the error code).",
                                   ["outcome"], registry=r)
        self.judge_seconds = Histogram("assay_judge_call_seconds", "Time of a judge call that was made (retries "
                                       "included).", registry=r, buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self.judge_tokens = Counter("assay_judge_tokens", "Tokens of judge calls, by kind (prompt, completion).",
                                    ["kind"], registry=r)
        self.pool_connections = Gauge("assay_db_pool_connections", "The database pool's connections by state, "
                                      "and its size.", ["state"], registry=r)
        self.pool_wait_seconds = Histogram("assay_db_pool_wait_seconds", "Time to get a connection from the "
                                           "database pool.", registry=r,
                                           buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30))
        self.pool_timeouts = Counter("assay_db_pool_timeouts", "Requests for a database connection that gave up "
                                     "waiting.", registry=r)
        self.http_requests = Counter("assay_http_requests", "HTTP requests answered, by method, route template "
                                     "and status.", ["method", "route", "status"], registry=r)
        self.http_seconds = Histogram("assay_http_request_seconds", "Time to answer an HTTP request, by method and "
                                      "route template.", ["method", "route"], registry=r,
                                      buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.http_refused = Counter("assay_http_refused", "Requests refused at the edge (431, 408), by reason.",
                                    ["reason"], registry=r)
        self.database_unreachable = Gauge("assay_database_unreachable",
                                          "1 while this server's grading sees the database away.", registry=r)
        self.database_outages = Gauge("assay_database_outages", "Database outages seen since the start.",
                                      registry=r)
        self.requests_waiting = Gauge("assay_database_requests_waiting",
                                      "Requests waiting for a place at the requests' pool.", registry=r)
        self.requests_refused = Counter("assay_database_requests_refused",
                                        "Requests refused with 503 + Retry-After: the line was full, or no "
                                        "connection came free in time.", registry=r)

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request (``route`` is its template, never its path)."""
        self.http_requests.labels(method=method, route=route, status=str(status)).inc()
        self.http_seconds.labels(method=method, route=route).observe(seconds)

    def refused(self, reason: str) -> None:
        """Count a request refused at the edge: ``head_too_large``, ``too_many_headers``,
        ``head_timeout``, ``body_timeout``."""
        self.http_refused.labels(reason=reason).inc()

    def uploaded(self, rows: int, seconds: float, size: int = 0) -> None:
        """Count a finished upload of ``rows`` rows (``size`` bytes stored) that took ``seconds``."""
        self.uploads.labels(outcome="stored").inc()
        self.upload_bytes.inc(size)
        self.upload_seconds.observe(seconds)
        if seconds > 0:
            self.upload_rows_per_second.set(rows / seconds)

    def upload_ended(self, refused: bool) -> None:
        """Count an upload that stored nothing: ``refused`` (its data broke a rule) or failed."""
        self.uploads.labels(outcome="refused" if refused else "failed").inc()

    def run_finished(self, outcome: str, reason: str = "") -> None:
        """Count a run that ended: ``completed``, ``cancelled``, or ``failed`` for ``reason``."""
        self.runs_finished.labels(outcome=outcome, reason=reason).inc()

    def set_queue(self, slices: Mapping[str, int], backlog: int) -> None:
        """The queue gauges from the database: slices by state, results still to store."""
        for state in SLICE_STATES:
            self.slices.labels(state=state).set(slices.get(state, 0))
        self.backlog.set(backlog)

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

    def set_database(self, unreachable: bool, outages: int) -> None:
        """The database gauges from this server's ``store.outage.DatabaseHealth``."""
        self.database_unreachable.set(1 if unreachable else 0)
        self.database_outages.set(outages)

    def render(self) -> bytes:
        """The text exposition format, for ``GET /metrics``."""
        return generate_latest(self.registry)
