"""The ``tool_constraint`` grader waza adds for a custom agent (an ``.agent.md`` file) that
declares its ``tools:`` (from 0.31, CHANGELOG 0.31.0 #226; ``internal/orchestration/
agent_graders.go`` ``augmentGradersFromAgent`` at a3f8e060; ``site/.../guides/custom-agents.mdx``).

When the eval defines no ``tool_constraint`` grader of its own, waza reads the first
``.agent.md`` file (by name) of the directories it searches for skills and, if its front matter
has a ``tools:`` key, grades every task with ``agent_tools_implicit``: ``allow_only`` with one
exact-name entry per declared tool (``tools: []`` denies every tool; no ``tools:`` key, no
grader). assay searches the eval's folder, its ``agents/`` and ``skills/`` subfolders and the
``config.skill_directories``, in that order, inside the eval's folder only, skipping a folder
that holds a ``SKILL.md`` (which takes priority over an agent there). A front matter waza could
not read adds no grader, as in waza, and a warning says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import SpecError
from assay.runner.files import read_regular

NAME = "agent_tools_implicit"
_LIMIT = 1 << 20


def agent_grader(base: Path, skill_dirs: Any, graders: Sequence[Any], warnings: list[str]) -> dict[str, Any] | None:
    """The implicit grader's spec, or None (an own ``tool_constraint``, no agent file, no ``tools:``)."""
    if any(isinstance(g, Mapping) and g.get("type") == "tool_constraint" for g in graders):
        return None
    path = _agent_file(base, skill_dirs)
    if path is None:
        return None
    tools = _declared_tools(path, warnings)
    if tools is None:
        return None
    return {"type": "waza_tool_constraint", "name": NAME, "config": {"allow_only": [{"tool": t} for t in tools]}}


def _agent_file(base: Path, skill_dirs: Any) -> Path | None:
    root = base.resolve()
    extra = [d for d in skill_dirs if isinstance(d, str)] if isinstance(skill_dirs, list) else []
    for folder in (root, root / "agents", root / "skills", *(root / d for d in extra)):
        folder = folder.resolve()
        if not folder.is_relative_to(root) or not folder.is_dir() or (folder / "SKILL.md").exists():
            continue
        found = sorted(p for p in folder.iterdir() if p.name.endswith(".agent.md") and p.is_file())
        if found:
            return found[0]
    return None


def _declared_tools(path: Path, warnings: list[str]) -> list[str] | None:
    """The ``tools:`` list of the file's front matter; None without one (or unreadable)."""
    try:
        text = read_regular(path, limit=_LIMIT, what="agent file").decode("utf-8")
        lines = text.splitlines()
        if not lines or lines[0].strip() != "---":
            return None
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
        front = yaml.safe_load("\n".join(lines[1:end]))
    except StopIteration:
        warnings.append(f"{path}: front matter has no closing '---'; no agent_tools_implicit grader (as in waza)")
        return None
    except (SpecError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:  # waza skips an unreadable agent
        warnings.append(f"{path}: cannot read its front matter ({exc}); no agent_tools_implicit grader (as in waza)")
        return None
    if not isinstance(front, Mapping) or "tools" not in front:
        return None
    tools = front["tools"]
    if tools is None:  # `tools:` with no value decodes to a nil list: no allow-list, as if absent
        return None
    if not isinstance(tools, list) or not all(isinstance(t, str) and t.strip() for t in tools):
        warnings.append(f"{path}: tools must be a list of tool names; no agent_tools_implicit grader (as in waza)")
        return None
    return tools
