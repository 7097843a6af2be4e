"""What the Node.js sandbox runs on: the ``node`` executable, the worker's own files, the
libraries evaluators may ``require``, and what a confined worker must be allowed to read.

No setting is read here: the executable comes from the caller (the settings' ``node_binary``,
``ASSAY_NODE``), else from ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

NODE_DIR = Path(__file__).resolve().parent
WORKER_JS = NODE_DIR / "worker.js"
NODE_MODULES = NODE_DIR / "node_modules"
LIBRARIES = ("lodash", "dayjs", "validator", "ajv")
"""The modules an evaluator may ``require`` (``libraries.js`` packs them into the isolate)."""
NOT_INSTALLED = "Node.js evaluator dependencies are not installed: run `make node-deps`"


def find_node(configured: str | None = None) -> str | None:
    """The real path of the Node.js executable, or None when there is none to run.

    ``configured`` (a path, or a name looked up on ``PATH``) wins; without it, ``node`` on
    ``PATH``. A configured executable that is missing is not replaced by another one.
    """
    found = shutil.which(configured or "node")
    return os.path.realpath(found) if found else None


def missing_dependencies() -> str | None:
    """Why no worker can start for want of ``node_modules`` (isolated-vm and the libraries), or None."""
    if not all((NODE_MODULES / name).is_dir() for name in ("isolated-vm", *LIBRARIES)):
        return NOT_INSTALLED
    return None


def hidden_from_others(path: Path) -> str | None:
    """The first directory on the way to ``path`` (or the file) that others may not enter or read.

    A worker runs as uid 65534, so a checkout under a private home directory cannot be read.
    """
    for part in [*reversed(path.parents), path]:
        try:
            mode = part.stat().st_mode
        except OSError:
            return str(part)
        need = stat.S_IXOTH if part != path else stat.S_IROTH
        if not mode & need:
            return str(part)
    return None


@lru_cache(maxsize=4)
def runtime_files(node: str) -> tuple[str, ...]:
    """What a worker must read (Landlock allows nothing else): node, its shared libraries, this directory."""
    # openssl.cnf: node reads it at start-up and refuses to run when it cannot.
    paths = {node, str(NODE_DIR), "/etc/ld.so.cache", "/etc/ssl/openssl.cnf"}
    try:
        out = subprocess.run(["ldd", node], capture_output=True, text=True, timeout=10).stdout
        paths.update(m for m in re.findall(r"(/\S+\.so[\w.]*)", out))
    except (OSError, subprocess.TimeoutExpired):
        paths.update(p for p in ("/lib", "/lib64", "/usr/lib") if os.path.isdir(p))
    return tuple(sorted(p for p in paths if os.path.exists(p)))


def _package_version(name: str) -> str | None:
    try:
        return json.loads((NODE_MODULES / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def probe(node: str | None = None) -> dict[str, Any]:
    """For ``assay doctor``: ``{node: version|None, modules: {name: version|None}, isolated_vm: bool}``.

    ``node`` as for ``find_node``. ``isolated_vm`` is True only when node actually loads the
    native addon.
    """
    binary = find_node(node)
    version = None
    ivm_ok = False
    if binary:
        try:
            version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                     timeout=10).stdout.strip() or None
            ivm_ok = (NODE_MODULES / "isolated-vm").is_dir() and subprocess.run(
                [binary, "-e", f"require({json.dumps(str(NODE_MODULES / 'isolated-vm'))})"],
                capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            pass
    return {"node": version, "modules": {m: _package_version(m) for m in LIBRARIES}, "isolated_vm": ivm_ok}
