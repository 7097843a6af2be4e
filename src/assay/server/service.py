"""What one server process holds: settings, the database, the engine's resources (the shared
sandbox pool and judge client), the token cache and the run worker. Built once by
``create_app`` at the composition root and reached by routes through ``deps``."""

from __future__ import annotations

from dataclasses import dataclass

from assay.core.interfaces import Resources
from assay.server.auth import TokenCache
from assay.server.coordination import ChangeStamp, RunLease, state_prefix
from assay.server.grading import Grading
from assay.server.metrics import Metrics
from assay.server.worker import RunWorker
from assay.settings import Settings
from assay.store.db import Database


@dataclass
class Service:
    settings: Settings
    database: Database
    grading: Grading
    tokens: TokenCache
    worker: RunWorker
    metrics: Metrics
    owns_resources: bool = True
    """False when the caller passed the resources in: it closes them, not the service."""

    @classmethod
    def build(cls, settings: Settings, resources: Resources | None = None) -> Service:
        owns_resources = resources is None
        if resources is None:
            from assay.runner.resources import build_resources

            resources = build_resources(settings)
        database = Database(settings.database_url)
        shared = state_prefix(database.url)
        grading = Grading(settings, resources, ChangeStamp(shared))
        worker = RunWorker(database, grading, settings.run_concurrency, lease=RunLease(shared))
        return cls(settings=settings, database=database, grading=grading, tokens=TokenCache(database),
                   worker=worker, metrics=Metrics(), owns_resources=owns_resources)

    def close(self) -> None:
        """Stop the run worker (an unfinished run is resumed at the next start), then the
        sandbox and judge client, then the database pool."""
        self.worker.close()
        adapters = (self.grading.resources.code_runner, self.grading.resources.judge_client)
        for adapter in adapters if self.owns_resources else ():
            close = getattr(adapter, "close", None)
            if close is not None:
                close()
        self.database.dispose()
