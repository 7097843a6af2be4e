"""What one server process holds: settings, the database (two pools: one for requests, one for
grading and the pollers, so that a crowd of readers cannot starve a run), the engine's resources
(the shared sandbox pool and judge client), the token cache, the run worker and the reaper of
stalled uploads. Built once by ``create_app`` at the composition root and reached by routes
through ``deps``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from assay.core.interfaces import Resources
from assay.runner.sizing import code_slots
from assay.server.auth import TokenCache
from assay.service.fairness import FairGate, fair_resources
from assay.service.grading import Grading
from assay.service.metrics import Metrics
from assay.service.online.background import OnlineBackground
from assay.service.online.export import ResultExporter, parse_headers
from assay.service.online.grader import OnlineGrader
from assay.service.online.intake import Intake
from assay.service.reaper import UploadReaper
from assay.service.run_summary import LiveSummaries
from assay.service.telemetry import meter_pool, metered_resources
from assay.service.worker import RunWorker
from assay.settings import Settings, retired
from assay.store.changes import Changes
from assay.store.db import Database, PoolLimits
from assay.store.outage import DatabaseHealth

log = logging.getLogger("assay.server")
SLOW_STOP_S = 1.0
"""A stop that takes longer logs what each of its steps took."""
BACKGROUND_THREADS = 5
"""Connections grading keeps besides one per run slot: the heartbeat, the change poller, the
upload reaper, the online planner and ``/ready``; as many more may open at a peak (``/metrics``, an evaluator edit
counted in the change counters, a finished run's summary)."""


@dataclass
class Service:
    settings: Settings
    database: Database
    grading: Grading
    tokens: TokenCache
    worker: RunWorker
    changes: Changes
    gate: FairGate
    metrics: Metrics
    reaper: UploadReaper
    background: Database
    """The grading pool: the run worker, the pollers and ``/ready`` (``database`` serves requests)."""
    health: DatabaseHealth
    """Whether the background threads see the database away (``store.outage``)."""
    intake: Intake
    """Spans arriving over OTLP (``POST /v1/traces``), through the requests' pool."""
    online: OnlineBackground
    """Plans online rules' jobs from stored spans and exports verdicts (the run slots grade them),
    through the grading pool."""
    live: LiveSummaries = field(default_factory=LiveSummaries)
    """The summaries so far of the runs whose pages are open (``pages.live``)."""
    owns_resources: bool = True
    """False when the caller passed the resources in: it closes them, not the service."""
    pool_gauges: Callable[[], None] = lambda: None
    """Sets the database pool's gauges (``service.telemetry.meter_pool``), at each scrape."""

    @classmethod
    def build(cls, settings: Settings, resources: Resources | None = None) -> Service:
        owns_resources = resources is None
        for warning in retired(settings.environ):
            log.warning("%s", warning)
        if resources is None:
            from assay.runner.resources import build_resources

            resources = build_resources(settings, shared=True)  # more workers than cores: ``runner.sizing``
        workers = code_slots(resources.code_runner, settings.sandbox_workers)
        wait_s = settings.database_wait_ms / 1000
        database = Database(settings.database_url, busy_ms=settings.sqlite_busy_ms,
                            pool=PoolLimits(settings.database_pool_size, settings.database_pool_overflow, wait_s))
        background = Database(settings.database_url, busy_ms=settings.sqlite_busy_ms,
                              pool=PoolLimits(settings.run_slots + BACKGROUND_THREADS,
                                              BACKGROUND_THREADS, wait_s))
        health = DatabaseHealth()
        changes = Changes(background, settings.change_poll_ms / 1000, health)
        # Runs and /test share the sandbox through one gate: users take its slots in turn.
        gate = FairGate(workers, settings.user_code_cap)
        metrics = Metrics()
        grading = Grading(settings, fair_resources(metered_resources(resources, metrics), gate, owned=owns_resources),
                          changes.stamp("evaluators"), metrics)
        exporter = _exporter(settings)
        worker = RunWorker(background, grading, settings, metrics, health,
                           online=OnlineGrader(background, grading, settings, exporter))
        tokens = TokenCache(database, settings.token_cache_ms / 1000, changes.stamp("tokens"))
        return cls(settings=settings, database=database, grading=grading, tokens=tokens, worker=worker, changes=changes,
                   gate=gate, metrics=metrics, reaper=UploadReaper(background, health=health),
                   background=background, health=health, intake=Intake(database, settings),
                   online=OnlineBackground(background, settings, health, exporter, scheduled=worker.wake),
                   owns_resources=owns_resources,
                   pool_gauges=meter_pool(database, metrics))

    def start(self) -> list[str]:
        """Read the change counters and join the run queue (the schema is up to date); returns
        the ids of the runs waiting in the queue."""
        self.changes.start()
        self.reaper.start()
        self.online.start()
        return self.worker.start()

    def close(self) -> None:
        """Stop at once: the run worker grades and stores nothing more, the sandbox (when this
        service owns it) kills the evaluations in flight, then the worker gives its unfinished
        slices (task runs' and online jobs') back to the queue (graded again at the next start: results
        are stored once, so nothing is lost or doubled); then the judge client, then the
        database pool. A sandbox the caller owns is left running: the workers then wait for
        the evaluations in flight."""
        resources = self.grading.resources
        # The code runner is this service's wrapper (``fairness``): it closes the sandbox only if owned.
        steps: list[tuple[str, Callable[[], object]]] = [
            ("halt", self.worker.halt), ("sandbox", lambda: _close(resources.code_runner)),
            ("run slots", self.worker.close), ("online", self.online.close), ("changes", self.changes.close),
            ("reaper", self.reaper.close),
            ("judge", lambda: _close(resources.judge_client) if self.owns_resources else None),
            ("database", self.database.dispose), ("background", self.background.dispose)]
        took = []
        for name, step in steps:
            began = time.perf_counter()
            step()
            took.append((name, time.perf_counter() - began))
        total = sum(seconds for _name, seconds in took)
        if total > SLOW_STOP_S:  # what held the stop up, for whoever waited on it
            log.info("stopping took %.2f s: %s", total,
                     ", ".join(f"{name} {seconds:.2f} s" for name, seconds in took if seconds >= 0.05))

    def problem(self) -> str | None:
        """Why this server cannot grade now (the database away, a background thread ended), or None."""
        problem = self.worker.problem()
        if problem is None:
            pollers = (("the change poller", self.changes.alive()), ("the upload reaper", self.reaper.alive()),
                       ("online planning", self.online.alive()))
            for name, alive in pollers:
                if not alive:
                    return f"{name} stopped: restart this server (the log says why)"
        return problem


def _close(adapter: object) -> None:
    close = getattr(adapter, "close", None)
    if close is not None:
        close()


def _exporter(settings: Settings) -> ResultExporter | None:
    """The sender of verdicts to ``ASSAY_OTLP_EXPORT_URL``, when it is set."""
    if settings.otlp_export_url is None:
        return None
    return ResultExporter(settings.otlp_export_url, parse_headers(settings.otlp_export_headers))
