"""The files of a waza suite as typed models (both editions): ``eval.yaml`` (``WazaEvalFile`` and its
``config``), task files (``WazaTask``, its ``inputs`` and ``expected``).

Every model keeps unknown keys (``extra="allow"``) so the dialect decides what they mean for
the release read (``waza.py``); each names the Go type waza decodes it into (``go_type``), for
waza's own wording of an unknown key. The fields are those waza defines in any release known
(``internal/models/spec.go``, ``testcase.go``; ``schemas/eval.schema.json``, ``task.schema.json``),
so none of them is ever called unknown, plus assay's extensions (``results``, ``cost_ordered``,
``waza_version``; a task's ``inputs.output`` / ``inputs.transcript``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field

from assay.runner.suites.filemodel import FileModel, Text


def _task_glob(value: Any) -> Any:
    pattern = value.get("include") if isinstance(value, Mapping) else value
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("a task entry must be a glob string or {include: glob}")
    return pattern


def _task_id(value: Any) -> Any:
    if value is None or isinstance(value, (Mapping, list, bool)):
        raise ValueError("a task needs an id (text)")
    return str(value)


class WazaConfig(FileModel):
    """Run settings (``config:``). assay runs no agent: it reads ``judge_model`` (the model of
    ``prompt`` graders, by release), ``trials_per_task`` (checked against the runs a results
    file holds) and ``cost_ordered`` (an assay extension); the rest is kept as written."""

    model_config = ConfigDict(extra="allow")
    go_type: ClassVar[str] = "models.Config"

    cost_ordered: bool = False
    judge_model: Text | None = None
    trials_per_task: int | None = Field(
        default=None, ge=1, strict=True, description="Runs of each task waza makes: in assay, the runs a results "
        "file holds for a task, each a sample `<id>#<n>` clustered by task (not `--repeats`, which re-grades one "
        "output).")
    timeout_seconds: Any = None
    parallel: Any = None
    max_workers: Any = None
    workers: Any = None
    fail_fast: Any = None
    verbose: Any = None
    executor: Any = None
    model: Any = None
    skill_directories: Any = None
    required_skills: Any = None
    mcp_servers: Any = None
    max_attempts: Any = None
    group_by: Any = None
    first_event_timeout_seconds: Any = None
    reasoning_effort: Any = None
    judge_reasoning_effort: Any = None
    instruction_files: Any = None
    inject_skill_body: Any = None
    trigger_skill_routing: Any = None
    disabled_skills: Any = None


class WazaEvalFile(FileModel):
    """A waza ``eval.yaml`` (both editions). ``results`` and ``cost_ordered`` are assay extensions."""

    model_config = ConfigDict(extra="allow")
    go_type: ClassVar[str] = "models.BenchmarkSpec"

    name: Text | None = Field(default=None, description="Suite name (default: the folder's name).")
    description: Text | None = None
    skill: Text | None = None
    version: Text | None = None
    schemaVersion: Any = None  # waza's spelling
    config: WazaConfig | None = None
    hooks: Any = None
    inputs: dict[str, Any] | None = Field(default=None, description="Template variables for `tasks_from` prompts.")
    tasks_from: Text | None = Field(default=None, description="A CSV file whose rows are the tasks (Go edition).")
    range: list[int] | None = Field(default=None, description="`[first, last]` CSV rows of `tasks_from` (1-based).")
    baseline: Any = None
    metrics: Any = Field(default=None, description="Kept as written; assay computes no waza metrics.")
    graders: list[Any] | None = Field(default=None, description="Graders applied to every task.")
    tasks: list[Annotated[str, BeforeValidator(_task_glob)]] | None = Field(
        default=None, description="Globs of task files, relative to eval.yaml (`pattern` or `{include: pattern}`).")
    scenario: Any = None
    mcp_mocks: Any = None
    command_mocks: Any = None
    adversarial: Any = None
    results: Text | None = Field(default=None, description="The results file to grade.")
    cost_ordered: bool = False
    waza_version: Text | None = Field(default=None, description="The waza release the suite is written for "
                                                                "(assay extension; `--waza-version` wins).")


class WazaExpectation(FileModel):
    """A task's ``expected:`` (``TaskExpectation``)."""

    model_config = ConfigDict(extra="allow")
    go_type: ClassVar[str] = "models.TaskExpectation"

    outcomes: Any = None
    tool_calls: Any = None
    behavior: Any = None
    output_contains: list[str] | None = Field(default=None, description="Strings the output must contain (any case).")
    output_not_contains: list[str] | None = Field(default=None, description="Strings the output must not contain.")
    output_contains_any: list[str] | None = Field(default=None, description="Strings of which one must occur.")
    should_trigger: Any = None


class WazaInputs(FileModel):
    """A task's ``inputs:`` (``TaskStimulus``); ``output`` and ``transcript`` are assay's (a run)."""

    model_config = ConfigDict(extra="allow")
    go_type: ClassVar[str] = "models.TaskStimulus"

    prompt: Any = None
    prompt_file: Any = None
    context: Any = None
    files: Any = None
    repos: Any = None
    workdir: Any = None
    environment: Any = None
    follow_up_prompts: Any = None
    responder: Any = None
    output: Any = None
    transcript: Any = None


class WazaTask(FileModel):
    """A waza task file."""

    model_config = ConfigDict(extra="allow")
    go_type: ClassVar[str] = "models.TestCase"

    id: Annotated[str, BeforeValidator(_task_id)]
    name: Text | None = None
    description: Text | None = None
    inputs: dict[str, Any] | None = Field(
        default=None, description="`prompt` is the sample's input; `output`/`transcript` a run (assay extension).")
    expected: Any = Field(default=None, description="Checked as `WazaExpectation` when a mapping.")
    graders: list[Any] | None = None
    tags: Any = None
    enabled: bool | None = Field(default=True, strict=True, description="`false` skips the task.")
    timeout_seconds: Any = None
    first_event_timeout_seconds: Any = None
    context_dir: Any = None
    golden: Any = None
    skill_directories: Any = None
    instruction_files: Any = None
    checkpoints: Any = Field(default=None, description="Per-turn graders, graded on the run after their turn "
                                                         "(`_waza_checkpoints`).")
    command_mocks: Any = None
