"""``assay sandbox setup``: the pinned Node.js modules installed (by a stand-in ``npm``) where the
Node runtime looks after the package's own ``node_modules``, and found there by real workers."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from service_process import ASSAY

from assay.core.errors import AssayError
from assay.core.interfaces import CodeCall
from assay.sandbox.node import NodePool, runtime
from assay.sandbox.node.install import NPM_FLAGS, choose_target, install, pinned_versions, setup_dir

FAKE_NPM = """#!/bin/sh
# Records how it was called, then installs what package.json pins as empty packages.
echo "$@" > npm-args.txt
[ -n "$NPM_FAIL" ] && { echo "npm ERR! $NPM_FAIL" >&2; exit 1; }
exec python3 -c '
import json, os
for name, version in json.load(open("package.json"))["dependencies"].items():
    os.makedirs(f"node_modules/{name}", exist_ok=True)
    json.dump({"name": name, "version": version}, open(f"node_modules/{name}/package.json", "w"))
'
"""


@pytest.fixture
def fake_npm(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return npm


@pytest.fixture
def open_dir():
    """A directory every user may read (uid 65534 runs the workers), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="assay-node-setup-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_install_puts_the_pinned_versions_where_asked(fake_npm, open_dir):
    done = install(open_dir / "node", environ=os.environ)
    assert done.modules == open_dir / "node" / "node_modules" and done.warning is None
    assert done.versions == {name: pinned_versions()[name] for name in runtime.REQUIRED_MODULES}
    assert json.loads((open_dir / "node" / "package.json").read_text())["dependencies"] == pinned_versions()
    assert (open_dir / "node" / "npm-args.txt").read_text().split() == list(NPM_FLAGS)


def test_install_warns_when_the_workers_could_not_read_the_modules(fake_npm, open_dir):
    private = open_dir / "private"
    private.mkdir(mode=0o700)
    done = install(private / "node", environ=os.environ)
    assert done.warning is not None and "uid 65534" in done.warning and str(private) in done.warning


def test_install_says_what_to_do_without_npm_or_when_npm_fails(fake_npm, tmp_path, monkeypatch):
    monkeypatch.setenv("NPM_FAIL", "network down")
    with pytest.raises(AssayError, match="npm install failed.*network down"):
        install(tmp_path / "node", environ=os.environ)
    with pytest.raises(AssayError, match="npm was not found: install Node.js"):
        install(tmp_path / "node", environ=os.environ, npm=str(tmp_path / "no-npm"))


def test_the_runtime_looks_in_the_setup_directories_after_its_own(monkeypatch, tmp_path, fake_npm):
    monkeypatch.setattr(runtime, "NODE_MODULES", tmp_path / "absent" / "node_modules")
    monkeypatch.setattr(runtime, "setup_dir", lambda per_user=False: tmp_path / ("user" if per_user else "env"))
    assert runtime.modules_dir() is None and "assay sandbox setup" in runtime.missing_dependencies()
    install(tmp_path / "user", environ=os.environ)
    assert runtime.modules_dir() == tmp_path / "user" / "node_modules" and runtime.missing_dependencies() is None
    install(tmp_path / "env", environ=os.environ)
    assert runtime.modules_dir() == tmp_path / "env" / "node_modules"


def test_setup_installs_into_the_environment_when_it_can_else_for_the_user():
    assert choose_target(per_user=False) == setup_dir()  # the test environment is writable
    assert choose_target(per_user=True) == setup_dir(per_user=True) != setup_dir()


def test_sandbox_setup_command(fake_npm, open_dir):
    env = {**os.environ, "PYTHONUSERBASE": str(open_dir)}
    done = subprocess.run([str(ASSAY), "sandbox", "setup", "--user"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"isolated-vm {pinned_versions()['isolated-vm']}" in done.stdout
    assert str(open_dir / "share" / "assay" / "node" / "node_modules") in done.stderr
    assert "compiling the Node.js sandbox" in done.stderr.splitlines()[1] and "a few minutes" in done.stderr
    assert (open_dir / "share" / "assay" / "node" / "node_modules" / "ajv" / "package.json").exists()


@pytest.mark.node_sandbox
def test_confined_workers_load_modules_from_a_setup_directory(monkeypatch, open_dir):
    """The real modules, copied where setup would put them: the worker is told where they are
    and Landlock lets it read there, with the package's own node_modules out of sight."""
    shutil.copytree(runtime.NODE_MODULES, open_dir / "env" / "node_modules", symlinks=True)
    with (open_dir / "env" / "node_modules" / "lodash" / "lodash.min.js").open("a") as copied:
        copied.write("\n;module.exports.fromTheCopy = true;\n")  # tells the copy from the package's own
    for root, dirs, _ in os.walk(open_dir):
        for name in dirs:
            os.chmod(os.path.join(root, name), os.stat(os.path.join(root, name)).st_mode | stat.S_IROTH | stat.S_IXOTH)
    monkeypatch.setattr(runtime, "NODE_MODULES", open_dir / "absent" / "node_modules")
    monkeypatch.setattr(runtime, "setup_dir", lambda per_user=False: open_dir / ("user" if per_user else "env"))
    with NodePool(size=1) as pool:
        out = pool.call(CodeCall("nodejs", "const _ = require('lodash');\n"
                                           "module.exports = () => [_.sum([1, 2, 3]), _.fromTheCopy === true]", []))
        assert out.ok and out.value == [6, True], out
        assert pool._confined.modules == open_dir / "env" / "node_modules"


def test_make_says_what_it_is_doing_before_each_long_step(tmp_path):
    """`make serve` on a fresh checkout: a line before the Python install, the Node.js sandbox's
    compile (minutes) and the server's start (make -n prints the recipe it would run)."""
    root = Path(__file__).resolve().parents[2]
    shutil.copy(root / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    node = tmp_path / "src" / "assay" / "sandbox" / "node"
    node.mkdir(parents=True)
    (node / "package.json").write_text("{}")
    plan = subprocess.run(["make", "-n", "serve"], cwd=tmp_path, capture_output=True, text=True, timeout=30).stdout
    steps = [line for line in plan.splitlines() if line.startswith("echo") or "pip install" in line
             or "npm install" in line or "assay serve" in line]
    said = [i for i, line in enumerate(steps) if line.startswith("echo")]
    assert len(said) >= 2 and "Python dependencies" in steps[said[0]] and "assay serve" in steps[-1]
    assert "pip install" in steps[said[0] + 1] and "starting assay serve" in steps[-2]
    assert any("compiling the Node.js sandbox" in line and "a few minutes" in line for line in plan.splitlines())
