"""A suite made of stored evaluator specs, for the service's runs graded on Ray.

``GradingActor`` (the workers of ``assay run --engine ray``) opens its suite on each worker;
a ``SpecsRef`` opens to the run's snapshot of evaluators compiled under the rules of stored,
untrusted configs (the service's), each grader named by its evaluator id so that two
evaluators with one name stay apart, and a source of JSON lines: the service sends a slice's
rows as a batch of JSON text, which the worker reads by assay's own JSON rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.core.context import SpecContext
from assay.runner.ray_engine._source import Source
from assay.runner.suites import Suite
from assay.store.translate import compile_row


@dataclass(frozen=True, slots=True)
class SpecsRef:
    """``specs``: ``(evaluator id, type, config, weight)`` of a run's snapshot."""

    specs: tuple[tuple[str, str, Any, float], ...]
    code_timeout_max_ms: int
    judge_base_urls: frozenset[str] = frozenset()
    judge_key_envs: frozenset[str] = frozenset()

    def open(self, context: SpecContext | None = None) -> tuple[Suite, Source]:
        stored = SpecContext(code_timeout_max_ms=self.code_timeout_max_ms, untrusted=True,
                             judge_base_urls=self.judge_base_urls, judge_key_envs=self.judge_key_envs)
        graders = [compile_row(kind, config, evaluator_id, context=stored, weight=weight)
                   for evaluator_id, kind, config, weight in self.specs]
        return Suite(name="service run", samples=[], graders=graders), Source("jsonl")
