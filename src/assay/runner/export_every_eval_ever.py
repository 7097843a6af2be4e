"""A run's summary in the Every Eval Ever shape (the ``every-eval-ever`` package's
``eval.schema.json``, schema version 0.3.0): one evaluation record whose
``evaluation_results`` are, for the samples' verdicts and for each grader, the pass rate and
the mean score, and with repeated tasks pass@k, pass^k and self-agreement, each score with its
95% interval, how it was taken and on how many units.

Every Eval Ever describes a model's results; assay grades outputs and does not know which model
wrote them, so ``model_info`` says ``unknown`` unless the caller names the model. Errors and
pending results are out of every figure, as in assay's own summary, and counted in each
result's ``details`` (the schema's values there are strings).
"""

from __future__ import annotations

import datetime
from importlib.metadata import version
from typing import Any

from assay.core.intervals import Intervals
from assay.core.summary import GraderSummary, SuiteSummary

SCHEMA_VERSION = "0.3.0"
UNKNOWN_MODEL = {"name": "unknown", "id": "unknown/unknown",
                 "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"}}


def export_every_eval_ever(suite_name: str, summary: SuiteSummary, *, dataset: str | None = None,
                           model: dict[str, Any] | None = None, now: datetime.datetime | None = None) -> dict[str, Any]:
    """The Every Eval Ever record of a run of suite ``suite_name`` summarised as ``summary``;
    ``dataset`` names the dataset graded (default: the suite), ``model`` the schema's
    ``model_info`` (default: unknown), ``now`` when the record was made (default: now, UTC)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    source = {"dataset_name": dataset or suite_name, "source_type": "other",
              "additional_details": {"samples": str(summary.total)}}
    results = _figures("samples", None, summary.intervals, summary.passed, summary.failed, summary.pass_rate,
                       summary.mean_score, summary.errors, summary.pending, source)
    for g in summary.graders:
        results += _figures(g.name, g, g.intervals, g.passed, g.failed, g.pass_rate, g.mean_score, g.errors,
                            g.pending, source)
    stamp = str(int(now.timestamp()))
    model_info = model or UNKNOWN_MODEL
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{suite_name}/{model_info['id']}/{stamp}",
        "evaluation_timestamp": now.isoformat(),
        "retrieved_timestamp": stamp,
        "source_metadata": {"source_name": suite_name, "source_type": "evaluation_run",
                            "source_organization_name": "unknown", "evaluator_relationship": "other"},
        "model_info": model_info,
        "eval_library": {"name": "assay", "version": version("assay")},
        "evaluation_results": results,
    }


def _figures(name: str, grader: GraderSummary | None, intervals: Intervals, passed: int, failed: int,
             pass_rate: float | None, mean_score: float | None, errors: int, pending: int,
             source: dict[str, Any]) -> list[dict[str, Any]]:
    """The figures of one grader (``grader``) or of the samples' verdicts (None): each a result."""
    what = f"grader {name!r} ({grader.type})" if grader is not None else "the samples' verdicts"
    details = {"passed": str(passed), "failed": str(failed), "errors": str(errors), "pending": str(pending),
               "left_out": str(errors + pending)}
    clustered = intervals.clusters is not None
    units, unit = (intervals.clusters or 0, "tasks") if clustered else (passed + failed, "samples")
    by = ", clustered by task" if clustered else ""
    out = []
    if pass_rate is not None:
        out.append(_result(name, "pass_rate", "pass rate", f"Share of passed among decided results of {what}",
                           pass_rate, intervals.pass_rate, "wilson-type" + by if clustered else "wilson",
                           units, details, source))
    if mean_score is not None:
        out.append(_result(name, "mean_score", "mean score", f"Mean score of the decided, scored results of {what}",
                           mean_score, intervals.mean_score, "wilson-type" + by, units, details, source))
    again = intervals.repeats
    if again is not None:
        params = {"k": again.k}
        short = {**details, "tasks_short_of_k": str(again.short), "units": unit}
        if again.pass_at_k is not None:
            out.append(_result(name, "pass_at_k", f"pass@{again.k}", f"Chance one of k attempts passed, per task "
                               f"(Chen et al. 2021), for {what}", again.pass_at_k, again.pass_at_k_ci,
                               "wilson-type over tasks", again.tasks, short, source, params))
        if again.pass_hat_k is not None:
            out.append(_result(name, "pass_hat_k", f"pass^{again.k}", f"Chance all k attempts passed, per task, for "
                               f"{what}", again.pass_hat_k, again.pass_hat_k_ci, "wilson-type over tasks",
                               again.tasks, short, source, params))
        out.append(_result(name, "self_agreement", "self-agreement", f"Share of pairs of a task's attempts that "
                           f"agree, for {what}", again.consistency, again.consistency_ci, "wilson-type over tasks",
                           again.agreement_tasks, details, source))
    return out


def _result(name: str, metric: str, label: str, description: str, score: float, interval: tuple[float, float] | None,
            method: str, units: int, details: dict[str, str], source: dict[str, Any],
            params: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"evaluation_description": description, "metric_id": metric, "metric_name": label,
                              "metric_kind": metric, "metric_unit": "proportion", "lower_is_better": False,
                              "score_type": "continuous", "min_score": 0, "max_score": 1}
    if params:
        config["metric_parameters"] = params
    uncertainty: dict[str, Any] = {"num_samples": units}
    if interval is not None:
        uncertainty["confidence_interval"] = {"lower": interval[0], "upper": interval[1], "confidence_level": 0.95,
                                              "method": method}
    return {"evaluation_result_id": f"{name}.{metric}", "evaluation_name": name, "source_data": source,
            "metric_config": config, "score_details": {"score": score, "details": details, "uncertainty": uncertainty}}
