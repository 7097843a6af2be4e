"""YAML documents that remember where each value was written, so errors can name the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import SpecError

_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


class YamlDoc:
    """A parsed YAML file plus its node tree for line lookups."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SpecError(f"file not found: {path}") from None
        except UnicodeDecodeError as exc:
            raise SpecError(f"not UTF-8 text: {exc}", where=str(path)) from None
        try:
            self.node = yaml.compose(text, Loader=yaml.SafeLoader)
            self.data: Any = yaml.safe_load(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{path}:{mark.line + 1}" if mark else str(path)
            raise SpecError(f"invalid YAML: {exc.problem or exc.context}", where=where) from None

    def line_of(self, field_path: str) -> int | None:
        """The 1-based line of the deepest node along ``graders[2].config.threshold``."""
        node = self.node
        if node is None:
            return None
        line = node.start_mark.line + 1
        for m in _PART.finditer(field_path):
            index, key = m.group(1), m.group(2)
            nxt = None
            if index is not None and isinstance(node, yaml.SequenceNode):
                i = int(index)
                nxt = node.value[i] if i < len(node.value) else None
            elif key is not None and isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if getattr(k, "value", None) == key:
                        nxt = v if not isinstance(v, yaml.ScalarNode) else k
                        break
            if nxt is None:
                break
            node = nxt
            line = node.start_mark.line + 1
        return line

    def where(self, field_path: str) -> str:
        line = self.line_of(field_path)
        return f"{self.path}:{line}" if line else str(self.path)

    def locate(self, exc: SpecError) -> SpecError:
        """The error with this file and the line of its field path."""
        return SpecError(exc.message, path=exc.path, where=exc.where or self.where(exc.focus))
