"""The library face of assay: ``grade`` and ``grade_batch`` (re-exported as ``assay.grade``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.core.spec import GraderSpec, compile_spec
from assay.runner.execute import grade_many, grade_one
from assay.runner.resources import Defaults, build_context

_samples = TypeAdapter(list[Sample])


def _sample(value: Mapping[str, Any] | Sample, where: str = "sample") -> Sample:
    if isinstance(value, Sample):
        return value
    data = dict(_mapping(value, where))
    data.setdefault("id", "sample")
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        raise SpecError.from_validation(exc, where=f"sample {data.get('id')!r}") from None


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SpecError(f"a sample must be a mapping (id, input, output, expected, metadata), "
                        f"got {type(value).__name__}", where=where)
    return value


def _grader(spec: Mapping[str, Any] | GraderSpec, resources: Resources | None):
    """Compile ``spec`` and build its grader; Node.js code is checked by the sandbox that will run it."""
    resources = resources or Defaults.resources()
    return compile_spec(spec, context=build_context(Defaults.settings(), resources)).build(resources)


def grade(spec: Mapping[str, Any] | GraderSpec, sample: Mapping[str, Any] | Sample, *,
          resources: Resources | None = None) -> GraderResult:
    """Grade one sample with one grader spec ``{type, name?, config?, weight?}``.

    Raises SpecError for an invalid spec or sample; grading problems come back as a
    result with ``status == "error"``.
    """
    return grade_one(_grader(spec, resources), _sample(sample))


def grade_batch(spec: Mapping[str, Any] | GraderSpec, samples: Sequence[Mapping[str, Any] | Sample], *,
                resources: Resources | None = None) -> list[GraderResult]:
    """Grade many samples under one spec, validated once; vectorised where the grader allows."""
    grader = _grader(spec, resources)
    if all(isinstance(s, Sample) for s in samples):
        parsed = list(samples)
    else:
        if isinstance(samples, (str, bytes, Mapping)):
            raise SpecError(f"samples must be a list of mappings, got {type(samples).__name__}")
        rows = [s if isinstance(s, Sample) else {"id": str(i), **_mapping(s, f"samples[{i}]")}
                for i, s in enumerate(samples)]
        try:
            parsed = _samples.validate_python(rows)
        except ValidationError as exc:
            raise SpecError.from_validation(exc, path="samples") from None
    from concurrent.futures import ThreadPoolExecutor

    if grader.io_bound:
        with ThreadPoolExecutor(max_workers=4) as pool:
            return grade_many(grader, parsed, pool=pool)
    return grade_many(grader, parsed)
