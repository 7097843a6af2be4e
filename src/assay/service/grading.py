"""The engine as the service uses it: validating evaluator configs that arrive over the API
(untrusted), compiling stored rows once and keeping them, and grading one sample.

Everything here is synchronous. Grading may take time (a sandbox call, a judge call, a slow
pattern), so routes call it from the threadpool, except where ``runs_inline`` says the grade
is cheap and bounded: a preset on a small sample is graded on the event loop, which saves two
thread hand-offs per request.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from assay.core.context import SpecContext
from assay.core.grader import Grader
from assay.core.interfaces import Resources
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec
from assay.runner.execute import grade_one
from assay.runner.sizing import cores
from assay.service.coalesce import Coalescer
from assay.service.metrics import Metrics
from assay.settings import Settings
from assay.store.changes import ChangeStamp
from assay.store.models import Evaluator
from assay.store.translate import api_types, compile_row

_CACHE_LIMIT = 4096
INLINE_MAX_CHARS = 8192
"""Output and expected text, together, that a preset grades inline (well under a millisecond)."""


class Grading:
    """Compiles and grades evaluators for one server process, sharing its ``Resources`` (the
    sandbox pool, the judge client) across requests and runs."""

    def __init__(self, settings: Settings, resources: Resources, stamp: ChangeStamp | None = None,
                 metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.resources = resources
        self.metrics = metrics
        """Where the run queue counts its slices, results and runs (``service.slices``)."""
        self.stamp = stamp if stamp is not None else ChangeStamp(None, "evaluators")
        runner = resources.code_runner
        self.allowed = api_types(allow_programs=settings.api_allow_programs)
        self.arriving = SpecContext(
            check_code=runner.check if runner is not None else None,
            code_timeout_max_ms=settings.code_timeout_max_ms, untrusted=True,
            judge_base_urls=settings.api_judge_base_urls, judge_key_envs=settings.api_judge_key_envs)
        # Stored rows were checked when they arrived: compiling them again skips the Node.js
        # syntax check (a sandbox round trip) but keeps every other rule.
        self.stored = SpecContext(code_timeout_max_ms=settings.code_timeout_max_ms, untrusted=True,
                                  judge_base_urls=settings.api_judge_base_urls,
                                  judge_key_envs=settings.api_judge_key_envs)
        self._graders: dict[str, Grader[Any]] = {}
        self.coalescer = Coalescer(cores())  # batches of one caller's tests at once: the cores bound them
        """Batches one caller's concurrent tests of one code evaluator (``service.coalesce``)."""
        self._generation = 0
        self._seen = self.stamp.read()
        self._lock = threading.Lock()

    def validate(self, evaluator_type: str, config: Mapping[str, Any], name: str) -> CompiledSpec:
        """Check a config arriving over the API; raises SpecError naming the field."""
        return compile_row(evaluator_type, config, name, context=self.arriving, allowed=self.allowed)

    def compile_stored(self, evaluator_type: str, config: Mapping[str, Any], name: str,
                       weight: float = 1.0) -> CompiledSpec:
        """Compile a stored config (a row, or a run's snapshot of one) for grading."""
        return compile_row(evaluator_type, config, name, context=self.stored, weight=weight)

    def cached(self, evaluator_id: str) -> Grader[Any] | None:
        """The grader of a stored evaluator when this process holds it: no database round trip.
        A change of any evaluator, in this process or another (the ``ChangeStamp``), drops
        what is kept first, so a cached grader is always the row's."""
        seen = self.stamp.read()
        if seen != self._seen:
            with self._lock:
                self._seen = seen
                self._generation += 1
                self._graders.clear()
            return None
        return self._graders.get(evaluator_id)

    def generation(self) -> int:
        """A mark to take before reading a row and to hand to ``grader``: a row read before a
        change must not be cached after it."""
        return self._generation

    def grader(self, evaluator: Evaluator, generation: int | None = None) -> Grader[Any]:
        """The grader of a stored evaluator, built once per version of the row (kept unless the
        row changed since ``generation``)."""
        grader = self._graders.get(evaluator.id)
        if grader is not None:
            return grader
        grader = self.compile_stored(evaluator.type, evaluator.config, evaluator.name).build(self.resources)
        with self._lock:
            if generation is None or generation == self._generation:
                if len(self._graders) >= _CACHE_LIMIT:
                    self._graders.clear()
                self._graders[evaluator.id] = grader
        return grader

    def forget(self, evaluator_id: str) -> None:
        """Drop the grader of an evaluator that changed or was deleted, here and (through the
        stamp) in every other process of the database. Call it after the change is committed."""
        self.stamp.bump()
        with self._lock:
            self._generation += 1
            self._graders.pop(evaluator_id, None)

    @staticmethod
    def runs_inline(grader: Grader[Any], sample: Sample) -> bool:
        """Whether grading ``sample`` is cheap and bounded enough for the event loop: the grader
        says it is ``inline`` (bounded by the sample's size) and the sample is small."""
        if not grader.traits.inline:
            return False
        size = len(sample.output) if isinstance(sample.output, str) else INLINE_MAX_CHARS + 1
        size += len(sample.expected) if isinstance(sample.expected, str) else 0
        return size <= INLINE_MAX_CHARS

    def grade(self, grader: Grader[Any], sample: Sample) -> GraderResult:
        """Grade one sample: any exception becomes an error result (the runner's rule)."""
        return grade_one(grader, sample)
