"""The five preset evaluators of the product specification, seeded as read-only rows.

Names and descriptions are the specification's list page (精确匹配 ... 相似度); each row's
config is the specification's ``{presetType, params}`` with the defaults a preset runs with
as it stands. Ids are fixed (UUID 5 of the preset type), so every database, SQLite or
PostgreSQL, old or new, gives a preset the same id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

_NAMESPACE = uuid.UUID("0d5c8f64-9a57-4bb2-9f43-3f1b6c1c2a90")


@dataclass(frozen=True, slots=True)
class Preset:
    preset_type: str
    name: str
    description: str
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, self.preset_type))

    @property
    def config(self) -> dict[str, Any]:
        return {"presetType": self.preset_type, "params": dict(self.params)}


PRESETS: tuple[Preset, ...] = (
    Preset("exact_match", "精确匹配", "输出与期望完全一致", {}),
    Preset("contains", "包含匹配", "输出包含期望内容", {}),
    # A preset must run as seeded: the default pattern asks for a non-blank output.
    Preset("regex", "正则匹配", "输出匹配正则表达式", {"pattern": "\\S", "flags": ""}),
    # The empty schema accepts any JSON value: as seeded, the preset checks that the output is JSON.
    Preset("json_schema", "JSON Schema", "输出符合 JSON Schema", {"schema": {}}),
    Preset("similarity", "相似度", "文本相似度超过阈值", {"threshold": 0.8, "algorithm": "levenshtein"}),
)
PRESET_TYPES: tuple[str, ...] = tuple(p.preset_type for p in PRESETS)
PRESET_IDS: frozenset[str] = frozenset(p.id for p in PRESETS)
