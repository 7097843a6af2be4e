"""``assay sandbox setup``: install the Node.js evaluator modules where ``runtime`` finds them.

A ``pip install assay`` has no ``node_modules`` (no checkout, no Makefile). This installs the
versions pinned in the package's own ``package.json`` (isolated-vm and the libraries) with
``npm`` into the environment's ``share/assay/node`` (or the user's, with ``per_user``), the
places ``runtime.module_dirs()`` looks after the package's own directory. The same command
serves a sandbox service machine and a Ray worker image.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import AssayError
from assay.sandbox.node.runtime import PACKAGE_JSON, REQUIRED_MODULES, hidden_from_others, package_version, setup_dir

NPM_FLAGS = ("install", "--omit=dev", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error")
"""The same ``npm install`` as ``make node-deps``."""
NPM_TIMEOUT_S = 900  # isolated-vm may compile its addon when no prebuilt binary fits


@dataclass(frozen=True, slots=True)
class Installed:
    """Where the modules went, their versions, and a warning when sandbox workers cannot read them."""

    modules: Path
    versions: dict[str, str | None]
    warning: str | None = None


def pinned_versions() -> dict[str, str]:
    """The pinned dependencies of the Node sandbox: ``{name: version}`` from its ``package.json``."""
    return dict(json.loads(PACKAGE_JSON.read_text())["dependencies"])


def choose_target(per_user: bool) -> Path:
    """The environment's directory when it can be written, else (or with ``per_user``) the user's."""
    if not per_user:
        target = setup_dir()
        existing = next(p for p in (target, *target.parents) if p.exists())
        if os.access(existing, os.W_OK):
            return target
    return setup_dir(per_user=True)


def install(target: Path, *, environ: Mapping[str, str], npm: str | None = None, node: str | None = None) -> Installed:
    """Install the pinned modules into ``target/node_modules`` with ``npm`` (default: on ``PATH``),
    run in ``environ`` (the settings' ``environ``).

    Raises ``AssayError`` saying what to do when npm is missing or fails."""
    npm_path = shutil.which(npm or "npm", path=environ.get("PATH"))
    if npm_path is None:
        raise AssayError("npm was not found: install Node.js 18 to 21 with npm, then run `assay sandbox setup` again")
    target.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(PACKAGE_JSON.read_text())
    (target / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    env = dict(environ)
    if node:  # npm runs isolated-vm's install script with the node the sandbox will use
        env["PATH"] = os.path.dirname(os.path.realpath(node)) + os.pathsep + env.get("PATH", "")
    try:
        done = subprocess.run([npm_path, *NPM_FLAGS], cwd=target, env=env, capture_output=True, text=True,
                              timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssayError(f"npm install did not finish within {NPM_TIMEOUT_S} s in {target}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise AssayError(f"npm install failed in {target} (exit {done.returncode}): {tail}")
    modules = target / "node_modules"
    versions = {name: package_version(modules, name) for name in REQUIRED_MODULES}
    missing = [name for name, version in versions.items() if version is None]
    if missing:
        raise AssayError(f"npm install finished but {', '.join(missing)} is missing from {modules}")
    hidden = hidden_from_others(modules)
    warning = (f"sandbox workers run as uid 65534 and cannot read {hidden}: make it world-readable "
               "(chmod o+rx) or install elsewhere" if hidden else None)
    return Installed(modules=modules, versions=versions, warning=warning)

