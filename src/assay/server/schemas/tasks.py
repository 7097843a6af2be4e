"""Bodies of the task, run and result endpoints (the specification's downstream phase)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from assay.core.result import Status
from assay.core.spec import MAX_WEIGHT
from assay.server.schemas.common import ApiModel, NoNul
from assay.server.schemas.evaluators import Description, Name
from assay.store.models import NAME_MAX, RunState

MAX_EVALUATORS = 50
MAX_INLINE_ROWS = 10_000


PinnedVersion = Annotated[int | None, Field(default=None, ge=1, le=2**31 - 1, description=(
    "The version number of the task's dataset that its runs grade; null (the default): the newest ready "
    "version when each run starts."))]


class TaskEvaluatorIn(ApiModel):
    evaluator_id: Annotated[str, Field(min_length=1, max_length=36), NoNul]
    weight: float = Field(default=1.0, ge=0.0, le=MAX_WEIGHT, allow_inf_nan=False)


class DatasetIn(ApiModel):
    """Rows as a dataset file holds them: ``id``, ``input``, ``output``, ``expected``,
    ``metadata``; other fields go into ``metadata``."""

    name: Annotated[str, Field(max_length=NAME_MAX), NoNul] | None = None  # the new dataset's name
    rows: list[dict[str, Any]] = Field(max_length=MAX_INLINE_ROWS)


class TaskCreate(ApiModel):
    name: Name
    description: Description | None = None
    evaluators: list[TaskEvaluatorIn] = Field(min_length=1, max_length=MAX_EVALUATORS)
    dataset: DatasetIn | None = Field(default=None, description="Inline rows, stored as a new dataset; or upload a "
                                                                "file to PUT /tasks/{id}/dataset later.")
    dataset_id: Annotated[str, Field(max_length=36), NoNul] | None = Field(
        default=None, description="A dataset of /datasets to grade (its newest version at each run); not with "
                                  "`dataset`.")
    pinned_version: PinnedVersion = None


class TaskUpdate(ApiModel):
    """Changes to a task: the fields given replace the stored ones (``evaluators`` the whole list,
    in its order; ``datasetId`` another dataset of /datasets, or null for none, which also drops
    a pin unless ``pinnedVersion`` is given too; ``pinnedVersion`` null to grade the newest
    version again). Runs already made keep what they graded."""

    name: Name | None = None
    description: Description | None = None
    evaluators: list[TaskEvaluatorIn] | None = Field(default=None, min_length=1, max_length=MAX_EVALUATORS)
    dataset_id: Annotated[str, Field(max_length=36), NoNul] | None = None
    pinned_version: PinnedVersion = None


class TaskEvaluatorOut(ApiModel):
    evaluator_id: str
    name: str
    type: str
    weight: float


class TaskOut(ApiModel):
    """A task; ``datasetVersion`` and ``sampleCount`` are those of the version its next run grades
    (the pinned one, when ``pinnedVersion`` is set and that version still exists)."""

    id: str
    name: str
    description: str | None
    dataset_id: str | None
    dataset_version: int | None
    dataset_name: str | None
    pinned_version: int | None = None
    sample_count: int
    evaluators: list[TaskEvaluatorOut]
    created_by_id: str | None
    owner: str | None = Field(default=None, description="The name of the user who created it (who may change it).")
    created_at: str
    updated_at: str


RunStatus = RunState


class PausedOut(ApiModel):
    """An evaluator paused in a run after timing out on ``timeouts`` samples in a row: the rest
    of its samples wait for ``POST /api/v1/runs/{id}/resume`` (or the run is cancelled)."""

    evaluator_id: str
    name: str
    paused_at: str
    timeouts: int


class RunOut(ApiModel):
    """A run: ``done`` of ``total`` (sample, evaluator) pairs graded; ``summary`` once completed."""

    id: str
    task_id: str
    dataset_version_id: str | None
    status: RunStatus
    total: int
    done: int
    progress: float
    summary: dict[str, Any] | None
    error: str | None
    error_id: str | None = Field(description="When the run failed on an internal error: quote it to the operator, "
                                             "whose server log has the details under this id.")
    created_by_id: str | None = Field(default=None, description="The user who started it (a run is theirs).")
    started_by: str | None = Field(default=None, description="Their name.")
    paused: list[PausedOut] = Field(default_factory=list, description="Its evaluators paused after timing out on "
                                    "sample after sample; the run stays active until they are resumed or it is "
                                    "cancelled.")
    created_at: str
    started_at: str | None
    finished_at: str | None


class ResultOut(ApiModel):
    """One evaluation result: an evaluator's verdict on one sample."""

    id: int
    run_id: str
    sample_id: str
    evaluator_id: str
    evaluator_name: str
    status: Status
    passed: bool
    score: float | None
    reason: str | None
    reason_code: str | None = None
    """The code of the message ``reason`` says when the product wrote it (see TestResult)."""
    reason_args: dict[str, Any] | None = None
    details: dict[str, Any]
    error: str | None
    latency_ms: float
    created_at: str


class ResultPage(ApiModel):
    """A page of a run's results. ``total`` is counted on pages asked by offset only (counting
    costs as much as reading a run's every result); ``next_cursor`` (null on a short page, the
    last) asks for the page after this one, as fast at any depth."""

    items: list[ResultOut]
    total: int | None
    limit: int
    offset: int
    next_cursor: str | None = None
