"""The committed ``src/assay/server/static/`` is what ``web/`` builds: a fresh build (``node
web/build.mjs --outdir``) into a temporary directory holds the same files, byte for byte."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
STATIC = ROOT / "src" / "assay" / "server" / "static"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_committed_bundle_is_a_fresh_build_of_web(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found: the bundle cannot be rebuilt to compare")
    if not (WEB / "node_modules" / "esbuild").is_dir():
        pytest.skip("web/node_modules is missing (make web-deps): the bundle cannot be rebuilt to compare")
    done = subprocess.run([node, "build.mjs", "--outdir", str(tmp_path)], cwd=WEB, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    fresh, committed = _files(tmp_path), _files(STATIC)
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert stale == [], f"{stale} differ from a fresh build of web/: run make web and commit src/assay/server/static"
