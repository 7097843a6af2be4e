"""A suite ready to run: whatever file format it came from, it loads into ``LoadedSuite``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.core.sample import Sample
from assay.core.spec import CompiledSpec


@dataclass(slots=True)
class LoadedSuite:
    """Samples and the graders to apply to them.

    ``graders`` apply to every sample; ``sample_graders`` adds task-level graders for
    particular samples (waza task files, Vally stimuli). ``threshold``: minimum weighted
    score for a sample to pass; None means every scored grader must pass.
    ``cost_ordered``: grade cheap graders first and skip expensive ones for a sample once a
    cheap grader has failed.
    """

    name: str
    samples: list[Sample]
    graders: list[CompiledSpec]
    sample_graders: dict[str, list[CompiledSpec]] = field(default_factory=dict)
    threshold: float | None = None
    cost_ordered: bool = False
    source: Path | None = None
    format: str = "assay"
    metadata: dict = field(default_factory=dict)
    inputs: list[Path] = field(default_factory=list)
    """Files the suite was read from (suite file, dataset): outputs must never overwrite them."""

    def graders_for(self, sample_id: str) -> list[CompiledSpec]:
        extra = self.sample_graders.get(sample_id)
        return self.graders + extra if extra else self.graders
