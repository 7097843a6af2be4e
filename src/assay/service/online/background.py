"""Online evaluation's part of a server besides the intake: the planner, which turns stored
spans into jobs (``planner``), and the exporter of verdicts (``export``). The jobs are graded
by the server's run slots, from the run queue (``service.worker``, ``grader``).
"""

from __future__ import annotations

from collections.abc import Callable

from assay.service.online.export import ResultExporter
from assay.service.online.planner import Planner
from assay.settings import Settings
from assay.store.db import Database
from assay.store.outage import DatabaseHealth


class OnlineBackground:
    def __init__(self, database: Database, settings: Settings, health: DatabaseHealth | None = None,
                 exporter: ResultExporter | None = None, scheduled: Callable[[], None] = lambda: None) -> None:
        self.exporter = exporter
        self.planner = Planner(database, settings.queue_poll_ms / 1000, health, scheduled=scheduled)
        """Schedules the spans the intake stored (on every server); ``scheduled`` wakes the run slots."""

    def start(self) -> None:
        if self.exporter is not None:
            self.exporter.start()
        self.planner.start()

    def arrived(self) -> None:
        """The intake stored new spans: plan them now."""
        self.planner.wake()

    def forget_rules(self) -> None:
        """A rule changed in this process."""
        self.planner.forget_rules()

    def close(self) -> None:
        """After the run worker's close (its slots no longer offer verdicts)."""
        self.planner.close()
        if self.exporter is not None:
            self.exporter.close()

    def alive(self) -> bool:
        return self.planner.alive() and (self.exporter is None or self.exporter.alive())
