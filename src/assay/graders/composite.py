"""``composite``: several child graders combined by a rule.

Config: ``graders``, child specs ``{type, name, config, weight}`` compiled when the composite's
spec is validated, under the same ``SpecContext`` (a bad child is a config error naming its
field, ``config.graders[1].config.pattern``); ``rule`` ``all`` (default), ``any`` or
``weighted`` with ``threshold`` (default 0.5).

A child's ``error`` or ``pending`` is reported, never folded into a failure:

- ``all``: any child failed → failed; else any errored → error (the first error's code); else
  any pending → pending; else passed. Score: the lowest child score.
- ``any``: any child passed → passed; else any errored → error; else any pending → pending;
  else failed. Score: the highest child score.
- ``weighted``: the weighted mean of the children that scored, against ``threshold``; errored
  and pending children are left out and counted. None scored → error (pending when the only
  unscored children are pending).

Every child's result is in ``details.children`` (name, type, status, score, reason, error,
weight; a nested composite's own ``children`` too). Children are built with the composite's
``Resources`` and grade the whole batch through their ``grade_batch``, so an LLM child sends
one batch. Composites nest up to ``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Self

from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from assay.core.context import SpecContext, spec_context
from assay.core.errors import SpecError
from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import Resources
from assay.core.messages import Phrase, Said, said_again
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult, Kind, Status
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec, compile_spec

AWAITING = Phrase("composite.awaiting", "awaiting: {names}")
FAILED = Phrase("composite.failed", "failed: {names}")
UNGRADED = Phrase("composite.ungraded", "could not grade: {names} ({name}: {reason})")
NONE_SCORED = Phrase("composite.none_scored", "no child scored; could not grade: {names} ({name}: {reason})")
NO_WEIGHT = Phrase("composite.no_weight", "no child with a weight above 0 scored")
WEIGHTED = {  # (passed, some children left out)
    (True, False): Phrase("composite.reaches", "weighted score {score} reaches {threshold}"),
    (False, False): Phrase("composite.below", "weighted score {score} is below {threshold}"),
    (True, True): Phrase("composite.reaches_left_out", "weighted score {score} reaches {threshold}; left out: "
                                                        "{errors} errors, {pending} pending"),
    (False, True): Phrase("composite.below_left_out", "weighted score {score} is below {threshold}; left out: "
                                                       "{errors} errors, {pending} pending"),
}

MAX_DEPTH = 5
"""Deepest nesting of composites (a composite of plain graders is depth 1)."""

_COSTS = ("free", "low", "medium", "high")
_KINDS: tuple[Kind, ...] = ("code", "llm", "human")


class CompositeConfig(GraderConfig):
    """Child specs and the rule that combines their results."""

    graders: list[dict[str, Any]] = Field(min_length=1, description="Child grader specs {type, name, config, "
                                                                   "weight}; names must be distinct.")
    rule: Literal["all", "any", "weighted"] = Field(default="all", description="all: every child passes; any: one "
                                                    "child passes; weighted: the weighted mean score of the "
                                                    "children that scored reaches threshold.")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="Pass mark of the weighted rule.")

    _children: tuple[CompiledSpec, ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _compile_children(self, info: ValidationInfo) -> Self:
        depth = _nesting(self.graders)
        if depth > MAX_DEPTH:
            raise ValueError(f"composites nest {depth} deep; at most {MAX_DEPTH} levels are allowed")
        context: SpecContext = spec_context(info.context)
        children = []
        seen: set[str] = set()
        for i, raw in enumerate(self.graders):
            try:
                child = compile_spec(raw, path=f"graders[{i}]", context=context)
            except SpecError as exc:
                # Not a ValueError, so pydantic lets it through; Composite.parse_config, which
                # knows the outer field path, compiles the child again to name it in full.
                raise _ChildSpecError(i, raw, exc) from None
            if child.name in seen:
                raise _ChildSpecError(i, None, SpecError(f"duplicate child name {child.name!r}; give each child "
                                                         "a distinct `name`", path="name"))
            seen.add(child.name)
            children.append(child)
        if self.rule == "weighted" and not any(c.weight > 0 for c in children):
            raise ValueError("rule weighted needs at least one child with a weight above 0")
        self._children = tuple(children)
        return self

    def dump(self) -> dict[str, Any]:
        """Every field, and each child as its validated spec with its own defaults filled in."""
        return {**super().dump(), "graders": [child.dump() for child in self._children]}

    @property
    def children(self) -> tuple[CompiledSpec, ...]:
        """The compiled child specs, in order."""
        return self._children

    @property
    def taxonomy(self) -> Taxonomy:
        """The taxonomy of the costliest child (the first of equals): a composite costs what
        its dearest part costs, and is as deterministic as that part."""
        return max((c.taxonomy for c in self._children), key=lambda t: _COSTS.index(t.cost))

    @property
    def kind(self) -> Kind:
        """``human`` if a child needs a person, else ``llm`` if a child is a model judge, else ``code``."""
        return max((c.kind for c in self._children), key=_KINDS.index)

    @property
    def traits(self) -> Traits:
        """The children's traits combined: it waits on I/O, judges, runs programs, reads the
        workspace or awaits review if any child does; it is API-safe and cheap inline only
        if every child is; it batches its I/O if every child that waits does. No kernel: the
        columnar path grades a composite through its children's ``grade_batch``."""
        kids = [c.traits for c in self._children]
        waiting = [t for t in kids if t.io_bound]
        return Traits(io_bound=bool(waiting), batches_io=bool(waiting) and all(t.batches_io for t in waiting),
                      judge=any(t.judge for t in kids), runs_programs=any(t.runs_programs for t in kids),
                      reads_workspace=any(t.reads_workspace for t in kids), api_safe=all(t.api_safe for t in kids),
                      inline=all(t.inline for t in kids), reviewable=any(t.reviewable for t in kids), form=True)


