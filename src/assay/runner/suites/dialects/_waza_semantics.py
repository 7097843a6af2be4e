"""What waza's Go loader and runner do that no single grader shows, read from its source:

- **Required config.** ``LoadBenchmarkSpec`` validates the eval file before anything runs
  (``BenchmarkSpec.Validate``, ``internal/models/spec.go`` at v0.9.0 (tag), v0.12.0 (tag) and
  091a1f9e, unchanged at 0e7150c3): ``config.trials_per_task`` and ``config.timeout_seconds``
  must each be at least 1, and a missing one is 0, so waza refuses the suite with
  ``trials_per_task must be at least 1, got 0``. assay says so in those words, as a warning:
  it grades runs rather than making them, and a suite whose outputs are written inline (an
  assay extension) never runs under waza, so neither setting means anything to it.
- **One result per name.** ``graders.RunAll`` (``internal/graders/run.go`` at 0a694334) keeps
  results in a map keyed by the grader's name: the suite's graders go in first, then the task's
  validators, then the expectation results (``_output_contains`` ...), each replacing a result
  of the same name. So a task grader named like a suite grader replaces it for that task, and
  the sample is scored over the surviving results only.
- **One YAML document per file.** ``LoadTestCase`` and ``LoadBenchmarkSpec`` decode with
  yaml.v3 (``yaml.Unmarshal`` to v0.12.0 and 091a1f9e, ``Decoder.Decode`` from 0e7150c3), which
  reads a file's first document and ignores the rest; assay does the same with a warning
  naming the line where the ignored part starts. The Python edition's ``yaml.safe_load``
  refuses a second document, so there it stays an error.
"""

from __future__ import annotations

from typing import Any

from assay.core.sample import Sample
from assay.core.spec import CompiledSpec
from assay.runner.yamlsrc import YamlDoc

REQUIRED_CONFIG = ("trials_per_task", "timeout_seconds")
"""``BenchmarkSpec.Validate``'s checks, in its order."""


def check_required_config(doc: YamlDoc, config: Any, *, warnings: list[str]) -> None:
    """Warn, in waza's words, that waza refuses a ``trials_per_task`` or ``timeout_seconds``
    below 1 or missing (the first of them, as waza stops at the first)."""
    for key in REQUIRED_CONFIG:
        value = config.get(key) if isinstance(config, dict) else None
        number = value if isinstance(value, int) and not isinstance(value, bool) else 0
        if number >= 1:
            continue
        if value is not None and number == 0 and not isinstance(value, int):
            continue  # not a number: the config model names that problem itself
        words = f"{key} must be at least 1, got {number}"
        at = ("config", key) if value is not None else ("config",)
        warnings.append(f"{doc.where(*at)}: config.{key}: waza (Go) refuses this suite before running it ({words}); "
                        "assay grades the runs it is given")
        return


def replace_by_name(suite: list[CompiledSpec], task: list[CompiledSpec]) -> tuple[list[CompiledSpec], set[str]]:
    """The task's graders, and the names of the suite graders they replace for that task."""
    names = {spec.name for spec in task}
    return task, {spec.name for spec in suite if spec.name in names}


def per_task(graders: list[CompiledSpec], samples: list[Sample], sample_graders: dict[str, list[CompiledSpec]],
              replaced: dict[str, set[str]]) -> list[CompiledSpec]:
    """The suite graders every sample keeps; a suite grader some task replaces (by name,
    above) moves to the samples of the other tasks."""
    names = set().union(*replaced.values()) if replaced else set()
    if not names:
        return graders
    moved = [g for g in graders if g.name in names]
    for sample in samples:
        gone = replaced.get(sample.metadata["task"], set())
        sample_graders[sample.id] = [g for g in moved if g.name not in gone] + sample_graders.get(sample.id, [])
    return [g for g in graders if g.name not in names]


def more_documents(tdoc: YamlDoc, edition: str, warnings: list[str]) -> None:
    """A file with a second YAML document: waza (Go) reads the first and ignores the rest
    (a warning); the Python edition refuses it."""
    if tdoc.more_at is None:
        return
    if edition != "go":
        raise tdoc.more_error()
    warnings.append(f"{tdoc.path}:{tdoc.more_at}: a second YAML document starts here; it is ignored, as waza reads "
                    "only a file's first document")
