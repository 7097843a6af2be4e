"""Evaluator configs stored as validated: every field, its default filled in, its type coerced.

Until now a row held the config as the request spelled it: ``{"threshold": "0.9"}`` graded as
0.9 but was stored as text, and an omitted field was not stored, so a row (and a run's snapshot
of it) did not say which default it graded with. From this revision on the API stores the
validated config dumped with every default; here the rows written before are rewritten the same
way, and so are the configs in the runs' snapshots (they graded with these very defaults).

Frozen: the defaults and field types below are those of the graders at this revision, copied as
literal data (a migration never reads today's code). What this copy does not know is left as it
is: a grader type without a table here (those that run programs: ``program``, ``script``, ...)
and a value that does not coerce (the row grades, or fails to, as before; saving it through the
API stores it complete). Downgrading keeps the complete configs: they grade as before.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

# Each grader's fields at this revision: name -> (kind, default); kind says how pydantic's lax
# mode read a value given as another type ("float": "0.9" -> 0.9; "any": as given). REQUIRED
# fields have no default and are left out when absent (the row was invalid without them anyway).
REQUIRED = object()
_JUDGE = {"model": ("any", None), "base_url": ("any", None), "api_key_env": ("any", None),
          "temperature": ("float", 0.0), "max_tokens": ("int", None), "seed": ("int", None),
          "timeout_s": ("float", 60.0), "on_injection": ("any", "flag")}
_RUBRIC = {**_JUDGE, "rubric": ("any", None), "rubric_file": ("any", None), "scale": ("any", "1-5"),
           "threshold": ("float", 0.75)}
FIELDS: dict[str, dict[str, tuple[str, Any]]] = {
    "exact_match": {"trim": ("bool", False), "ignore_case": ("bool", False)},
    "contains": {"ignore_case": ("bool", False)},
    "regex": {"flags": ("any", ""), "timeout_ms": ("int", 100), "pattern": ("any", None), "must_match": ("any", []),
              "must_not_match": ("any", [])},
    "json_schema": {"schema": ("any", REQUIRED)},
    "similarity": {"threshold": ("float", 0.8), "algorithm": ("any", "levenshtein"), "ignore_case": ("bool", False),
                   "normalize": ("any", "NFC"), "max_length": ("int", 100_000)},
    "code": {"language": ("any", "python"), "code": ("any", None), "timeout": ("any", 5000),
             "assertions": ("any", None), "edition": ("any", None)},
    "llm": _RUBRIC,
    "llm_comparison": {**_RUBRIC, "reference": ("any", None)},
    "pairwise": {**_JUDGE, "prompt": ("any", None), "baseline_field": ("any", None), "threshold": ("float", 0.5),
                 "flip_passes": ("bool", False)},
    "prompt": {**_JUDGE, "prompt": ("any", None), "scoring": ("any", "1-5"), "threshold": ("float", None),
               "continue_session": ("bool", False)},
    "panel": {**_JUDGE, "judges": ("any", None), "models": ("any", None), "prompt": ("any", None),
              "scoring": ("any", "1-5"), "threshold": ("float", 0.5), "aggregation": ("any", "mean"),
              "min_judges": ("int", None)},
    "composite": {"graders": ("any", REQUIRED), "rule": ("any", "all"), "threshold": ("float", 0.5)},
}
PRESET_TYPES = ("exact_match", "contains", "regex", "json_schema", "similarity")
CODE_TIMEOUT_MS = 5000
_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off"}


class _Keep(Exception):
    """A value that does not coerce: the config is left as it was."""


def _coerced(kind: str, value: Any) -> Any:
    if value is None or kind == "any":
        return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise _Keep
    if isinstance(value, bool):
        raise _Keep
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise _Keep from None
    if kind == "float":
        return number
    if number != int(number):
        raise _Keep
    return int(number)


def _complete(grader_type: Any, config: Any) -> Any:
    """A grader's config with every field and its default, values coerced as validation did
    (composite children too); raises _Keep when this revision cannot tell."""
    fields = FIELDS.get(grader_type) if isinstance(grader_type, str) else None
    if fields is None or not isinstance(config, dict) or set(config) - set(fields):
        raise _Keep
    out: dict[str, Any] = {}
    for name, (kind, default) in fields.items():
        if name in config:
            out[name] = _coerced(kind, config[name])
        elif default is not REQUIRED:
            out[name] = list(default) if isinstance(default, list) else default
    if grader_type == "composite":
        if not isinstance(out.get("graders"), list):
            raise _Keep
        out["graders"] = [_child(child) for child in out["graders"]]
    return out


def _child(spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise _Keep
    weight = spec.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise _Keep
    return {"type": spec["type"], "name": spec.get("name") or spec["type"],
            "config": _complete(spec["type"], spec.get("config") or {}), "weight": float(weight)}


def stored(evaluator_type: Any, config: Any) -> Any:
    """A row's config (the specification's shape for its evaluator type) as the API now stores
    it, or the config unchanged when this revision cannot tell."""
    try:
        if evaluator_type == "preset":
            if not isinstance(config, dict) or set(config) - {"presetType", "params"} \
                    or config.get("presetType") not in PRESET_TYPES:
                raise _Keep
            return {"presetType": config["presetType"],
                    "params": _complete(config["presetType"], config.get("params") or {})}
        if evaluator_type == "code":
            if not isinstance(config, dict):
                raise _Keep
            return {"language": config.get("language", "python"), "code": config.get("code"),
                    "timeout": config.get("timeout", CODE_TIMEOUT_MS)}
        if evaluator_type in ("llm", "composite"):
            return _complete(evaluator_type, config)
    except _Keep:
        pass
    return config


def upgrade() -> None:
    connection = op.get_bind()
    evaluators = sa.table("evaluators", sa.column("id", sa.String), sa.column("type", sa.String),
                          sa.column("config", Json))
    for row in connection.execute(sa.select(evaluators.c.id, evaluators.c.type, evaluators.c.config)).all():
        config = stored(row.type, row.config)
        if config != row.config:
            connection.execute(evaluators.update().where(evaluators.c.id == row.id).values(config=config))
    runs = sa.table("runs", sa.column("id", sa.String), sa.column("evaluators", Json))
    for run_id, evaluators_of_run in connection.execute(sa.select(runs.c.id, runs.c.evaluators)).all():
        if not isinstance(evaluators_of_run, list):
            continue
        snapshot = [{**entry, "config": stored(entry.get("type"), entry.get("config"))} if isinstance(entry, dict)
                    else entry for entry in evaluators_of_run]
        if snapshot != evaluators_of_run:
            connection.execute(runs.update().where(runs.c.id == run_id).values(evaluators=snapshot))


def downgrade() -> None:
    """Nothing to undo: a complete config grades as the partial one did."""
