"""Fixtures and markers shared by every test.

Markers for missing runtimes, each checking what its tests really need (a test carrying one
is skipped, with the reason, when that is missing):

- ``node``: a ``node`` executable (program and script graders that run Node.js scripts);
- ``node_sandbox``: Node.js evaluators: ``node`` plus the sandbox's modules (isolated-vm
  built for this Node, lodash, dayjs, validator, ajv), as ``make node-deps`` installs them;
- ``ray``: Ray Data (``pip install 'assay[ray]'``), for the Ray engine's tests (``tests/ray``).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core.interfaces import CodeOutcome, ProcessOutcome
from assay.core.spec import compile_spec
from assay.testing import FakeCodeRunner, FakeJudgeClient, FakeProcessRunner

sys.path.insert(0, str(Path(__file__).parent))  # the helpers beside this file (judge_server, suite_files, ...)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "node: needs a node executable")
    config.addinivalue_line("markers", "node_sandbox: needs node and the Node sandbox's modules (make node-deps)")
    config.addinivalue_line("markers", "postgres: runs against a real PostgreSQL server the tests start themselves")
    config.addinivalue_line("markers", "browser: drives headless Chromium with Playwright against a live server "
                                       "(tests/pages; skipped, saying why, when no browser can be had)")
    config.addinivalue_line("markers", "ray: starts a local Ray (needs assay[ray]); tests/ray")
    config.addinivalue_line("markers", "slow: starts several servers or processes (kept to seconds; run by make test)")


@functools.cache
def _node_problem() -> str | None:
    return None if shutil.which("node") else "node is not installed"


@functools.cache
def _ray_problem() -> str | None:
    try:
        import ray.data  # noqa: F401
    except ImportError:
        return "Ray Data is not installed (pip install 'assay[ray]')"
    return None


@functools.cache
def _node_sandbox_problem() -> str | None:
    from assay.sandbox.node.runtime import NODE_DIR, find_node, missing_dependencies

    node = find_node()
    if node is None:
        return "node is not installed"
    problem = missing_dependencies()
    if problem:
        return problem
    probe = "for (const m of ['isolated-vm', 'lodash', 'dayjs', 'validator', 'ajv']) require(m)"
    try:
        done = subprocess.run([node, "-e", probe], cwd=NODE_DIR, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"node cannot load the sandbox modules: {exc}"
    if done.returncode != 0:
        return f"node cannot load the sandbox modules (run `make node-deps`): {done.stderr.strip()[-300:]}"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    for name, problem in (("node", _node_problem), ("node_sandbox", _node_sandbox_problem), ("ray", _ray_problem)):
        if item.get_closest_marker(name) is not None:
            reason = problem()
            if reason:
                pytest.skip(reason)


@pytest.fixture
def grade():
    """Grade one sample dict with one spec, through the grader directly."""
    from assay.core.sample import Sample

    def _grade(spec, **sample):
        sample.setdefault("id", "s1")
        return compile_spec(spec).build().grade(Sample(**sample))

    return _grade


@pytest.fixture
def fake_code_runner():
    """Make a FakeCodeRunner: ``fake_code_runner(value=..., error=..., respond=..., problem=...)``."""

    def make(value=None, *, respond=None, problem=None, **outcome) -> FakeCodeRunner:
        return FakeCodeRunner(CodeOutcome(value=value, **outcome), respond=respond, problem=problem)

    return make


@pytest.fixture
def fake_process_runner():
    """Make a FakeProcessRunner: ``fake_process_runner(returncode=..., stdout=..., respond=...)``."""

    def make(*, respond=None, **outcome) -> FakeProcessRunner:
        return FakeProcessRunner(ProcessOutcome(**outcome), respond=respond)

    return make


@pytest.fixture
def fake_judge():
    """Make a FakeJudgeClient: ``fake_judge([JudgeReply(text=...), ...])`` or ``fake_judge(respond)``."""
    return FakeJudgeClient


@pytest.fixture
def judge_server():
    """A real OpenAI-compatible chat server on 127.0.0.1 (``tests/judge_server.py``), stopped
    at teardown: ``judge_server.queue(good_json(...), status(429, retry_after="0.1"))``, or
    ``judge_server.respond = lambda body: ...``; give clients ``judge_server.url``."""
    from judge_server import JudgeServer

    with JudgeServer() as server:
        yield server


@pytest.fixture(scope="session")
def local_judge():
    """The local toy judge (``assay judge serve-local``, SmolLM2-135M through llama.cpp) started
    once per session through the installed command, on a free 127.0.0.1 port; stopped by its pid
    at the end. Skipped, saying what to install, where ``assay[local-judge]`` or the model's wheel
    is missing (``make setup`` installs both; in CI a failed install fails the setup instead)."""
    import os

    from assay.judges.local import LocalJudge, LocalOptions
    from assay.judges.local.find import available

    missing = available()
    if missing is not None:
        pytest.skip(missing)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    judge = LocalJudge.start(LocalOptions(threads=2, parallel=4), environ=env,
                             command=[str(Path(sys.executable).parent / "assay")])
    try:
        yield judge
    finally:
        judge.stop()
