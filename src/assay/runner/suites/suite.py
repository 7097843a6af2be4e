"""A suite ready to run: whatever dialect its file was written in, it loads into ``Suite``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from assay.core.sample import Sample
from assay.core.spec import CompiledSpec


@dataclass(frozen=True, slots=True)
class DialectOptions:
    """What a caller asks of a dialect beyond the file: ``waza_version`` is the waza release
    to read a waza suite as (``--waza-version``); other dialects ignore it."""

    waza_version: str | None = None
    explain: bool = False
    """Whether ``Suite.explain`` should also say what other readings were possible (a waza
    suite: the older releases that also load it, and whether they grade it differently)."""


@dataclass(slots=True)
class Suite:
    """Samples, the graders to apply to them, and what the loader noticed on the way.

    ``graders`` apply to every sample; ``sample_graders`` adds task-level graders for
    particular samples (waza task files, Vally stimuli).
    """

    name: str
    samples: list[Sample]
    graders: list[CompiledSpec]
    sample_graders: dict[str, list[CompiledSpec]] = field(default_factory=dict)
    threshold: float | None = None
    """Minimum weighted score for a sample to pass; None means every scored grader must pass."""
    cost_ordered: bool = False
    """Grade cheap graders first and skip expensive ones for a sample once a cheap one failed."""
    dialect: str = "assay"
    """The dialect the suite file was read in (one of ``runner.suites.DIALECTS``)."""
    source: Path | None = None
    """The suite file."""
    definition: BaseModel | None = None
    """The suite file as read, in its dialect's typed model (``AssayFile``, ``WazaEvalFile``,
    ``VallyEvalFile``): the peer's own fields (a waza ``skill``, Vally ``scoring``) live there."""
    inputs: list[Path] = field(default_factory=list)
    """Files the suite was read from (suite file, task files, dataset, results file): outputs
    must never overwrite them."""
    missing: list[str] = field(default_factory=list)
    """Tasks (waza) or stimuli (Vally) that have no output to grade, so no sample."""
    unmatched_results: list[str] = field(default_factory=list)
    """Ids named by records of the results file that match no task or stimulus: their
    records were not graded (a typo in an id drops results, so it is also a warning)."""
    clusters: dict[str, str] = field(default_factory=dict)
    """Sample id -> the task it is one attempt of, for samples that share a task (waza
    trials, Vally trajectories of one stimulus): intervals cluster by it, comparisons pair by it."""
    repeats: int = 1
    """How many times each sample is graded (`repeats:` in the suite, `--repeats`): a judge
    or any grader that is not deterministic gives a new answer each time."""
    pass_k: int | None = None
    """The k of pass@k (`pass_k:` in the suite, `--pass-k`); ``pass_at`` says which k a run uses."""
    warnings: list[str] = field(default_factory=list)
    """Problems that did not stop the load, each naming its file (and line): keys a peer
    dialect ignores, results that match nothing. ``assay run`` prints them."""

    explain: list[str] = field(default_factory=list)
    """How the suite was read and why: dialect, edition, release, results-file schema
    (``assay run --explain-dialect`` prints it)."""

    @property
    def pass_at(self) -> int | None:
        """The k of the run's pass@k: ``pass_k``, else ``repeats`` when above 1, else None (the
        most attempts of any task, as waza trials and Vally trajectories come)."""
        return self.pass_k or (self.repeats if self.repeats > 1 else None)

    def all_graders(self) -> list[CompiledSpec]:
        """Every spec of the suite: the suite-wide graders, then each sample's own."""
        return self.graders + [spec for extra in self.sample_graders.values() for spec in extra]

    def graders_for(self, sample_id: str) -> list[CompiledSpec]:
        extra = self.sample_graders.get(sample_id)
        return self.graders + extra if extra else self.graders
