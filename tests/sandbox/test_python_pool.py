"""The Python pool's contract: values, errors, tracebacks, limits, imports, concurrency, shutdown."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from python_helpers import BENIGN, assert_benign, run, sandbox_processes

from assay.core.interfaces import CodeCall
from assay.core.result import ErrorCode
from assay.sandbox import open_code_runner
from assay.sandbox.python import ALLOWED_MODULES, PythonPool


def test_returns_the_value_with_limits(pool):
    out = run(pool, BENIGN, ["q", "a b", "a b", {}])
    assert out.ok and out.value["passed"] is True and out.value["score"] == 0.2
    assert out.limits["timeout_ms"] == 5000 and out.limits["memory_mb"] == 128
    assert set(out.limits["layers"]) == {"netns", "rlimits", "landlock", "uid_drop", "seccomp"}
    assert 0 < out.duration_ms < 1000


def test_async_evaluate_and_other_function_names(pool):
    source = ("import asyncio\nasync def evaluate(i, o, e, m):\n    await asyncio.sleep(0.01)\n"
              "    parts = await asyncio.gather(*(asyncio.sleep(0, r) for r in (o, e)))\n    return parts\n"
              "def check(x):\n    return x * 2\n")
    assert run(pool, source, [1, "o", "e", {}]).value == ["o", "e"]
    assert pool.call(CodeCall("python", source, [21], function="check")).value == 42


def test_user_exception_keeps_only_user_frames(pool):
    source = "import json\n\ndef helper(x):\n    return json.loads(x)\n\ndef evaluate(i, o, e, m):\n    return helper(o)\n"
    out = run(pool, source, [1, "{not json", 3, {}])
    assert out.error == ErrorCode.RUNTIME_ERROR
    assert out.message.startswith("json.decoder.JSONDecodeError")
    assert 'File "<evaluator>", line 7, in evaluate' in out.traceback
    assert 'File "<evaluator>", line 4, in helper' in out.traceback
    assert "return helper(o)" in out.traceback  # source lines are shown
    assert "assay" not in out.traceback and "json/decoder.py" not in out.traceback


@pytest.mark.parametrize(("source", "code", "words"), [
    ("x = 1\n", ErrorCode.RUNTIME_ERROR, "no function `evaluate`"),
    ("def evaluate(:\n", ErrorCode.RUNTIME_ERROR, "SyntaxError"),
    ("import sys\ndef evaluate(*a):\n    sys.exit(3)\n", ErrorCode.RUNTIME_ERROR, "not available"),
    ("def evaluate(*a):\n    exit(3)\n", ErrorCode.RUNTIME_ERROR, "exit(3)"),
    ("import os\n", ErrorCode.RUNTIME_ERROR, "module 'os' is not available"),
    ("from . import x\n", ErrorCode.RUNTIME_ERROR, "relative imports"),
    ("def evaluate(*a):\n    print('hello from user')\n    raise KeyError('k')\n", ErrorCode.RUNTIME_ERROR, "KeyError"),
])
def test_failures_are_values(pool, source, code, words):
    out = run(pool, source)
    assert out.error == code and words in out.message, out


def test_printed_output_comes_back(pool):
    out = run(pool, "def evaluate(*a):\n    print('hello from user')\n    raise KeyError('k')\n")
    assert out.output == "hello from user\n" and "KeyError" in out.traceback
    out = run(pool, "def evaluate(*a):\n    print('x' * 10000)\n    return 1\n")
    assert out.ok and out.output == "x" * 4096 + "\n[... first 4096 of 10001 characters]"  # as Node's console


def test_every_allowed_module_imports(pool):
    names = ", ".join(ALLOWED_MODULES)
    source = (f"import {names}\nimport datetime as dt\nfrom rapidfuzz import fuzz\n"
              "def evaluate(*a):\n"
              "    jsonschema.validate({'a': 'x'}, {'type': 'object', 'properties': {'a': {'type': 'string'}}})\n"
              "    return [dt.datetime.strptime('2024-02-03', '%Y-%m-%d').day, round(fuzz.ratio('abc', 'abd')),\n"
              "            statistics.mean([1, 2, 3]), 'é'.encode('latin-1').decode('latin-1'),\n"
              "            jsonschema_rs.is_valid({'type': 'integer'}, 3), bool(regex.match(r'\\p{L}+', 'é'))]\n")
    out = run(pool, source)
    assert out.ok, out
    assert out.value == [3, 67, 2, "é", True, True]


def test_memory_limit_follows_the_request(pool):
    source = "def evaluate(mb, *a):\n    return len(bytearray(mb << 20))\n"
    assert run(pool, source, [100, 0, 0, {}], memory_mb=160).value == 100 << 20
    assert run(pool, source, [100, 0, 0, {}], memory_mb=64).error == ErrorCode.MEMORY


def test_large_and_unicode_arguments_round_trip(pool):
    text = "北京是中国的首都 🙂 é " * 200_000  # ~4 MB of UTF-8: more than a pipe holds
    out = run(pool, "def evaluate(i, o, e, m):\n    return [len(o), o[:12], m]\n",
              ["", text, None, {"k": ["ü", 1.5, None, True]}])
    assert out.ok, out
    assert out.value == [len(text), text[:12], {"k": ["ü", 1.5, None, True]}]


def test_arguments_that_are_not_json(pool):
    out = pool.call(CodeCall("python", BENIGN, [object()]))
    assert out.error == ErrorCode.INVALID_CONFIG


def test_big_integers_round_trip(pool):
    out = run(pool, "def evaluate(x, *a):\n    return [x + 1, 2 ** 63]\n", [10 ** 30, 0, 0, {}])
    assert out.ok and out.value == [str(10 ** 30 + 1), 2 ** 63]  # exact: as text beyond 64 bits


def test_concurrent_calls_from_threads(pool):
    results: dict[int, object] = {}

    def worker(k: int) -> None:
        for j in range(10):
            out = run(pool, "def evaluate(a, b, *r):\n    return a * 1000 + b\n", [k, j, 0, {}])
            results[k * 1000 + j] = out.value

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k * 1000 + j: k * 1000 + j for k in range(8) for j in range(10)}


def test_a_dead_zygote_is_replaced():
    with PythonPool(size=1) as p:
        assert_benign(p)
        first = p._all[0]._proc.pid
        os.kill(first, signal.SIGKILL)  # e.g. the OOM killer
        assert_benign(p)  # a child already forked may still finish; then the zygote is replaced
        assert_benign(p)
        assert p._all[0]._proc.pid != first


def test_check_compiles_without_running_and_names_the_line(pool):
    """The pool's check is core.source's (the code grader's too); the cases live in tests/core/test_source.py."""
    assert pool.check("python", BENIGN) is None
    assert pool.check("python", "import os\nos._exit(3)\ndef evaluate(*a): pass\n") is None  # nothing ran
    assert "line 2" in pool.check("python", "def evaluate(*a):\n    return (\n")
    assert "line 1" in pool.check("python", "return 5\n")  # compile() errors, not just parse errors
    assert "no top-level function `grade`" in pool.check("python", BENIGN, "grade")
    assert "nodejs" in pool.check("nodejs", "module.exports = () => 1")


def test_other_languages_are_refused(pool):
    out = pool.call(CodeCall("nodejs", "module.exports = () => 1", []))
    assert out.error == ErrorCode.INVALID_CONFIG and "nodejs" in out.message


def test_close_leaves_no_process_and_refuses_later_calls():
    p = PythonPool(size=2)
    assert run(p, BENIGN, ["q", "a", "a", {}]).ok
    pids = {z._proc.pid for z in p._all if z.alive}
    ours = {pid for pid, (ppid, _) in sandbox_processes().items() if pid in pids or ppid in pids}
    assert ours
    p.close()
    assert not any(os.path.exists(f"/proc/{pid}") and _not_zombie(pid) for pid in ours)
    assert run(p, BENIGN).error == ErrorCode.UNAVAILABLE


def _not_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_missing_required_layer_refuses_unless_weak():
    with PythonPool(size=1, weak=False, required_layers=("seccomp", "no-such-layer")) as strict:
        out = run(strict, BENIGN)
        assert out.error == ErrorCode.UNAVAILABLE and "no-such-layer" in out.message
        assert "ASSAY_SANDBOX_ALLOW_WEAK" in out.message
    with PythonPool(size=1, weak=True, required_layers=("no-such-layer",)) as weak:
        assert_benign(weak)


def test_weak_mode_comes_from_the_caller_not_the_environment(monkeypatch):
    """ASSAY_SANDBOX_ALLOW_WEAK is read once, by Settings; the pool reads no environment."""
    monkeypatch.setenv("ASSAY_SANDBOX_ALLOW_WEAK", "1")
    with PythonPool(size=1, required_layers=("no-such-layer",)) as strict:
        assert strict.weak is False
        assert run(strict, BENIGN).error == ErrorCode.UNAVAILABLE


def test_runner_dispatches_by_language(monkeypatch):
    with open_code_runner(size=1) as runner:
        assert runner.call(CodeCall("python", BENIGN, ["q", "a", "a", {}])).ok
        assert runner.call(CodeCall("cobol", "", [])).error == ErrorCode.INVALID_CONFIG  # type: ignore[arg-type]
        assert "line 1" in runner.check("python", "def (")
        assert "line 1" in runner.check("python", "return 5\n")
    import assay.sandbox.node as node

    monkeypatch.delattr(node, "NodePool")  # as if the Node half were not installed
    with open_code_runner(size=1) as runner:
        out = runner.call(CodeCall("nodejs", "module.exports = () => 1", []))
        assert out.error == ErrorCode.UNAVAILABLE and "Node" in out.message


def test_answered_children_are_killed_and_reaped_without_waiting_for_their_exit():
    """A child that answered every sample is killed and left to the zygote to reap (its teardown
    overlaps the next call): none may pile up, as zombies or alive."""
    with PythonPool(size=1) as p:
        for _ in range(15):
            assert_benign(p)
        zygote = p._all[0]._proc.pid
        assert_benign(p)  # its R is read by the zygote before this call's fork is answered
        kids = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
                if _parent(pid) == zygote]
        assert len(kids) <= 2, kids  # the pre-forked child, and at most the one just answered


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def test_calls_one_at_a_time_reuse_the_warm_zygote():
    """A pool with more zygotes than its load needs (a server's) starts only what calls overlap
    on: sequential calls all go to the zygote used last, none pays another zygote's start."""
    with PythonPool(size=4) as pool:
        for _ in range(4):
            assert run(pool, BENIGN, ["q", "a b", "a b", {}]).ok
        assert sum(zygote.alive for zygote in pool._all) == 1


