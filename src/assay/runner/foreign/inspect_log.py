"""Inspect AI eval logs (``.eval``, and ``.json`` from ``--log-format json``), read as assay's
verdicts: through ``inspect_ai.log`` when Inspect is installed, by ``_eval_zip`` and a JSON
parse otherwise (or when the file's name does not end in .eval or .json, by which Inspect picks
its reader); both give the same dicts to one mapping. The plain reader is the stricter: it
checks each member's checksum, which Inspect's does not.

- **id**: the sample's id; with several epochs each is an attempt, ``id#r<epoch>``, clustered by
  the sample id (so intervals cluster by task and a comparison pairs tasks).
- **graders**: one per scorer (``sample.scores`` keys; a scorer whose value is a dict gives one
  per key, ``scorer/key``), type ``inspect:<scorer>``, kind ``llm`` for Inspect's model-graded
  scorers. A value reads as Inspect's ``value_to_float`` reads it: ``C`` 1, ``P`` 0.5, ``I`` and
  ``N`` 0, booleans, ``yes``/``no``, numbers. **Passed means full credit** (1); the score keeps
  the partial credit that Inspect's ``accuracy`` and ``mean`` count. A value that is none of
  these, or a number outside [0, 1], is an ``invalid_output`` error, never a guess.
- **errors**: a sample that errored (``sample.error``) without scores has an error result for
  every scorer of the log.
- **verdict**: assay's rule, every grader passed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.errors import SpecError
from assay.core.result import ErrorCode, GraderResult, Kind
from assay.runner.foreign._eval_zip import EvalZip
from assay.runner.foreign._results import errored, graded, number, obj, text
from assay.runner.local_engine.repeats import attempt_id

MODEL_GRADED = frozenset({"model_graded_qa", "model_graded_fact"})
"""Inspect's scorers whose verdict a model gives."""
_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_SAMPLE_FIELDS = {"id", "epoch", "scores", "error"}


def claims(doc: Any) -> bool:
    """True when ``doc`` is an Inspect log written as JSON (or a ``.eval``'s header)."""
    spec = doc.get("eval") if isinstance(doc, dict) else None
    return isinstance(spec, dict) and "task" in spec and "status" in doc and "version" in doc


def read_zip(path: Path) -> list[SampleVerdict]:
    """The samples of a ``.eval`` log."""
    return _read(path, lambda: _plain_zip(path))


def read_json(path: Path, doc: dict[str, Any]) -> list[SampleVerdict]:
    """The samples of a JSON log (already parsed: content told it apart)."""
    return _read(path, lambda: _plain_json(path, doc))


def _read(path: Path, plain: Callable[[], list[SampleVerdict]]) -> list[SampleVerdict]:
    """Through ``inspect_ai.log`` when it is installed and can tell the format by the file's
    name (it goes by the suffix), else ``plain``. When Inspect fails, the plain reader reads
    the file too, to name the damaged member or line if it finds one; Inspect's own error else."""
    log_api = _inspect_api() if path.suffix.lower() in (".eval", ".json") else None
    if log_api is None:
        return plain()
    try:
        header = log_api.read_eval_log(str(path), header_only=True).model_dump(mode="json", exclude={"samples"})
        samples = [s.model_dump(mode="json", include=_SAMPLE_FIELDS)
                   for s in log_api.read_eval_log_samples(str(path), all_samples_required=False)]
    except Exception as exc:  # Inspect's own errors are many; what a person needs is which file, and where
        plain()
        raise SpecError(f"Inspect AI cannot read this log: {type(exc).__name__}: {exc}", where=str(path)) from None
    return verdicts(header, samples, where=str(path))


def _inspect_api() -> Any:
    try:
        return importlib.import_module("inspect_ai.log")
    except ImportError:
        return None


def _plain_zip(path: Path) -> list[SampleVerdict]:
    with EvalZip(path) as log:
        header = log.document("header.json") or log.document("_journal/start.json")
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            raise SpecError("a zip without Inspect's header.json or _journal/start.json: not an .eval log",
                            where=str(path))
        return verdicts(header, log.samples(), where=str(path))


