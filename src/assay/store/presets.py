"""The five preset evaluators of the product specification, seeded as read-only rows.

Names and descriptions are the specification's list page (精确匹配 ... 相似度); each row's
config is the specification's ``{presetType, params}``, the params validated by the preset's
grader and stored with every default filled in (``Preset.config``). Ids are fixed (UUID 5 of
the preset type), so every database, SQLite or PostgreSQL, old or new, gives a preset the
same id.

This module is the one place the presets are written. Migrations never read it (they hold
schema only): ``seed_presets`` brings the rows to this list at every start, idempotently, so
an upgraded database and a fresh one hold the same presets.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, select, update
from sqlalchemy.dialects import postgresql, sqlite

from assay.core import registry
from assay.store.models import Evaluator

_NAMESPACE = uuid.UUID("0d5c8f64-9a57-4bb2-9f43-3f1b6c1c2a90")


class PresetType(StrEnum):
    """The preset rules: a stored preset's ``presetType``, each the grader type it runs."""

    EXACT_MATCH = "exact_match"
    CONTAINS = "contains"
    REGEX = "regex"
    JSON_SCHEMA = "json_schema"
    SIMILARITY = "similarity"


@dataclass(frozen=True, slots=True)
class Preset:
    preset_type: PresetType
    name: str
    description: str
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, self.preset_type))

    @property
    def config(self) -> dict[str, Any]:
        """The row's config: ``params`` validated by the preset's grader and dumped with every
        default filled in, as an evaluator created over the API is stored."""
        grader = registry.get(self.preset_type.value)
        if grader is None:  # a preset type is always a built-in grader
            raise LookupError(f"preset {self.preset_type.value!r} has no grader")
        return {"presetType": self.preset_type.value, "params": grader.parse_config(self.params).dump()}


PRESETS: tuple[Preset, ...] = (
    Preset(PresetType.EXACT_MATCH, "精确匹配", "输出与期望完全一致", {}),
    Preset(PresetType.CONTAINS, "包含匹配", "输出包含期望内容", {}),
    # A preset must run as seeded: the default pattern asks for a non-blank output.
    Preset(PresetType.REGEX, "正则匹配", "输出匹配正则表达式", {"pattern": "\\S", "flags": ""}),
    # The empty schema accepts any JSON value: as seeded, the preset checks that the output is JSON.
    Preset(PresetType.JSON_SCHEMA, "JSON Schema", "输出符合 JSON Schema", {"schema": {}}),
    Preset(PresetType.SIMILARITY, "相似度", "文本相似度超过阈值", {"threshold": 0.8, "algorithm": "levenshtein"}),
)
PRESET_TYPES: tuple[str, ...] = tuple(p.preset_type.value for p in PRESETS)
PRESET_IDS: frozenset[str] = frozenset(p.id for p in PRESETS)


def seed_presets(connection: Connection) -> int:
    """Make the preset rows match ``PRESETS``: add the missing ones, bring changed ones up to
    date (a preset is read-only, so its row is always this list's), leave every other row
    alone. Safe to run at every start and from several servers at once. Returns the number
    of rows added or changed."""
    table = Evaluator.__table__
    stored = {row.id: row for row in connection.execute(
        select(table.c.id, table.c.name, table.c.description, table.c.config)
        .where(table.c.id.in_([p.id for p in PRESETS])))}
    now = datetime.now(UTC)
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    changed = 0
    for i, preset in enumerate(PRESETS):
        row = stored.get(preset.id)
        values = {"name": preset.name, "description": preset.description, "config": preset.config}
        if row is None:
            # One microsecond apart, so that listing by creation time keeps the specification's order.
            at = now + timedelta(microseconds=i)
            result = connection.execute(insert(Evaluator).values(
                id=preset.id, type="preset", is_preset=True, created_by_id=None, created_at=at, updated_at=at,
                **values).on_conflict_do_nothing(index_elements=["id"]))
            changed += result.rowcount or 0
        elif (row.name, row.description, row.config) != (preset.name, preset.description, preset.config):
            connection.execute(update(Evaluator).where(Evaluator.id == preset.id).values(updated_at=now, **values))
            changed += 1
    return changed
