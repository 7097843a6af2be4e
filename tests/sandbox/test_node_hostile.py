"""Hostile Node.js evaluators through NodePool.call, checking the host side after each attack.

After every attack: no connection reached a TCP listener on 127.0.0.1, no file appeared, no
process other than the pool's workers exists below this test process, the secret in the
test's environment is nowhere in the outcome, and a benign evaluation still grades correctly.
"""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from assay.core.interfaces import CodeCall
from assay.core.result import ErrorCode
from assay.sandbox.node import NodePool

pytestmark = pytest.mark.node_sandbox

SECRET = "assay-secret-" + secrets.token_hex(8)
MARKER = Path(f"/tmp/assay-node-pwned-{secrets.token_hex(4)}")

BENIGN = """
module.exports = async (input, output, expected) => {
  const words = output.split(' ');
  return { passed: output.includes(expected) && !('polluted' in {}), score: words.length / 4,
           reason: JSON.stringify([1, 2]) + [3].map(x => x * 2).join(',') };
};"""


@pytest.fixture(scope="module")
def host():
    """The pool (started with a secret in the environment) and a listening TCP socket."""
    os.environ["ASSAY_TEST_SECRET"] = SECRET
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    _BASELINE.update(pid for pid, _ in descendants())  # other folders' live servers and browsers
    pool = NodePool(size=2)
    yield pool, listener.getsockname()[1], listener
    pool.close()
    listener.close()
    os.environ.pop("ASSAY_TEST_SECRET", None)


_BASELINE: set[int] = set()
"""Processes below this one before the pool started (and so not the pool's), left out of the check."""


