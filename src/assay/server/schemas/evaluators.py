"""Bodies of the evaluator endpoints, as the product specification defines them (section 五)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from assay.core.result import Status
from assay.server.schemas.common import ApiModel, NoNul
from assay.store.models import NAME_MAX, EvaluatorType

Language = Literal["python", "nodejs"]
Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX), NoNul]
Description = Annotated[str, Field(max_length=4000), NoNul]

CONFIG_DOC = (
    "By type. preset: {presetType: exact_match|contains|regex|json_schema|similarity, params}; "
    "code: {language: nodejs|python, code, timeout?: ms (default 5000)}; llm: the llm grader's config "
    "{rubric, scale?, threshold?, model?}; composite: {graders: [{type, name, config, weight}], rule?, threshold?}."
)


class EvaluatorCreate(ApiModel):
    """A new evaluator. The specification's MVP creates ``code`` evaluators; ``preset`` (a preset
    rule with your own params), ``llm`` and ``composite`` are accepted too."""

    name: Name
    description: Description | None = None
    type: EvaluatorType
    config: dict[str, Any] = Field(description=CONFIG_DOC)


class EvaluatorUpdate(ApiModel):
    """Changes to an evaluator: the fields given replace the stored ones (a new ``type`` needs
    its ``config``)."""

    name: Name | None = None
    description: Description | None = None
    type: EvaluatorType | None = None
    config: dict[str, Any] | None = Field(default=None, description=CONFIG_DOC)


class EvaluatorSummary(ApiModel):
    """An evaluator in the list (``language`` is the code evaluators' column of the list page;
    ``owner`` the name of the user who created it, null for presets)."""

    id: str
    name: str
    description: str | None
    type: EvaluatorType
    is_preset: bool
    language: str | None = None
    owner: str | None = None
    created_at: str
    updated_at: str


class EvaluatorDetail(EvaluatorSummary):
    """An evaluator with its config and its creator."""

    config: dict[str, Any]
    created_by_id: str | None = None
    version: int | None = Field(default=None, description="The number of the version this is (each save is one: "
                                                          "GET /evaluators/{id}/versions).")


class EvaluatorVersionOut(ApiModel):
    """One save of an evaluator: what it was, who saved it and when."""

    number: int = Field(description="Numbered from 1, one per save.")
    name: str
    description: str | None
    type: EvaluatorType
    config: dict[str, Any] = Field(description="The config as stored (validated, every default filled in).")
    author: str | None = Field(description="The name of who saved it.")
    author_id: str | None
    created_at: str | None
    current: bool = Field(description="Whether the evaluator holds this version now.")


class PresetOut(ApiModel):
    """A preset evaluator with its config."""

    id: str
    name: str
    description: str
    type: Literal["preset"] = "preset"
    config: dict[str, Any]


class TestRequest(ApiModel):
    """One sample to grade: ``metadata`` is the dataset's other fields."""

    input: str = Field(max_length=1 << 20)
    output: str = Field(max_length=1 << 20)
    expected: str | None = Field(default=None, max_length=1 << 20)
    metadata: dict[str, Any] = Field(default_factory=dict)


class TestResult(ApiModel):
    """The grade. ``error`` is null, or the code of what kept the evaluator from grading
    (``timeout``, ``memory``, ``sandbox_violation``, ``runtime_error``, ``invalid_output``, ...)
    with ``reason`` saying what happened; ``status`` and ``details`` add the engine's view.
    ``reasonCode`` and ``reasonArgs`` name the message ``reason`` says when the product wrote
    it (null for what the evaluator's own code returned), for a page to say it in its language."""

    passed: bool
    score: float | None
    reason: str | None
    reason_code: str | None = None
    reason_args: dict[str, Any] | None = None
    latency_ms: float = Field(description="The evaluation's own time, ms (in the sandbox, for code).")
    error: str | None
    status: Status
    details: dict[str, Any] = Field(default_factory=dict)
    wait_ms: float = Field(default=0.0, description=(
        "Time the test spent besides its evaluation, ms: waiting for a sandbox worker or a thread, "
        "behind other tests and runs. latencyMs plus waitMs is about the time the server took."))
