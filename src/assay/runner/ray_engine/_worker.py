"""The Ray worker: grades one block of samples at a time, as the local engine grades a chunk.

One ``GradingActor`` lives in each worker process (a Ray Data actor) for the whole run: its
resources (the warm sandbox pool; the run's one judge actor, ``_judge``) are built once, on
first use, and serve every batch it is given. A batch comes back as one row: its results lines,
exactly as ``JsonlSink`` writes them (for the service, with each result's reason code and
arguments: ``codes``), and a partial summary the driver folds into the total. The service may
name the graders a batch is graded by (``only``: an evaluator paused in its run is left out).
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.core.grader import Grader
from assay.core.interfaces import CodeRunner, Resources
from assay.core.result import Status
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec
from assay.runner.dataset import BadJson, csv_metadata, parse_json, samples_from_rows
from assay.runner.local_engine.run import run_suite
from assay.runner.ray_engine._judge import ActorJudgeClient
from assay.runner.ray_engine._source import SuiteRef
from assay.runner.ray_engine._specs import SpecsRef
from assay.runner.ray_engine._summary import PartialSummary
from assay.runner.resources import build_context, build_resources
from assay.runner.results import grader_fingerprints, verdict_line
from assay.settings import Settings

PROBLEMS_KEPT = 20
"""Non-passing verdicts a batch sends back whole, for the CLI's list of problems."""


class GradingActor:
    """A Ray Data callable class: ``__call__`` grades a pyarrow batch, returns one row."""

    # Class-level defaults: ``__del__`` (and ``close``) may run on an instance whose ``__init__``
    # never ran or stopped half-way (Ray collecting a failed or never-started actor).
    _pool: ThreadPoolExecutor | None = None
    _resources: Resources | None = None

    def __init__(self, suite: SuiteRef | SpecsRef, settings: Settings, *, fingerprint: str | None,
                 done: Any = None, concurrency: int = 8, judge_cache_reads: bool = True, judge: Any = None,
                 codes: bool = False, wrap_code: Callable[[CodeRunner], CodeRunner] | None = None) -> None:
        self._settings = settings
        self._codes = codes
        self._wrap_code = wrap_code  # the service's cap on a user's code in flight (``service.ray_permits``)
        self._judge = judge  # the run's JudgeActor, when the suite has LLM graders
        self._fingerprint = fingerprint
        self._done: frozenset[str] = _resolve(done) or frozenset()
        self._concurrency = concurrency
        self._judge_cache_reads = judge_cache_reads
        self._resources = None
        self._graders: dict[int, Grader] = {}
        self._pool = None
        # Compiled under this worker's own sandbox (Node code is checked by the runner that runs it).
        self._suite, self._source = suite.open(build_context(settings, self._get_resources()))
        from assay.runner.columnar import takes

        self._columnar = takes(self._suite)
        self._configs = grader_fingerprints(self._suite) if fingerprint is not None else None

    def __call__(self, batch: Any, only: frozenset[str] | None = None) -> dict[str, list[Any]]:
        """``batch`` graded by the suite's graders, or only by those named in ``only``."""
        samples = [s for s in self._samples(batch) if s.id not in self._done]
        verdicts = self._grade(samples, only) if samples else []
        lines = b"".join(verdict_line(v, self._fingerprint, self._codes, self._configs) for v in verdicts)
        part = PartialSummary.of(verdicts)
        problems = [v for v in verdicts if v.status is not Status.PASSED][:PROBLEMS_KEPT]
        return {"lines": [lines], "summary": [pickle.dumps(part)], "problems": [pickle.dumps(problems)],
                "count": [len(verdicts)], "ids": [[v.id for v in verdicts]]}

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Stop the sandbox pool and the judge client, if they were started."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._resources is not None:
            for part in (self._resources.code_runner, self._resources.judge_client):
                close = getattr(part, "close", None)
                if close is not None:
                    close()
            self._resources = None

    def _grade(self, samples: list[Sample], only: frozenset[str] | None) -> list[SampleVerdict]:
        resources = self._get_resources()
        sub = dataclasses.replace(self._suite, samples=samples)
        columnar = self._columnar
        if only is not None:
            from assay.runner.columnar import takes

            sub = dataclasses.replace(sub, graders=[spec for spec in sub.graders if spec.name in only])
            columnar = takes(sub)
        if not columnar:
            return run_suite(sub, resources=resources, concurrency=self._concurrency, chunk_size=len(samples),
                             columnar=False).verdicts
        from assay.runner.columnar.run import grade_chunk

        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=max(1, self._concurrency), thread_name_prefix="assay-ray")
        return grade_chunk(sub, samples, self._grader_for, self._pool)

    def _grader_for(self, spec: CompiledSpec) -> Grader:
        g = self._graders.get(id(spec))
        if g is None:
            g = self._graders[id(spec)] = spec.build(self._get_resources())
        return g

    def _get_resources(self) -> Resources:
        if self._resources is None:
            resources = build_resources(self._settings, judge_cache_reads=self._judge_cache_reads)
            if self._judge is not None:
                resources.judge_client = ActorJudgeClient(self._judge)
            if self._wrap_code is not None and resources.code_runner is not None:
                resources.code_runner = self._wrap_code(resources.code_runner)
            self._resources = resources
        return self._resources

    def _samples(self, batch: Any) -> list[Sample]:
        """The batch's rows as samples, read by assay's rules for the source's format."""
        kind, where = self._source.kind, self._source.where
        if kind == "memory":
            return [self._suite.samples[i] for i in batch.column("id").to_pylist()]
        if kind == "jsonl":
            rows = [_json_row(text, where) for text in batch.column("text").to_pylist() if not text.isspace()]
        else:
            rows = batch.to_pylist()
            if kind == "csv":
                for row in rows:
                    if "metadata" in row:
                        row["metadata"] = csv_metadata(row["metadata"] or "", _row_where(where, row))
        for row in rows:
            if not isinstance(row, dict) or row.get("id") in (None, ""):
                raise SpecError("every row needs an `id` to be graded with --engine ray (a row without one: "
                                f"{str(row)[:120]}); add ids, or use the local engine", where=where)
        try:
            return samples_from_rows(((0, row) for row in rows), source=where, clean=kind == "parquet")
        except SpecError as exc:
            raise SpecError(exc.message.replace(" (first on line 0)", ""), path=exc.path,
                            where=where) from None


def _json_row(text: str, where: str) -> Any:
    try:
        return parse_json(text.encode("utf-8"))
    except BadJson as exc:
        raise SpecError(f"{exc} (in the line {text[:80]!r})", where=where) from None
    except UnicodeEncodeError as exc:
        raise SpecError(f"text that is not UTF-8: {exc}", where=where) from None


def _row_where(where: str, row: dict[str, Any]) -> str:
    return f"{where} (sample {row.get('id')!r})"


def _resolve(value: Any) -> Any:
    """A value passed by reference (``ray.put``) fetched, so a large ``done`` set is stored once."""
    if value is None:
        return None
    import ray

    return ray.get(value) if isinstance(value, ray.ObjectRef) else value
