"""Read-only access to a run's workspace for waza's ``file`` and ``diff`` graders: the one
place those graders touch files. Paths were checked (relative, inside the workspace) when the
config arrived; symlinks that leave the workspace are refused here."""

from __future__ import annotations

import os
from pathlib import Path

from assay.core.errors import AssayError

MAX_FILE_BYTES = 10_000_000
"""Largest workspace file read for content checks."""


class WorkspaceError(AssayError, OSError):
    """A workspace file exists but cannot be read (too large, outside the workspace, unreadable)."""


def _resolve(root: str, rel: str) -> Path:
    base = Path(root).resolve()
    full = (base / rel).resolve()
    if full != base and base not in full.parents:
        raise WorkspaceError(f"{rel} resolves outside the workspace")
    return full


def exists(root: str, rel: str) -> bool:
    """waza's ``os.Stat`` test: the path (file or folder) is present."""
    return os.path.lexists(Path(root) / rel)


def read_text(root: str, rel: str) -> str | None:
    """The file's text (undecodable bytes replaced), or None when it does not exist."""
    path = Path(root) / rel
    if not path.exists():
        return None
    full = _resolve(root, rel)
    if full.stat().st_size > MAX_FILE_BYTES:
        raise WorkspaceError(f"{rel} is larger than {MAX_FILE_BYTES:,} bytes")
    return full.read_bytes().decode("utf-8", errors="replace")


def read_snapshot(path: Path) -> str:
    """A snapshot file shipped with the suite (raises OSError when unreadable)."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise WorkspaceError(f"{path} is larger than {MAX_FILE_BYTES:,} bytes")
    return path.read_bytes().decode("utf-8", errors="replace")
