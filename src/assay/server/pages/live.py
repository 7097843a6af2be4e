"""A run as its page shows it while it goes: ``GET /pages/api/runs/{id}/live`` → the results
stored so far (the run's count, which each committed chunk of results adds to in the same
transaction), the summary of the slices graded so far by the rules that write the finished
run's summary (``run_summary.LiveSummaries``: one definition of pass rate everywhere, errors
and pending counted apart, each read costing only what was graded since the last), and the
version of each evaluator the run graded (its version number, which the evaluator's page shows;
for runs older than versions, the saved version whose config is the one it snapshotted, or,
when none is, a hash of that config, said to predate the history; and that config, every default
filled in) with whether it changed since, and the dataset version it graded (the
dataset's name, the version's number, rows and file). Nothing here reads the run's every result."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from fastapi import APIRouter
from sqlalchemy.orm import Session

from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import not_found
from assay.server.routes.runs import paused_out
from assay.server.schemas.common import ERROR_RESPONSES, Envelope
from assay.store import datasets as dataset_rows
from assay.store import evaluators as evaluator_rows
from assay.store import runs as run_rows
from assay.store.models import ACTIVE_STATES
from assay.store.snapshot import weights

router = APIRouter(prefix="/pages/api", include_in_schema=False, responses=ERROR_RESPONSES)


def config_version(config: Any) -> str:
    """A short, stable name of a config's content: equal configs, equal versions."""
    return hashlib.sha256(orjson.dumps(config, option=orjson.OPT_SORT_KEYS)).hexdigest()[:8]


def graded_dataset(session: Session, version_id: str | None) -> dict[str, Any] | None:
    """The dataset version a run graded, as its page names it (None for a run without one)."""
    version = dataset_rows.version_by_id(session, version_id) if version_id else None
    if version is None:
        return None
    dataset = dataset_rows.get_dataset(session, version.dataset_id)
    return {"id": version.dataset_id, "name": dataset.name if dataset else None, "version": version.number,
            "rows": version.row_count, "file": version.source_name}


def version_of(session: Session, evaluator_id: str, digest: str) -> int | None:
    """The newest saved version of the evaluator whose config hashes to ``digest`` (None: none
    does, as for a run graded before the evaluator's history began, by a config since changed)."""
    for version in evaluator_rows.list_versions(session, evaluator_id):  # the newest first
        if config_version(version.config) == digest:
            return version.number
    return None


@router.get("/runs/{run_id}/live", response_model=Envelope[dict[str, Any]])
def live_run(run_id: str, service: ServiceDep, session: SessionDep, _user: CurrentUser) -> Any:
    run = run_rows.get_run(session, run_id)
    if run is None:
        raise not_found("run", run_id)
    snapshot = run.snapshot
    active = run.status in ACTIVE_STATES
    summary: dict[str, Any] | None
    if active:
        summary = service.live.summary(session, run_id, weights(snapshot))
    else:
        service.live.forget(run_id)
        summary = run.summary
    versions = []
    for graded in snapshot:
        digest = config_version(graded.config)
        current = evaluator_rows.get_evaluator(session, graded.evaluator_id)
        changed = current is None or (current.version != graded.version if graded.version is not None
                                      else config_version(current.config) != digest)
        number, matched = graded.version, None
        if number is None:  # a run from before versions: the version whose config is the one it graded
            number = matched = version_of(session, graded.evaluator_id, digest)
        versions.append({"evaluatorId": graded.evaluator_id, "name": graded.name, "type": graded.type,
                         "weight": graded.weight, "version": digest, "versionNumber": number,
                         "matchedByConfig": matched is not None,
                         "predatesHistory": graded.version is None and matched is None,
                         "config": graded.config, "changedSince": changed})
    return Envelope(data={"id": run.id, "taskId": run.task_id, "status": run.status, "total": run.total,
                          "done": min(run.done, run.total), "error": run.error, "summary": summary,
                          "createdById": run.created_by_id,
                          "paused": [paused.model_dump(by_alias=True) for paused in paused_out(session, run)],
                          "evaluators": versions, "dataset": graded_dataset(session, run.dataset_version_id)})