class _ChildSpecError(Exception):
    """A child spec is invalid: which child, its raw spec (to compile again under the full
    path), and the error as first raised."""

    def __init__(self, index: int, raw: Any, error: SpecError) -> None:
        super().__init__(str(error))
        self.index, self.raw, self.error = index, raw, error


def _nesting(graders: list[Any]) -> int:
    """How deep composites nest in these raw child specs (1: no composite child), walked
    without recursion so that an absurdly deep spec is refused before it is compiled."""
    deepest = 1
    stack = [(graders, 1)]
    while stack:
        items, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        for child in items:
            if isinstance(child, Mapping) and child.get("type") == "composite":
                config = child.get("config")
                inner = config.get("graders") if isinstance(config, Mapping) else None
                if isinstance(inner, list):
                    stack.append((inner, depth + 1))
    return deepest


@register
class Composite(Grader[CompositeConfig]):
    type = "composite"
    description = "Child graders combined by a rule: all, any, or a weighted mean against a threshold."
    taxonomy = Taxonomy(cost="high", determinism="complex-static")
    """The class's cautious default; an instance carries its children's (``CompositeConfig.taxonomy``)."""
    traits = Traits(api_safe=True, form=True)
    """The class's facts for a type-level question (may a caller use composites at all?); an
    instance carries its children's (``CompositeConfig.traits``)."""

    def __init__(self, config: CompositeConfig, *, name: str | None = None, weight: float = 1.0,
                 resources: Resources | None = None) -> None:
        super().__init__(config, name=name, weight=weight, resources=resources)
        self.children: list[Grader[Any]] = [c.build(self.resources) for c in config.children]

    @classmethod
    def traits_for(cls, config: GraderConfig) -> Traits:
        return config.traits if isinstance(config, CompositeConfig) else cls.traits

    @classmethod
    def kind_for(cls, config: GraderConfig) -> Kind:
        return config.kind if isinstance(config, CompositeConfig) else cls.kind

    @classmethod
    def taxonomy_for(cls, config: GraderConfig) -> Taxonomy:
        return config.taxonomy if isinstance(config, CompositeConfig) else cls.taxonomy

    @classmethod
    def parse_config(cls, raw: Any, *, path: str = "config", context: SpecContext | None = None) -> GraderConfig:
        try:
            return super().parse_config(raw, path=path, context=context)
        except _ChildSpecError as exc:
            where = f"{path}.graders[{exc.index}]"
            if exc.raw is not None:
                compile_spec(exc.raw, path=where, context=context)  # raises, naming the full path
            raise exc.error.within(path=where) from None

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        per_child = [_grade_child(child, samples) for child in self.children]
        return [self._combine([rows[i] for rows in per_child]) for i in range(len(samples))]

    def _combine(self, results: list[GraderResult]) -> GraderResult:
        cfg = self.config
        details: dict[str, Any] = {"rule": cfg.rule, "children": [_child_row(r) for r in results]}
        failed = [r for r in results if r.status is Status.FAILED]
        passed = [r for r in results if r.status is Status.PASSED]
        errors = [r for r in results if r.status is Status.ERROR]
        pending = [r for r in results if r.status is Status.PENDING]
        scores = [r.score for r in results if r.scored and r.score is not None]
        if cfg.rule == "all":
            if failed:
                return self.scored_result(False, min(scores), _names(FAILED, failed), details)
            if errors:
                return self._error(errors, details)
            if pending:
                return self.pending_result(_names(AWAITING, pending), details)
            return self.scored_result(True, min(scores), None, details)
        if cfg.rule == "any":
            if passed:
                return self.scored_result(True, max(scores), None, details)
            if errors:
                return self._error(errors, details)
            if pending:
                return self.pending_result(_names(AWAITING, pending), details)
            return self.scored_result(False, max(scores), _names(FAILED, failed), details)
        return self._weighted(results, errors, pending, details)

    def _weighted(self, results: list[GraderResult], errors: list[GraderResult], pending: list[GraderResult],
                  details: dict[str, Any]) -> GraderResult:
        scored = [r for r in results if r.scored and r.score is not None]
        total = sum(r.weight for r in scored)
        details.update(threshold=self.config.threshold, scored=len(scored), errors=len(errors),
                       pending=len(pending))
        if not scored or total <= 0:
            if errors or not pending:
                return self._error(errors, details, none_scored=True)
            return self.pending_result(_names(AWAITING, pending), details)
        mean = sum((r.score or 0.0) * r.weight for r in scored) / total  # (no score in scored is None)
        mean = min(1.0, max(0.0, mean))
        ok = mean >= self.config.threshold
        said = {"score": f"{mean:.3f}", "threshold": f"{self.config.threshold:g}"}
        reason = None if ok and not (errors or pending) else \
            WEIGHTED[ok, True](**said, errors=len(errors), pending=len(pending)) if errors or pending else \
            WEIGHTED[ok, False](**said)
        return self.scored_result(ok, mean, reason, details)

    def _error(self, errors: list[GraderResult], details: dict[str, Any], *, none_scored: bool = False) -> GraderResult:
        if not errors:  # weighted, every scored child has weight 0
            return self.error_result(ErrorCode.INVALID_CONFIG, NO_WEIGHT(), details)
        first = errors[0]
        return self.error_result(first.error or ErrorCode.RUNTIME_ERROR,
                                 (NONE_SCORED if none_scored else UNGRADED)(
                                     names=", ".join(r.name for r in errors), name=first.name,
                                     reason=said_again(first.reason or "", first.reason_code, first.reason_args)),
                                 details)


def _grade_child(child: Grader[Any], samples: Sequence[Sample]) -> list[GraderResult]:
    """The child's results for ``samples``. The composite is the runner of its children, so,
    as the runner does, it turns a child that raises into that child's ``runtime_error``
    result instead of losing its siblings' results; a batch that raises is regraded one by one."""
    try:
        results = child.grade_batch(samples)
        if len(results) == len(samples):
            return results
    except Exception:  # noqa: BLE001  see the docstring
        pass
    out = []
    for s in samples:
        try:
            out.append(child.grade(s))
        except Exception as exc:  # noqa: BLE001
            out.append(child.raised_result(exc, traceback.format_exc(limit=8)))
    return out


def _child_row(r: GraderResult) -> dict[str, Any]:
    row: dict[str, Any] = {"name": r.name, "type": r.type, "status": r.status.value, "score": r.score,
                           "reason": r.reason, "error": r.error.value if r.error else None, "weight": r.weight}
    if r.type == "composite" and "children" in r.details:
        row["children"] = r.details["children"]
    return row


def _names(phrase: Phrase, results: list[GraderResult]) -> Said:
    return phrase(names=", ".join(r.name for r in results))