def test_a_pool_with_a_spare_keeps_started_zygotes_in_reserve():
    """``spare=2``: once used, the pool starts zygotes in the background until two wait started
    (no more); when callers take them, it starts others, so the next caller finds one started."""
    with PythonPool(size=5, spare=2) as pool:
        assert run(pool, BENIGN, ["q", "a b", "a b", {}]).ok

        def reserve_is_ready() -> None:
            deadline = time.monotonic() + 60  # a bound against hanging: a start takes ~0.2-0.8 s here
            while pool.started_idle() < 2:
                assert time.monotonic() < deadline, pool.started_idle()
                time.sleep(0.02)

        reserve_is_ready()
        started = sum(zygote.alive for zygote in pool._all)
        assert started in (2, 3), started  # two idle beside the one in use, or it among them: no more
        held = [pool._idle.get(), pool._idle.get()]  # a colleague's calls hold both, as a call takes them
        assert all(zygote.alive for zygote in held)
        pool._keep_spare()  # what every call does once it took its zygote
        reserve_is_ready()
        assert sum(zygote.alive for zygote in pool._all) in (4, 5)
        assert run(pool, BENIGN, ["q", "a b", "a b", {}]).ok  # a started one, and the reserve kept
        for zygote in held:
            pool._idle.put(zygote)
