"""YAML documents that remember where each value was written, so errors can name the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import SpecError, format_loc
from assay.runner.files import read_regular

_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def split_path(field_path: str) -> list[str | int]:
    """``graders[2].config.threshold`` → ``["graders", 2, "config", "threshold"]``."""
    return [int(m.group(1)) if m.group(1) is not None else m.group(2) for m in _PART.finditer(field_path)]


MAX_SUITE_BYTES = 16 * 1024 * 1024
"""Largest suite file read; bigger data belongs in a dataset file."""
MAX_NODES = 1_000_000
"""Most values a YAML document may hold once its aliases are expanded (an alias bomb of a
few hundred bytes otherwise expands into billions)."""
MAX_DEPTH = 100
"""Deepest nesting of lists and mappings in a YAML document."""


class YamlDoc:
    """A parsed YAML file plus its node tree, to find the line of any field.

    Fields are named by keys (``"graders", 2, "config"``) or by a field path
    (``"graders[2].config"``); both may be mixed. The file must be a regular file of at most
    ``MAX_SUITE_BYTES``; duplicate keys, nesting beyond ``MAX_DEPTH`` and documents that
    expand beyond ``MAX_NODES`` values are errors naming the line.
    """

    def __init__(self, path: Path, *, first_only: bool = False) -> None:
        self.path = path
        self.more_at: int | None = None
        """With ``first_only``: the line where a second document starts (it is not read)."""
        raw = read_regular(path, limit=MAX_SUITE_BYTES, what="suite file")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + 1
            raise SpecError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8",
                            where=f"{path}:{line}") from None
        try:
            loader = yaml.SafeLoader(text)
        except yaml.reader.ReaderError as exc:
            line = text[:exc.position].count("\n") + 1
            raise SpecError(f"invalid YAML: character {exc.character!r} is not allowed in YAML text",
                            where=f"{path}:{line}") from None
        try:
            self.node = (loader.get_node() if loader.check_node() else None) if first_only else loader.get_single_node()
            if first_only:
                self.more_at = _next_document(loader)
            if self.node is not None:
                _check_tree(self.node, path)
            self.data: Any = loader.construct_document(self.node) if self.node is not None else None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{path}:{mark.line + 1}" if mark else str(path)
            raise SpecError(f"invalid YAML: {exc.problem or exc.context}", where=where) from None
        except yaml.YAMLError as exc:
            raise SpecError(f"invalid YAML: {exc}", where=str(path)) from None
        except RecursionError:
            raise SpecError(f"YAML nested more than {MAX_DEPTH} levels deep", where=str(path)) from None
        finally:
            loader.dispose()

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

    def error(self, message: str, *keys: str | int, kind: type[SpecError] = SpecError) -> SpecError:
        """A SpecError (or ``kind`` of it) at ``keys``, with this file, the line and the field path."""
        return kind(message, path=format_loc(_flatten(keys)), where=self.where(*keys))

    def more_error(self) -> SpecError:
        """The error for a second document in a file that must hold one."""
        return SpecError("invalid YAML: a second document starts here; the file must hold one",
                         where=f"{self.path}:{self.more_at}")

    def locate(self, exc: SpecError) -> SpecError:
        """The error with this file and the line of its field path, unless it has a place."""
        return type(exc)(exc.message, path=exc.path, where=exc.where or self.where(exc.focus), focus=exc.focus)


def _next_document(loader: yaml.SafeLoader) -> int | None:
    """The line where the document after the one read starts, or None at the stream's end.
    Whatever follows is not parsed (as a reader of the first document only never looks at it)."""
    try:
        if loader.check_event(yaml.StreamEndEvent):
            return None
        return int(loader.peek_event().start_mark.line) + 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return mark.line + 1 if mark is not None else 0


def _check_tree(root: yaml.Node, path: Path) -> None:
    """Refuse duplicate keys, deep nesting, recursive aliases and alias bombs, before any value
    is built. Sizes are memoised per node, so shared (aliased) nodes are counted as often as
    they would be expanded, at the cost of one visit each."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise SpecError("an alias refers to a value that contains it (recursive alias)",
                            where=f"{path}:{node.start_mark.line + 1}")
        if depth > MAX_DEPTH:
            raise SpecError(f"YAML nested more than {MAX_DEPTH} levels deep",
                            where=f"{path}:{node.start_mark.line + 1}")
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            open_nodes.add(key)
            if isinstance(node, yaml.MappingNode):
                _no_duplicate_keys(node, path)
                children = [n for pair in node.value for n in pair]
            else:
                children = node.value
            for child in children:
                total += size(child, depth + 1)
                if total > MAX_NODES:
                    raise SpecError(f"YAML expands to more than {MAX_NODES:,} values (aliases included)",
                                    where=f"{path}:{node.start_mark.line + 1}")
            open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root, 0)


def _no_duplicate_keys(node: yaml.MappingNode, path: Path) -> None:
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line = key.start_mark.line + 1
        if key.value in seen:
            raise SpecError(f"duplicate key {key.value!r} (first on line {seen[key.value]})", where=f"{path}:{line}")
        seen[key.value] = line


def _flatten(keys: tuple[str | int, ...]) -> list[str | int]:
    out: list[str | int] = []
    for key in keys:
        out.extend(split_path(key) if isinstance(key, str) and ("." in key or "[" in key) else [key])
    return out
