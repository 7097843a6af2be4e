"""What the Node.js sandbox runs on: the ``node`` executable, the worker's own files, the
libraries evaluators may ``require``, and what a confined worker must be allowed to read.

No setting is read here: the executable comes from the caller (the settings' ``node_binary``,
``ASSAY_NODE``), else from ``PATH``. The modules are looked for where ``make node-deps`` puts
them (the package's own ``node_modules``, in a checkout), then where ``assay sandbox setup``
puts them (per environment under ``sys.prefix``, else per user under Python's user base), so
that ``pip install assay`` alone plus one command is enough.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import stat
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay.core.messages import Phrase

NODE_DIR = Path(__file__).resolve().parent
WORKER_JS = NODE_DIR / "worker.js"
PACKAGE_JSON = NODE_DIR / "package.json"
NODE_MODULES = NODE_DIR / "node_modules"
"""The package's own modules (``make node-deps`` in a checkout): looked for first."""
LIBRARIES = ("lodash", "dayjs", "validator", "ajv")
"""The modules an evaluator may ``require`` (``libraries.js`` packs them into the isolate)."""
REQUIRED_MODULES = ("isolated-vm", "ses", *LIBRARIES)
NOT_INSTALLED = Phrase("sandbox.node.not_installed", "Node.js evaluator dependencies are not installed: run "
                                                      "`assay sandbox setup` (or `make node-deps` in a checkout)")()


def setup_dir(per_user: bool = False) -> Path:
    """Where ``assay sandbox setup`` installs the modules (``<dir>/node_modules``): the Python
    environment's ``share/assay/node``, or with ``per_user`` the user base's (as ``pip --user``)."""
    base = Path(site.getuserbase()) if per_user else Path(sys.prefix)
    return base / "share" / "assay" / "node"


def module_dirs() -> tuple[Path, ...]:
    """Every place the modules are looked for, in order."""
    return (NODE_MODULES, setup_dir() / "node_modules", setup_dir(per_user=True) / "node_modules")


def modules_dir() -> Path | None:
    """The first of ``module_dirs()`` holding isolated-vm and every library, or None."""
    for candidate in module_dirs():
        if all((candidate / name).is_dir() for name in REQUIRED_MODULES):
            return candidate
    return None


def find_node(configured: str | None = None) -> str | None:
    """The real path of the Node.js executable, or None when there is none to run.

    ``configured`` (a path, or a name looked up on ``PATH``) wins; without it, ``node`` on
    ``PATH``. A configured executable that is missing is not replaced by another one.
    """
    found = shutil.which(configured or "node")
    return os.path.realpath(found) if found else None


def missing_dependencies() -> str | None:
    """Why no worker can start for want of ``node_modules`` (isolated-vm and the libraries), or None."""
    return None if modules_dir() is not None else NOT_INSTALLED


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
def runtime_files(node: str, modules: Path | None = None) -> tuple[str, ...]:
    """What a worker must read (Landlock allows nothing else): node, its shared libraries, this
    directory, and ``modules`` when they live elsewhere (``assay sandbox setup``)."""
    # openssl.cnf: node reads it at start-up and refuses to run when it cannot.
    paths = {node, str(NODE_DIR), "/etc/ld.so.cache", "/etc/ssl/openssl.cnf"}
    if modules is not None:
        paths.add(str(modules))
    try:
        out = subprocess.run(["ldd", node], capture_output=True, text=True, timeout=10).stdout
        paths.update(m for m in re.findall(r"(/\S+\.so[\w.]*)", out))
    except (OSError, subprocess.TimeoutExpired):
        paths.update(p for p in ("/lib", "/lib64", "/usr/lib") if os.path.isdir(p))
    return tuple(sorted(p for p in paths if os.path.exists(p)))


def package_version(modules: Path | None, name: str) -> str | None:
    """The version of module ``name`` installed under ``modules``, or None when it is not there."""
    if modules is None:
        return None
    try:
        return json.loads((modules / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def probe(node: str | None = None) -> dict[str, Any]:
    """For ``assay doctor``: ``{node: version|None, modules: {name: version|None}, isolated_vm: bool,
    modules_dir: path|None}``.

    ``node`` as for ``find_node``. ``isolated_vm`` is True only when node actually loads the
    native addon.
    """
    binary = find_node(node)
    modules = modules_dir()
    version = None
    ivm_ok = False
    if binary:
        try:
            version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                     timeout=10).stdout.strip() or None
            ivm_ok = modules is not None and subprocess.run(
                [binary, "-e", f"require({json.dumps(str(modules / 'isolated-vm'))})"],
                capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            pass
    return {"node": version, "modules": {m: package_version(modules, m) for m in LIBRARIES}, "isolated_vm": ivm_ok,
            "modules_dir": None if modules is None else str(modules)}
