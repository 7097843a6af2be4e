"""Judge configs name their decision mode: ``scoring: parse`` filled in where it is absent.

``llm`` and ``llm_comparison`` gained ``scoring`` (``parse``, the JSON verdict they always
asked for, or ``logprobs``). A config stored before graded with ``parse``; it is stored so, as
the API stores a config now (validated, every default filled in), in the evaluators' rows and
their saved versions, composite children included, and in the runs' snapshots.

Frozen: the field and its default are written here as literal data (a migration never reads
today's code).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
RUBRIC_TYPES = ("llm", "llm_comparison")


def stored(grader_type: Any, config: Any) -> Any:
    """``config`` of a grader of ``grader_type`` with ``scoring`` filled in (composite children
    too); anything else as it is."""
    if not isinstance(config, dict):
        return config
    if grader_type in RUBRIC_TYPES and "scoring" not in config:
        return {**config, "scoring": "parse"}
    if grader_type == "composite" and isinstance(config.get("graders"), list):
        return {**config, "graders": [{**child, "config": stored(child.get("type"), child.get("config"))}
                                      if isinstance(child, dict) and isinstance(child.get("config"), dict) else child
                                      for child in config["graders"]]}
    return config


def upgrade() -> None:
    connection = op.get_bind()
    evaluators = sa.table("evaluators", sa.column("id", sa.String), sa.column("type", sa.String),
                          sa.column("config", Json))
    for row in connection.execute(sa.select(evaluators.c.id, evaluators.c.type, evaluators.c.config)).all():
        config = stored(row.type, row.config)
        if config != row.config:
            connection.execute(evaluators.update().where(evaluators.c.id == row.id).values(config=config))
    versions = sa.table("evaluator_versions", sa.column("evaluator_id", sa.String),
                        sa.column("number", sa.Integer), sa.column("type", sa.String), sa.column("config", Json))
    for version in connection.execute(sa.select(versions.c.evaluator_id, versions.c.number, versions.c.type,
                                                versions.c.config)).all():
        config = stored(version.type, version.config)
        if config != version.config:
            connection.execute(versions.update().where((versions.c.evaluator_id == version.evaluator_id)
                                                       & (versions.c.number == version.number)).values(config=config))
    runs = sa.table("runs", sa.column("id", sa.String), sa.column("evaluators", Json))
    for run_id, evaluators_of_run in connection.execute(sa.select(runs.c.id, runs.c.evaluators)).all():
        if not isinstance(evaluators_of_run, list):
            continue
        snapshot = [{**entry, "config": stored(entry.get("type"), entry.get("config"))} if isinstance(entry, dict)
                    else entry for entry in evaluators_of_run]
        if snapshot != evaluators_of_run:
            connection.execute(runs.update().where(runs.c.id == run_id).values(evaluators=snapshot))


def downgrade() -> None:
    """Nothing to undo: ``scoring: parse`` grades as its absence did."""
