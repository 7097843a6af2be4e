"""YAML documents that remember where each value was written, so errors can name the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import SpecError, format_loc

_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def split_path(field_path: str) -> list[str | int]:
    """``graders[2].config.threshold`` → ``["graders", 2, "config", "threshold"]``."""
    return [int(m.group(1)) if m.group(1) is not None else m.group(2) for m in _PART.finditer(field_path)]


class YamlDoc:
    """A parsed YAML file plus its node tree, to find the line of any field.

    Fields are named by keys (``"graders", 2, "config"``) or by a field path
    (``"graders[2].config"``); both may be mixed.
    """

    def __init__(self, path: Path, data: Any = None) -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SpecError(f"file not found: {path}") from None
        except UnicodeDecodeError as exc:
            raise SpecError(f"not UTF-8 text: {exc}", where=str(path)) from None
        except OSError as exc:
            raise SpecError(f"cannot read {path}: {exc.strerror}") from None
        try:
            self.node = yaml.compose(text, Loader=yaml.SafeLoader)
            self.data: Any = yaml.safe_load(text) if data is None else data
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{path}:{mark.line + 1}" if mark else str(path)
            raise SpecError(f"invalid YAML: {exc.problem or exc.context}", where=where) from None
        except yaml.YAMLError as exc:
            raise SpecError(f"invalid YAML: {exc}", where=str(path)) from None

    def line(self, *keys: str | int) -> int | None:
        """The 1-based line of the deepest existing node along ``keys``."""
        node = self.node
        if node is None:
            return None
        line = node.start_mark.line + 1
        for key in _flatten(keys):
            nxt = None
            if isinstance(node, yaml.SequenceNode) and isinstance(key, int):
                nxt = node.value[key] if key < len(node.value) else None
            elif isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if getattr(k, "value", None) == str(key):
                        nxt = v
                        break
            if nxt is None:
                break
            node = nxt
            line = node.start_mark.line + 1
        return line

    def where(self, *keys: str | int) -> str:
        line = self.line(*keys)
        return f"{self.path}:{line}" if line else str(self.path)

    def error(self, message: str, *keys: str | int) -> SpecError:
        """A SpecError at ``keys``, with this file, the line and the field path."""
        return SpecError(message, path=format_loc(_flatten(keys)), where=self.where(*keys))

    def locate(self, exc: SpecError) -> SpecError:
        """The error with this file and the line of its field path, unless it has a place."""
        return SpecError(exc.message, path=exc.path, where=exc.where or self.where(exc.focus), focus=exc.focus)


def _flatten(keys: tuple[str | int, ...]) -> list[str | int]:
    out: list[str | int] = []
    for key in keys:
        out.extend(split_path(key) if isinstance(key, str) and ("." in key or "[" in key) else [key])
    return out
