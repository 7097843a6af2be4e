"""Code that runs long is lowered in CPU priority (``sandbox.priority``), in both sandboxes of a
server (``demote_after_s``): a busy evaluation runs at nice 19 (every thread of it) after its
first ``DEMOTE_AFTER_S``, while the next evaluation starts at normal priority; a Node.js worker
is raised back before it serves anyone else. A pool without the option (a CLI run's) leaves
priorities alone. Observed from ``/proc`` while the code runs."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from python_helpers import sandbox_processes

from assay.core.interfaces import CodeCall
from assay.sandbox.node import NodePool
from assay.sandbox.priority import DEMOTE_AFTER_S, DEMOTED_NICE
from assay.sandbox.python import PythonPool

# it times one evaluation against others' load: alone, after the parallel part of `make test`
pytestmark = pytest.mark.solo

# the nice value these tests run at (`nice make test` runs them at 10): what the sandbox's
# processes start at, and what a lowered worker is raised back to, never above it
BASE = os.getpriority(os.PRIO_PROCESS, 0)

BUSY_PY = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"
QUICK_PY = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"


def nices(pid: int) -> list[int]:
    """The nice value of every thread of ``pid`` (/proc/<pid>/task/*/stat, field 19)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.append(int((task / "stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (OSError, IndexError):
            continue
    return found


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def wait_for(condition, what: str, limit_s: float = 30):
    deadline = time.monotonic() + limit_s  # a bound against hanging, not a measure
    while not (found := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(0.01)
    return found


@pytest.mark.parametrize("demote_after_s", [DEMOTE_AFTER_S, None])
def test_a_busy_python_evaluation_is_lowered_in_a_shared_pool_and_the_next_one_is_not(demote_after_s):
    with PythonPool(size=2, demote_after_s=demote_after_s) as pool:
        pool.start()
        busy_then_quick(pool, DEMOTED_NICE if demote_after_s else BASE)


def busy_then_quick(pool: PythonPool, nice: int) -> None:
    outcome: list = []
    busy = threading.Thread(target=lambda: outcome.append(pool.call(CodeCall("python", BUSY_PY, ["q", "a", "a", {}],
                                                                             timeout_ms=3000))))
    busy.start()
    zygotes = {pid for pid, (ppid, _) in sandbox_processes().items() if ppid == os.getpid()}

    def running_child() -> int | None:
        children = [pid for pid, (ppid, _) in sandbox_processes().items() if ppid in zygotes]
        return next((pid for pid in children if _safe(state, pid) == "R"), None)

    child = wait_for(running_child, "the busy evaluation runs")
    time.sleep(DEMOTE_AFTER_S + 0.3)
    assert set(nices(child)) == {nice}, nices(child)
    # the children forked in advance for the next evaluations are at normal priority
    waiting = [pid for pid, (ppid, _) in sandbox_processes().items() if ppid in zygotes and pid != child]
    assert waiting and all(set(nices(pid)) <= {BASE} for pid in waiting), {pid: nices(pid) for pid in waiting}
    quick = pool.call(CodeCall("python", QUICK_PY, ["q", "a", "a", {}]))
    assert quick.ok and quick.value == {"passed": True}, quick
    busy.join(30)
    assert outcome and outcome[0].error == "timeout", outcome


@pytest.mark.node_sandbox
def test_a_busy_node_worker_is_lowered_then_raised_before_it_serves_again():
    busy = "module.exports = () => { const t = Date.now(); while (Date.now() - t < 600); return {passed: true} }"
    with NodePool(size=1, demote_after_s=DEMOTE_AFTER_S) as pool:
        assert pool.call(CodeCall("nodejs", "module.exports = () => ({passed: true})", [])).ok  # started
        worker = next(iter(pool._workers))
        assert set(nices(worker.proc.pid)) == {BASE}
        outcome: list = []
        thread = threading.Thread(target=lambda: outcome.append(pool.call(CodeCall("nodejs", busy, []))))
        thread.start()
        lowered = wait_for(lambda: DEMOTED_NICE in nices(worker.proc.pid), "the busy worker is lowered", 10)
        assert lowered
        thread.join(30)
        assert outcome and outcome[0].ok and outcome[0].value == {"passed": True}, outcome
        if os.geteuid() == 0:  # may raise priorities: the same worker goes on, at the host's nice
            assert pool._workers == {worker} and set(nices(worker.proc.pid)) == {BASE}
        else:  # may not: replaced rather than serving others at nice 19
            assert worker not in pool._workers
        assert pool.call(CodeCall("nodejs", "module.exports = () => ({passed: true})", [])).ok


def _safe(read, pid: int):
    try:
        return read(pid)
    except (OSError, IndexError):
        return None
