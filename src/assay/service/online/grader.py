"""Grading online rules' jobs: a server's run slots lease online slices from the run queue
(batches of one user's due jobs, users served in turn with the task runs' slices:
``store.queue``, ``store.online_queue``) and hand them here. A slice's spans are read, made
into samples (``mapping``) and graded with the rules' evaluators through the service's
``Grading``: the same compiled-grader cache, sandbox pool shared fairly between users (each job
graded acting for its rule's owner), judge client and judge cache as the runs and ``/test``.

A result is stored "ignore if present" per (rule, target, generation, evaluator, evaluator
version), so a job graded twice (its server died after grading, before marking it done, and the
slice's lease passed) stores each verdict once. A target without content gets ``not_applicable``
results; a judge evaluator past its rule's daily budget gets ``skipped`` results (code ``budget``),
neither counted in pass rates.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.sample import Sample
from assay.service.fairness import acting_for
from assay.service.grading import Grading
from assay.service.online.export import ResultExporter
from assay.service.online.mapping import group_sample, span_sample
from assay.settings import Settings
from assay.store import online as rows
from assay.store import online_queue
from assay.store.db import Database
from assay.store.models import Evaluator, utcnow
from assay.store.online_models import OnlineJob, OnlineRule, OnlineSpan, Scope
from assay.store.queue import OnlineClaim

NOT_APPLICABLE = "not_applicable"
SKIPPED = "skipped"
NO_CONTENT = ("no content to grade: the span carries no messages (turn content capture on: "
              "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, docs/guides/online.md)")


def evaluator_version(evaluator: Evaluator) -> str:
    """The evaluator's version: a hash of what grades (its type and stored config)."""
    text = json.dumps([evaluator.type, evaluator.config], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(slots=True)
class Target:
    """What one job grades: the sample (None without content) and the span results are filed under."""

    sample: Sample | None
    span: OnlineSpan | None


class OnlineGrader:
    """Grades the online slices this server's run slots lease (``service.worker``)."""

    def __init__(self, database: Database, grading: Grading, settings: Settings,
                 exporter: ResultExporter | None = None) -> None:
        self.database = database
        self.grading = grading
        self.max_spans = settings.online_max_group_spans
        self.exporter = exporter
        """Sends each verdict as a ``gen_ai.evaluation.result`` event (``ASSAY_OTLP_EXPORT_URL``), when set."""

    def grade(self, claim: OnlineClaim, stopped: Callable[[], bool], pool: Executor | None = None) -> bool:
        """Grade the slice's jobs and commit their results with the jobs and the slice marked
        done; False (nothing stored) when ``stopped`` says so first (the server stops: its
        sandbox was killed mid-way; or the lease was lost). The jobs are read in one
        transaction (their rules, evaluators, spans), graded (on ``pool`` at once when an
        evaluator waits on I/O: a sandbox, a program, a judge), and written in another."""
        with self.database.session() as session:
            jobs = online_queue.jobs_of(session, claim.id)
            rules = {r.id: r for r in session.scalars(select(OnlineRule).where(  # deleted or disabled: left out
                OnlineRule.id.in_({job.rule_id for job in jobs}), OnlineRule.enabled.is_(True)))} if jobs else {}
            wanted = {link["evaluatorId"] for rule in rules.values() for link in rule.evaluators}
            evaluators = {e.id: e for e in session.scalars(select(Evaluator).where(Evaluator.id.in_(wanted)))}
            spent = {rule.id: rows.judge_calls_since(session, rule.id, rows.start_of_day())
                     for rule in rules.values() if rule.judge_budget_per_day is not None}
            targets = self._targets(session, jobs)
        lock = threading.Lock()

        def one(job: OnlineJob) -> list[dict[str, Any]] | None:
            if stopped():
                return None
            rule = rules.get(job.rule_id)  # None: deleted or disabled since the job was made, nothing to store
            return self._grade(job, rule, evaluators, targets[job.id], spent, lock) if rule is not None else []

        waits = pool is not None and len(jobs) > 1 and any(
            traits.io_bound or traits.judge for traits in (self.grading.grader(e).traits for e in evaluators.values()))
        graded = list(pool.map(one, jobs)) if waits and pool is not None else [one(job) for job in jobs]
        if stopped() or any(rows_of_job is None for rows_of_job in graded):
            return False
        results = [row for rows_of_job in graded for row in rows_of_job or ()]
        with self.database.session() as session:
            live = rows.enabled_rule_ids(session, {row["rule_id"] for row in results})
            results = [row for row in results if row["rule_id"] in live]  # switched off while graded
            rows.insert_results(session, results)
            online_queue.finish(session, claim.id, [job.id for job in jobs])
        if self.exporter is not None and results:
            response_ids = {t.span.span_id: str(t.span.attributes["gen_ai.response.id"]) for t in targets.values()
                            if t.span is not None and t.span.attributes.get("gen_ai.response.id")}
            self.exporter.offer(results, response_ids)
        return True

    def _grade(self, job: OnlineJob, rule: OnlineRule, evaluators: dict[str, Evaluator], target: Target,
               spent: dict[str, int], lock: threading.Lock) -> list[dict[str, Any]]:
        """The result rows of one job: one per evaluator of its rule. A judge grading is counted
        in ``spent`` (under ``lock``: jobs may be graded at once) before it is made."""
        results: list[dict[str, Any]] = []
        budget = rule.judge_budget_per_day
        for link in rule.evaluators:
            evaluator = evaluators.get(link["evaluatorId"])
            if evaluator is None or target.span is None:
                continue
            base = {"rule_id": job.rule_id, "target": job.target, "generation": job.generation,
                    "trace_id": target.span.trace_id, "span_id": target.span.span_id, "evaluator_id": evaluator.id,
                    "evaluator_version": evaluator_version(evaluator), "evaluator_name": evaluator.name,
                    "weight": float(link.get("weight", 1.0)), "at": _at(target.span), "graded_at": utcnow(),
                    "details": {}, "latency_ms": 0.0, "passed": False, "score": None, "error_code": None}
            grader = self.grading.grader(evaluator)
            kind = "llm" if grader.traits.judge else grader.kind
            if target.sample is None:
                results.append(base | {"kind": kind, "status": NOT_APPLICABLE, "reason": NO_CONTENT})
                continue
            if grader.traits.judge and budget is not None:
                with lock:
                    over = spent.get(rule.id, 0) >= budget
                    spent[rule.id] = spent.get(rule.id, 0) + (0 if over else 1)
                if over:
                    results.append(base | {"kind": kind, "status": SKIPPED, "error_code": "budget",
                                           "reason": f"the rule's daily budget of {budget} judge calls is used up"})
                    continue
            with acting_for(job.user_id):
                result = self.grading.grade(grader, target.sample)
            results.append(base | {"kind": kind, "status": str(result.status.value), "passed": bool(result.passed),
                                   "score": result.score, "reason": result.reason, "details": result.details or {},
                                   "error_code": result.error.value if result.error else None,
                                   "latency_ms": float(result.latency_ms or 0.0)})
        return results

    def _targets(self, session: Session, jobs: list[OnlineJob]) -> dict[int, Target]:
        """What each job grades: span jobs' spans read together, a trace's or a conversation's each."""
        out: dict[int, Target] = {}
        wanted = [(job, *job.target.partition(":")[::2]) for job in jobs if job.scope == Scope.SPAN]
        found = rows.spans_by_ids(session, [(job.user_id, trace, span) for job, trace, span in wanted])
        for job, trace, span_id in wanted:
            span = found.get((job.user_id, trace, span_id))
            out[job.id] = Target(span_sample(span) if span is not None else None, span)
        for job in jobs:
            if job.scope == Scope.SPAN:
                continue
            if job.scope == Scope.TRACE:
                spans = rows.trace_spans(session, job.user_id, job.target, self.max_spans)
            else:
                spans = rows.conversation_spans(session, job.user_id, job.target, self.max_spans)
            root = next((s for s in spans if s.parent_span_id is None), spans[0]) if spans else None
            out[job.id] = Target(group_sample(job.target, spans) if spans else None, root)
        return out


def _at(span: OnlineSpan) -> datetime:
    return datetime.fromtimestamp(span.start_ns / 1e9, UTC)
