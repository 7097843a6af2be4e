"""What the pages need beyond the JSON API, under ``/pages/api`` (same token, same envelope):

- the JSON Schema of each evaluator config, to draw the config forms;
- a test run of a draft (the editor's content, saved or not) through the same engine calls as
  ``POST /api/v1/evaluators/{id}/test``;
- the score histogram of a run, and one sample's dataset row;
- the encoding and header of a CSV file about to be uploaded (its first bytes), for the upload's
  column-mapping step.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from assay.core import registry
from assay.core.messages import Phrase
from assay.runner.dataset import csv_header
from assay.server import trial
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, not_found
from assay.server.schemas.common import ERROR_RESPONSES, Envelope
from assay.server.schemas.evaluators import EvaluatorType, TestRequest, TestResult
from assay.service import datasets as ingest
from assay.store import datasets as dataset_rows
from assay.store import runs as run_rows
from assay.store.clean import storable

router = APIRouter(prefix="/pages/api", include_in_schema=False, responses=ERROR_RESPONSES)


class DraftTest(TestRequest):
    """An evaluator as the editor holds it, and one sample to grade with it."""

    name: str = Field(default="draft", min_length=1, max_length=200)
    type: EvaluatorType
    config: dict[str, Any]


@router.get("/schemas", response_model=Envelope[dict[str, Any]])
def config_schemas(_user: CurrentUser) -> Any:
    """Grader type → the JSON Schema of its config (a preset's ``params``, the llm and
    composite configs, the code config)."""
    schemas = {t: cls.Config.model_json_schema() for t, cls in registry.all_graders().items() if cls.traits.form}
    return Envelope(data=schemas)


@router.post("/evaluators/test", response_model=Envelope[TestResult])
async def test_draft(body: DraftTest, service: ServiceDep, user: CurrentUser) -> Any:
    """Grade one sample with a draft evaluator, as ``POST /evaluators/{id}/test`` grades a
    stored one (``server.trial``); an invalid config is a 422 naming the field (and, for
    code, the line)."""
    grading = service.grading
    trial.check_code_size(service.settings, body.type, body.config)
    spec = await run_in_threadpool(grading.validate, body.type, body.config, body.name)  # may ask the sandbox
    return trial.answer(*await trial.grade(grading, spec.build(grading.resources), trial.sample_of(body), user.id))


@router.get("/runs/{run_id}/histogram", response_model=Envelope[dict[str, Any]])
def score_histogram(run_id: str, session: SessionDep, _user: CurrentUser,
                    evaluator_id: Annotated[str | None, Query(alias="evaluatorId")] = None,
                    bins: Annotated[int, Query(ge=2, le=50)] = 10) -> Any:
    """Counts of scores in ``bins`` equal bins of [0, 1] (the last one closed), and how many
    results had no score (errors, pending)."""
    if run_rows.get_run(session, run_id) is None:
        raise not_found("run", run_id)
    counts, unscored = run_rows.score_histogram(session, run_id, evaluator_id, bins)
    edges = [round(i / bins, 6) for i in range(bins + 1)]
    return Envelope(data={"bins": [{"from": edges[i], "to": edges[i + 1], "count": c} for i, c in enumerate(counts)],
                          "unscored": unscored})


@router.get("/runs/{run_id}/samples/{sample_id}", response_model=Envelope[dict[str, Any]])
def sample_row(run_id: str, sample_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    """The dataset row a run graded as ``sample_id``, from the version it graded."""
    run = run_rows.get_run(session, run_id)
    if run is None:
        raise not_found("run", run_id)
    row = None
    if run.dataset_version_id is not None:
        row = dataset_rows.find_row(session, run.dataset_version_id, storable(sample_id))
    return Envelope(data={"taskId": run.task_id, "row": row})


HEAD_BYTES = 64 << 10
"""What the page sends of a file to read its header: as much as the encoding is told from."""
HEAD_TOO_LONG = Phrase("api.dataset.head_too_long", "send at most the first {limit} bytes of the file")


@router.post("/datasets/header", response_model=Envelope[dict[str, Any]])
async def csv_file_header(request: Request, _user: CurrentUser,
                          filename: Annotated[str, Query(min_length=1, max_length=1000)]) -> Any:
    """The encoding and header columns of the CSV or TSV file whose first bytes are the body
    (at most ``HEAD_BYTES``), read as an upload of it would be: ``{encoding, columns}``."""
    head = bytearray()
    async for chunk in request.stream():
        head += chunk
        if len(head) > HEAD_BYTES:
            raise ApiError(413, HEAD_TOO_LONG(limit=HEAD_BYTES))
    path = Path(ingest.upload_name(filename) or "file.csv")
    if ingest.file_format(path.name) != "csv":
        return Envelope(data={"encoding": None, "columns": []})
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    encoding, columns = await run_in_threadpool(csv_header, io.BytesIO(bytes(head)), path, delimiter)
    return Envelope(data={"encoding": encoding, "columns": columns})