def _python_zygote(pid: int) -> bool:
    try:
        return b"assay.sandbox.python.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def descendants() -> list[tuple[int, str]]:
    """(pid, command name) of every process below this one, leaving out the Python sandbox
    pools that earlier tests in this process started (they are not the Node pool's)."""
    parent: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            names[int(entry)] = stat[stat.index("(") + 1: stat.rindex(")")]
            parent[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found, frontier = [], [os.getpid()]
    while frontier:
        pid = frontier.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in _BASELINE and not (pid == os.getpid() and _python_zygote(child)):
                found.append((child, names[child]))
                frontier.append(child)
    return found


def attack(host, source: str, expect: set[ErrorCode] | None, timeout_ms: int = 1500):
    pool, port, listener = host
    source = source.replace("PORT", str(port)).replace("MARKER", str(MARKER))
    out = pool.call(CodeCall("nodejs", source, ["in", "out", None, {}], timeout_ms=timeout_ms))
    if expect is not None:
        assert out.error in expect, out
    assert SECRET not in repr(out)
    with pytest.raises(BlockingIOError):
        listener.accept()
    assert not MARKER.exists()
    procs = descendants()
    assert all(name.startswith("node") for _, name in procs), procs
    assert len(procs) <= pool.size, procs
    benign = pool.call(CodeCall("nodejs", BENIGN, ["q", "a b c d", "c", {}]))
    assert benign.ok and benign.value == {"passed": True, "score": 1.0, "reason": "[1,2]6"}, benign
    return out


# What an escape would do with a real `process`: leak the secret, dial home, drop a file.
PAYLOAD = """
function pwn(p) {
  const req = p.mainModule ? p.mainModule.require : p.binding;
  try { req('net').connect(PORT, '127.0.0.1'); } catch (e) {}
  try { req('fs').writeFileSync('MARKER', 'x'); } catch (e) {}
  return { passed: true, reason: JSON.stringify(p.env) };
}
"""

ESCAPES = {
    "function_constructor": "module.exports = function () { return pwn(this.constructor.constructor('return process')()); }",
    "global_process": "module.exports = () => pwn(globalThis.process || process)",
    "returned_object": "module.exports = () => ({ passed: true, toJSON() { return pwn(this.constructor.constructor('return process')()); } })",
    "arguments_constructor": "module.exports = function (input) { return pwn(input.constructor.constructor('return process')()); }",
    "prepare_stack_trace": """
      module.exports = () => {
        Error.prepareStackTrace = (e, frames) => frames.map(f => { const t = f.getThis(); return t && t.constructor.constructor('return process')(); });
        const procs = new Error().stack.filter(Boolean);
        return procs.length && procs[0].env ? pwn(procs[0]) : { passed: false, reason: 'no process in ' + procs.length + ' frames' };
      };""",
    "error_getter_on_throw": """
      module.exports = () => { const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { return pwn(this.constructor.constructor('return process')()).reason; } }); throw e; };""",
    "thrown_function": "module.exports = () => { throw function () { return process; }; }",
    "import_dynamic": "module.exports = async () => pwn((await import('process')).default)",
    "eval_require": "module.exports = () => pwn(eval('require')('process'))",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_constructor_and_stack_escapes(host, name):
    out = attack(host, PAYLOAD + ESCAPES[name], None)
    # Either an error, or a value computed inside the isolate that holds no environment.
    assert not out.ok or "PATH" not in repr(out.value), out


@pytest.mark.parametrize("module", ["fs", "child_process", "net", "http", "process", "worker_threads", "vm", "module"])
def test_require_outside_the_allow_list(host, module):
    out = attack(host, f"const m = require('{module}'); module.exports = () => ({{ passed: true }});",
                 {ErrorCode.RUNTIME_ERROR})
    assert out.message == f"Error: module '{module}' is not available"


def test_process_env_and_globals(host):
    out = attack(host, """module.exports = () => ({ passed: true, reason: [typeof process, typeof require('lodash').VERSION,
      typeof fetch, typeof WebAssembly, typeof SharedArrayBuffer, typeof Buffer, typeof global].join(',') })""", {None})
    assert out.value["reason"] == "undefined,string,undefined,undefined,undefined,undefined,undefined"


def test_prototype_pollution_does_not_reach_later_evaluations(host):
    out = attack(host, """
      const _ = require('lodash');
      const refused = [];
      for (const write of [() => { _.difference = () => []; }, () => { Object.prototype.polluted = true; },
                           () => { String.prototype.includes = () => false; }, () => { Array.prototype.map = () => ['pwned']; },
                           () => { JSON.stringify = () => '"pwned"'; },
                           () => Object.defineProperty(Object.prototype, 'passed', { get() { return true; } })]) {
        try { write(); } catch (e) { refused.push(e instanceof TypeError); }
      }
      module.exports = () => ({ passed: true, refused });""", {None})
    assert out.value["refused"] == [True] * 6  # every write to what is shared throws in its sample
    keywords = "const _ = require('lodash'); module.exports = () => ({ passed: true, d: _.difference([1, 2], [1]) })"
    out = host[0].call(CodeCall("nodejs", keywords, []))
    assert out.value == {"passed": True, "d": [2]}


@pytest.mark.parametrize("source", [
    "module.exports = () => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); }",
    "module.exports = () => { const i = new Int32Array(4); Atomics.wait(i, 0, 0); }",
])
def test_atomics_wait(host, source):
    attack(host, source, {ErrorCode.RUNTIME_ERROR, ErrorCode.TIMEOUT}, timeout_ms=500)


@pytest.mark.parametrize("source", [
    "module.exports = () => { const a = []; while (true) a.push(new Array(1e5).fill(1.5)); }",
    "module.exports = () => { const a = []; while (true) a.push({ x: Math.random(), s: 'k' + Math.random() }); }",
    "module.exports = () => { const a = []; while (true) a.push(new Float64Array(1 << 20)); }",
    "module.exports = () => { let s = 'x'; while (true) s = s + s; }",
    "module.exports = () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, [i]); }",
])
def test_heap_bombs(host, source):
    # Each bomb must end on the memory limit, not the clock: the time limit is only the bound of a
    # bomb that allocates slowly (many small objects make V8 collect over and over near its limit,
    # which took over 5 s of wall on the 2 shared cores under load). A sound one ends in ~1-2 s.
    attack(host, source, {ErrorCode.MEMORY, ErrorCode.RUNTIME_ERROR}, timeout_ms=30_000)


@pytest.mark.parametrize("source", [
    "module.exports = async () => { while (true) await null; }",
    "module.exports = () => new Promise(() => { (function f() { Promise.resolve().then(f); })(); })",
    "module.exports = () => { for (;;) {} }",
    "module.exports = () => new Promise(() => { (function again() { setTimeout(again, 0); })(); })",
    "module.exports = () => { const re = /^(a+)+$/; re.test('a'.repeat(40) + 'b'); return { passed: true }; }",
    "for (;;) {}",
])
def test_endless_work_times_out(host, source):
    out = attack(host, source, {ErrorCode.TIMEOUT}, timeout_ms=300)
    assert out.duration_ms < 2000


def test_timers_left_behind_die_with_the_evaluation(host):
    attack(host, """module.exports = () => {
        setTimeout(() => { Object.prototype.polluted = true; }, 30);
        setTimeout(function again() { setTimeout(again, 1); }, 0);
        return { passed: true };
      };""", {None})
    later = host[0].call(CodeCall("nodejs", """module.exports = async () => {
        await new Promise(r => setTimeout(r, 80));
        return { passed: !('polluted' in {}) };
      };""", []))
    assert later.value == {"passed": True}


def test_promise_that_never_settles_fails_fast(host):
    out = attack(host, "module.exports = () => new Promise(() => {})", {ErrorCode.RUNTIME_ERROR})
    assert "never settle" in out.message and out.duration_ms < 1000


@pytest.mark.parametrize(("source", "codes"), [
    ("module.exports = () => { throw new Error('\\ud800' + 'x'.repeat(10e6)); }", {ErrorCode.RUNTIME_ERROR}),
    ("module.exports = () => () => 1", {ErrorCode.INVALID_OUTPUT}),
    ("module.exports = () => { const a = []; a.push(a); return { passed: true, a }; }", {ErrorCode.INVALID_OUTPUT}),
    ("module.exports = () => ({ passed: true, reason: 'x'.repeat(50e6) })", {ErrorCode.INVALID_OUTPUT, ErrorCode.MEMORY}),
    ("module.exports = () => { let v = []; for (let i = 0; i < 2e5; i++) v = [v]; return v; }",
     {ErrorCode.INVALID_OUTPUT}),
    ("module.exports = () => { const r = function f(n) { return f(n + 1); }; r(0); }", {ErrorCode.RUNTIME_ERROR}),
    ("module.exports = () => new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); } })",
     {ErrorCode.INVALID_OUTPUT, ErrorCode.RUNTIME_ERROR}),
])
def test_hostile_results(host, source, codes):
    attack(host, source, codes, timeout_ms=3000)


def test_python_watchdog_kills_a_stuck_worker():
    with NodePool(size=1, margin_s=-0.25) as pool:  # the Python deadline fires before the worker's own
        out = pool.call(CodeCall("nodejs", "module.exports = () => { for (;;) {} }", [], timeout_ms=300))
        assert out.error is ErrorCode.TIMEOUT and "worker killed" in out.message
        assert pool._idle == []
        again = pool.call(CodeCall("nodejs", BENIGN, ["q", "a b c d", "c", {}]))
        assert again.ok, again
        pid = pool._idle[0].proc.pid
    assert not Path(f"/proc/{pid}").exists()