def _plain_json(path: Path, doc: dict[str, Any]) -> list[SampleVerdict]:
    samples = doc.get("samples")
    if samples is None:
        raise SpecError("the log holds no samples (written with --no-log-samples?): nothing to pair",
                        where=str(path))
    if not isinstance(samples, list):
        raise SpecError("`samples` must be a list", where=str(path))
    return verdicts(doc, samples, where=str(path))


def verdicts(header: dict[str, Any], samples: Iterable[Any], where: str) -> list[SampleVerdict]:
    """Map a log's header and samples to verdicts (see the module's docstring)."""
    spec = obj(header.get("eval"))
    config = obj(spec.get("config"))
    epochs = config.get("epochs")
    epochs = epochs if isinstance(epochs, int) else 1
    scorers = _scorers(header)
    out = []
    for i, sample in enumerate(samples):
        at = f"{where}: samples[{i}]"
        if not isinstance(sample, dict) or not isinstance(sample.get("id"), (str, int)) or isinstance(
                sample.get("id"), bool):
            raise SpecError("a sample must be an object with a text or integer `id`", where=at)
        task = str(sample["id"])
        epoch = sample.get("epoch", 1)
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
            raise SpecError(f"sample {task!r}: `epoch` must be a whole number from 1, got {epoch!r}", where=at)
        several = epochs > 1 or epoch > 1
        sample_id = attempt_id(task, epoch) if several else task
        verdict = judge_sample(sample_id, _results(sample, scorers, f"{at} ({task})"))
        verdict.cluster = task if several else None
        out.append(verdict)
    if not out and header.get("status") not in (None, "success"):
        raise SpecError(f"the log holds no samples (its run ended with status {header.get('status')!r})", where=where)
    return out


def _scorers(header: dict[str, Any]) -> dict[str, str]:
    """Score name -> scorer name, from the log's results (or its plan, for an unfinished run)."""
    results = obj(header.get("results"))
    out: dict[str, str] = {}
    for s in results.get("scores") or []:
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            out[s["name"]] = text(s.get("scorer")) or s["name"]
    return out


def _results(sample: dict[str, Any], scorers: dict[str, str], where: str) -> list[GraderResult]:
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict):
        raise SpecError("`scores` must be an object of scorer name to score", where=where)
    error = sample.get("error")
    if not scores and error:
        message = error.get("message") if isinstance(error, dict) else error
        names = scorers or {"sample": "sample"}
        return [errored(name, f"inspect:{scorer}", _kind(scorer), f"the sample errored: {message}")
                for name, scorer in names.items()]
    out: list[GraderResult] = []
    for name, score in scores.items():
        scorer = scorers.get(name) or str(name)
        if not isinstance(score, dict) or "value" not in score:
            raise SpecError(f"score {name!r} has no `value`", where=where)
        value = score["value"]
        explanation = score.get("explanation")
        details = {k: score[k] for k in ("value", "answer") if score.get(k) is not None}
        if isinstance(value, dict):
            out += [_one(f"{name}/{key}", scorer, part, explanation, {"value": part}) for key, part in value.items()]
        else:
            out.append(_one(name, scorer, value, explanation, details))
    return out


def _one(name: str, scorer: str, value: Any, explanation: Any, details: dict[str, Any]) -> GraderResult:
    kind, type_ = _kind(scorer), f"inspect:{scorer}"
    got = _float(value)
    if got is None or not 0.0 <= got <= 1.0:
        said = f"a number outside [0, 1] ({value!r})" if got is not None else f"{value!r}"
        return errored(name, type_, kind, f"Inspect score {said}: assay reads scores as fractions in [0, 1]",
                       ErrorCode.INVALID_OUTPUT)
    return graded(name, type_, kind, got >= 1.0, got, explanation, details=details)


def _float(value: Any) -> float | None:
    """Inspect's ``value_to_float``: letters, booleans, yes/no, numbers and numeric text."""
    if isinstance(value, bool):
        return float(value)
    got = number(value)
    if got is not None:
        return got
    if isinstance(value, str):
        text = value.strip()
        if text in _LETTERS:
            return _LETTERS[text]
        if text.lower() in _WORDS:
            return _WORDS[text.lower()]
        try:
            return number(float(text))
        except ValueError:
            return None
    return None


def _kind(scorer: str) -> Kind:
    return "llm" if scorer.rsplit("/", 1)[-1] in MODEL_GRADED else "code"
