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
        self.database_unreachable = Gauge("assay_database_unreachable",
                                          "1 while this server's grading sees the database away.", registry=r)
        self.database_outages = Gauge("assay_database_outages", "Database outages seen since the start.",
                                      registry=r)
        self.requests_waiting = Gauge("assay_database_requests_waiting",
                                      "Requests waiting for a place at the requests' pool.", registry=r)
        self.requests_refused = Counter("assay_database_requests_refused",
                                        "Requests refused with 503 + Retry-After: the line was full, or no "
                                        "connection came free in time.", registry=r)

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

    def set_database(self, unreachable: bool, outages: int) -> None:
        """The database gauges from this server's ``store.outage.DatabaseHealth``."""
        self.database_unreachable.set(1 if unreachable else 0)
        self.database_outages.set(outages)

    def render(self) -> bytes:
        """The text exposition format, for ``GET /metrics``."""
        return generate_latest(self.registry)
