"""Real attacks through ``CodeRunner.call``; the host is checked afterwards, and the pool must still grade.

Each attack reaches the OS the way a tenant would: through modules already in memory
(``collections._sys.modules`` gives ``os``, ``socket``, ``ctypes``), not through the import
allow-list, which is a convenience and not the boundary.
"""

from __future__ import annotations

import os
import socket
import time
import uuid

import pytest
from python_helpers import SECRET, assert_benign, run, sandbox_processes

from assay.core.result import ErrorCode
from assay.sandbox.python.frames import FRAME_HEAD

PRELUDE = "import collections\nmods = collections._sys.modules\nos = mods['os']\n"


@pytest.fixture
def listener():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    with pytest.raises(BlockingIOError):  # nothing ever connected
        srv.accept()
    srv.close()


@pytest.fixture
def marker_paths():
    name = f"assay-hostile-{uuid.uuid4().hex}"
    paths = [f"/tmp/{name}", f"/dev/shm/{name}", f"/{name}", f"/var/tmp/{name}"]
    yield paths
    for path in paths:
        assert not os.path.exists(path), f"the sandbox wrote {path}"


@pytest.fixture(autouse=True)
def contained(pool):
    """After each attack: no stray process, zygotes alive, and a benign evaluation still grades."""
    zygotes = {z._proc.pid for z in pool._all if z.alive}
    yield
    deadline = time.monotonic() + 1.0  # a killed child may take a moment to be torn down
    while (stray := _strays(zygotes)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not stray, f"processes outlived their evaluation: {stray}"
    assert all(os.path.exists(f"/proc/{pid}") for pid in zygotes), "a zygote was killed"
    assert_benign(pool)


def _strays(zygotes: set[int]) -> list[int]:
    """Sandbox processes other than the zygotes and one waiting pre-forked child per zygote.

    Zygotes of other pools and their own children are not this pool's business: those of this
    test process (the library's default pool, started by earlier tests) and those of any other
    live process (a test run beside this one). A process that escaped its evaluation is
    re-parented to init, never to a host process, and so is still caught.
    """
    found = sandbox_processes()
    others = {pid for pid, (ppid, _) in found.items() if pid not in zygotes and ppid not in found and ppid != 1}
    found = {pid: v for pid, v in found.items() if pid not in others and v[0] not in others}
    stray = [pid for pid, (ppid, _) in found.items() if pid not in zygotes and ppid not in zygotes]
    per_zygote = [ppid for ppid, _ in found.values() if ppid in zygotes]
    return stray + [z for z in zygotes if per_zygote.count(z) > 1]


@pytest.mark.parametrize("source", [
    "def evaluate(*a):\n    while True:\n        pass\n",
    PRELUDE + "signal = mods['signal']\ndef evaluate(*a):\n"
    "    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGHUP):\n"
    "        signal.signal(s, signal.SIG_IGN)\n    while True:\n        pass\n",
    "import re\ndef evaluate(*a):\n    return bool(re.match(r'(a+)+$', 'a' * 64 + 'b'))\n",
    "import time\ndef evaluate(*a):\n    time.sleep(60)\n",
], ids=["infinite-loop", "ignores-signals", "redos", "sleep"])
def test_runaway_code_times_out(pool, source):
    out = run(pool, source, timeout_ms=400)
    assert out.error == ErrorCode.TIMEOUT, out
    assert 400 <= out.duration_ms < 2000


@pytest.mark.parametrize("source", [
    "def evaluate(*a):\n    return len(bytearray(1 << 30))\n",
    "def evaluate(*a):\n    hog = []\n    while True:\n        hog.append(' ' * (1 << 20))\n",
    "def evaluate(*a):\n    return len([0] * 10 ** 9)\n",
], ids=["one-block", "gradual", "list"])
def test_memory_bomb_is_stopped(pool, source):
    out = run(pool, source, timeout_ms=3000)
    assert out.error == ErrorCode.MEMORY, out
    assert out.limits["memory_mb"] == 128


@pytest.mark.parametrize("body", [
    "    while True:\n        os.fork()\n",
    "    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n            while True: pass\n",
    "    os.posix_spawn('/bin/sleep', ['sleep', '30'], {})\n",
    "    t = mods['threading'].Thread(target=os.fork)\n    t.start()\n    t.join()\n    os.fork()\n",
], ids=["fork-bomb", "double-fork-daemon", "posix-spawn", "fork-from-thread"])
def test_no_new_process(pool, body):
    out = run(pool, PRELUDE + "def evaluate(*a):\n" + body, timeout_ms=1000)
    assert out.error == ErrorCode.RUNTIME_ERROR, out
    assert "PermissionError" in out.message or "Operation not permitted" in out.message


def test_os_system_and_subprocess_do_nothing(pool, marker_paths):
    source = PRELUDE + (
        "def evaluate(paths, *a):\n"
        "    results = [os.system('touch ' + paths[0])]\n"
        "    try:\n"
        "        sp = mods.get('subprocess') or mods['asyncio'].subprocess.subprocess\n"
        "        sp.run(['/usr/bin/touch', paths[1]])\n"
        "    except Exception as exc:\n"
        "        results.append(type(exc).__name__)\n"
        "    return results\n")
    out = run(pool, source, [marker_paths, 0, 0, {}], timeout_ms=1000)
    assert out.ok, out
    assert out.value[0] != 0 and out.value[1] == "PermissionError"


def test_background_thread_dies_with_the_evaluation(pool, marker_paths):
    source = PRELUDE + (
        "import time\n"
        "def evaluate(paths, *a):\n"
        "    def linger():\n"
        "        time.sleep(0.3)\n"
        "        for p in paths:\n"
        "            try:\n                open(p, 'w').write('x')\n"
        "            except OSError:\n                pass\n"
        "    mods['threading'].Thread(target=linger).start()\n"
        "    return 'returned'\n")
    out = run(pool, source, [marker_paths, 0, 0, {}], timeout_ms=1000)
    assert out.ok and out.value == "returned", out
    time.sleep(0.5)  # past the thread's wake-up: it must be gone, and wrote nothing


def test_thread_holding_the_interpreter_after_return(pool):
    source = PRELUDE + (
        "import re, time\n"
        "def evaluate(*a):\n"
        "    def hog():\n        time.sleep(0.005)\n        re.match(r'(a+)+$', 'a' * 64 + 'b')\n"
        "    mods['threading'].Thread(target=hog).start()\n"
        "    return 'returned'\n")
    out = run(pool, source, timeout_ms=500)
    assert (out.ok and out.value == "returned") or out.error == ErrorCode.TIMEOUT, out


def test_files_cannot_be_read(pool):
    source = PRELUDE + (
        "def evaluate(host_pid, *a):\n"
        "    got = {}\n"
        "    for path in ('/etc/passwd', '/etc/hostname', f'/proc/{host_pid}/environ', '/proc/self/environ',\n"
        "                 '/proc/1/cmdline', '/root'):\n"
        "        try:\n"
        "            got[path] = open(path, 'rb').read().decode(errors='replace')\n"
        "        except OSError as exc:\n"
        "            got[path] = type(exc).__name__\n"
        "    try:\n        got['listdir'] = os.listdir('/')\n"
        "    except OSError as exc:\n        got['listdir'] = type(exc).__name__\n"
        "    return got\n")
    out = run(pool, source, [os.getpid(), 0, 0, {}])
    assert out.ok, out
    assert all(v in ("PermissionError", "IsADirectoryError") for v in out.value.values()), out.value


def test_environment_holds_no_secret(pool):
    source = PRELUDE + "def evaluate(*a):\n    return dict(os.environ)\n"
    out = run(pool, source)
    assert out.ok, out
    assert SECRET not in repr(out.value)
    assert set(out.value) <= {"PATH", "LANG"}


def test_zygotes_hold_no_secret_either(pool):
    for zygote in pool._all:
        environ = open(f"/proc/{zygote._proc.pid}/environ", "rb").read().decode()
        assert SECRET not in environ and "PATH=" in environ


def test_files_cannot_be_written(pool, marker_paths):
    source = PRELUDE + (
        "def evaluate(paths, *a):\n"
        "    errors = []\n"
        "    for p in paths:\n"
        "        try:\n            open(p, 'w').write('pwned')\n"
        "        except OSError as exc:\n            errors.append(type(exc).__name__)\n"
        "    try:\n        os.mkfifo(paths[0] + '.fifo')\n"
        "    except OSError as exc:\n        errors.append(type(exc).__name__)\n"
        "    return errors\n")
    out = run(pool, source, [marker_paths, 0, 0, {}])
    assert out.ok, out
    assert out.value == ["PermissionError"] * (len(marker_paths) + 1)


def test_no_network(pool, listener):
    port = listener.getsockname()[1]
    source = PRELUDE + (
        "socket = mods['socket']\n"
        "def evaluate(port, *a):\n"
        "    errors = []\n"
        "    for family, kind, address in ((socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', port)),\n"
        "                                  (socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', port)),\n"
        "                                  (socket.AF_UNIX, socket.SOCK_STREAM, '/run/systemd/private')):\n"
        "        try:\n"
        "            s = socket.socket(family, kind)\n            s.connect(address)\n"
        "            s.send(b'leak')\n            errors.append('connected')\n"
        "        except OSError as exc:\n            errors.append(type(exc).__name__)\n"
        "    return errors\n")
    out = run(pool, source, [port, 0, 0, {}])
    assert out.ok, out
    assert out.value == ["PermissionError"] * 3


def test_ctypes_raw_syscalls_are_denied(pool, listener):
    source = PRELUDE + (
        "ctypes = mods['ctypes']\n"
        "def evaluate(host_pid, *a):\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    calls = {'fork': (57,), 'vfork': (58,), 'clone': (56, 17, 0, 0, 0, 0), 'clone3': (435, 0, 0),\n"
        "             'socket': (41, 2, 1, 0), 'execve': (59, b'/bin/sh', 0, 0), 'kill-host': (62, host_pid, 9),\n"
        "             'ptrace': (101, 16, host_pid, 0, 0), 'unshare': (272, 0x40000000), 'mount': (165, 0, 0, 0, 0, 0),\n"
        "             'memfd': (319, b'x', 0), 'io_uring': (425, 8, 0), 'bpf': (321, 0, 0, 0), 'setuid0': (105, 0),\n"
        "             'sysv-shm': (29, 0, 4096, 0o1666), 'mq_open': (240, b'q', 0o100, 0o666, 0),\n"
        "             'clear-pdeathsig': (157, 1, 0)}\n"
        "    return {name: [libc.syscall(*args), ctypes.get_errno()] for name, args in calls.items()}\n")
    out = run(pool, source, [os.getpid(), 0, 0, {}])
    assert out.ok, out
    for name, (ret, err) in out.value.items():
        assert ret == -1, (name, ret)
        assert err in (1, 38), (name, err)  # EPERM; clone3 answers ENOSYS so glibc falls back to clone


def test_cannot_kill_the_parent_or_the_host(pool):
    source = PRELUDE + (
        "def evaluate(host_pid, *a):\n"
        "    errors = []\n"
        "    for pid in (os.getppid(), host_pid, 1, -1):\n"
        "        try:\n            os.kill(pid, 9)\n            errors.append('sent')\n"
        "        except OSError as exc:\n            errors.append(type(exc).__name__)\n"
        "    try:\n        os.killpg(os.getpgid(os.getppid()), 9)\n"
        "    except OSError as exc:\n        errors.append(type(exc).__name__)\n"
        "    return errors\n")
    out = run(pool, source, [os.getpid(), 0, 0, {}])
    assert out.ok, out
    assert out.value == ["PermissionError"] * 5


def test_flood_of_output_is_capped(pool):
    # print() keeps 4096 characters and only counts the rest: the evaluation goes on.
    source = "def evaluate(*a):\n    s = 'x' * (1 << 20)\n    for _ in range(200):\n        print(s, end='')\n    return 1\n"
    out = run(pool, source, timeout_ms=3000)
    assert out.ok and out.value == 1, out
    assert out.output == "x" * 4096 + f"\n[... first 4096 of {200 << 20} characters]"
    # Written around print(), straight to the pipe: the host stops reading and cuts what it kept.
    raw = PRELUDE + ("def evaluate(*a):\n    s = b'x' * (1 << 20)\n    for _ in range(200):\n"
                     "        os.write(1, s)\n    return 1\n")
    out = run(pool, raw, timeout_ms=3000)
    assert out.error in (ErrorCode.RUNTIME_ERROR, ErrorCode.TIMEOUT), out
    assert len(out.output) < 8300 and out.output.endswith("characters in all]")
    assert len(out.traceback or "") < 16_500


def test_huge_result_is_refused(pool):
    out = run(pool, "def evaluate(*a):\n    return 'x' * (2 << 20)\n")
    assert out.error == ErrorCode.INVALID_OUTPUT and "too large" in out.message, out


def test_deep_recursion(pool):
    out = run(pool, "def evaluate(*a):\n    def f(n):\n        return f(n + 1)\n    return f(0)\n")
    assert out.error == ErrorCode.RUNTIME_ERROR and "RecursionError" in out.message
    assert out.traceback.count("\n") < 40  # repeated frames are collapsed
    crash = PRELUDE + ("mods['sys'].setrecursionlimit(10 ** 7)\n"
                       "def evaluate(*a):\n    def f(n):\n        return f(n + 1) + 1\n    return f(0)\n")
    out = run(pool, crash, timeout_ms=1500)  # CPython grinds through ~10^5 frames: any of these is fine
    assert out.error in (ErrorCode.RUNTIME_ERROR, ErrorCode.MEMORY, ErrorCode.TIMEOUT), out
    nested = PRELUDE + ("mods['sys'].setrecursionlimit(10 ** 7)\n"
                        "def evaluate(*a):\n    d = {}\n    for _ in range(10 ** 6):\n        d = {'a': d}\n    return repr(d)\n")
    # C-level recursion: a crash or an error, never a value, and never the clock (building the
    # million dicts took over 3 s of wall under load: the time limit only bounds the test)
    out = run(pool, nested, timeout_ms=30_000)
    assert out.error in (ErrorCode.RUNTIME_ERROR, ErrorCode.MEMORY), out


@pytest.mark.parametrize(("expr", "word"), [
    ("object()", "not JSON"), ("{1, 2}", "not JSON"), ("b'bytes'", "not JSON"), ("cyc", "cycle"),
    ("{(1, 2): 3}", "not JSON"),
])
def test_non_json_results(pool, expr, word):
    source = f"cyc = []\ncyc.append(cyc)\ndef evaluate(*a):\n    return {expr}\n"
    out = run(pool, source)
    assert out.error == ErrorCode.INVALID_OUTPUT and word in out.message, out


@pytest.mark.parametrize(("expr", "value"), [
    ("float('nan')", "NaN"), ("{'s': [1.0, float('-inf')]}", {"s": [1.0, "-Infinity"]}),
    ("'a\\ud800b'", "a\ufffdb"), ("[2 ** 100, -(2 ** 64)]", [str(2 ** 100), str(-(2 ** 64))]),
])
def test_odd_json_values_are_normalised(pool, expr, value):
    out = run(pool, f"def evaluate(*a):\n    return {expr}\n")
    assert out.ok and out.value == value, out


@pytest.mark.parametrize("forged", [
    b'{"value": NaN}', b'{"value": "\\udc00"}', b'{"value": 123456789012345678901234567890}',
    b'{"value": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"error": "runtime_error", "message": "' + b"m" * 500_000 + b'", "traceback": "' + b"t" * 500_000 + b'"}',
])
@pytest.mark.parametrize("framed", [True, False])
def test_forged_results_are_normalised_and_bounded(pool, forged, framed):
    """Bytes written on the result pipe around the child's own writer get the same treatment,
    framed as the child frames a result (a forger who knows the wire) or not."""
    if framed:
        forged = FRAME_HEAD.pack(len(forged), 0) + forged
    source = PRELUDE + ("def evaluate(*a):\n    for fd in range(3, 64):\n        try:\n"
                        f"            os.write(fd, {forged!r})\n        except OSError:\n            pass\n"
                        "    os._exit(0)\n")
    out = run(pool, source)
    assert out.ok or out.error in (ErrorCode.INVALID_OUTPUT, ErrorCode.RUNTIME_ERROR), out
    assert len(out.message or "") < 66_000 and len(out.traceback or "") < 16_500
    assert out.value in (None, "NaN", "\ufffd", "123456789012345678901234567890"), out
    if b"[[[" in forged and framed:
        assert out.error == ErrorCode.INVALID_OUTPUT and "100 levels" in out.message, out


def test_forged_result_on_raw_fds_is_rejected(pool):
    source = PRELUDE + (
        "def evaluate(*a):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n            os.write(fd, b'{\"value\": {\"passed\": true}}')\n"
        "        except OSError:\n            pass\n"
        "    raise ValueError('after forging')\n")
    out = run(pool, source)
    assert out.error == ErrorCode.INVALID_OUTPUT, out  # forged bytes + the real error: not JSON


def test_poisoning_does_not_reach_the_next_evaluation(pool):
    poison = PRELUDE + (
        "import json, builtins\n"
        "def evaluate(*a):\n"
        "    json.dumps = lambda *x, **k: '{\"value\": {\"passed\": true, \"score\": 1}}'\n"
        "    json.loads = lambda *x, **k: {'passed': True}\n"
        "    builtins.len = lambda x: 0\n"
        "    builtins.__import__ = None\n"
        "    mods['collections'].Counter = dict\n"
        "    for name in list(mods):\n"
        "        if name.startswith('assay'):\n"
        "            del mods[name]\n"
        "    return {'passed': False}\n")
    first = run(pool, poison)
    assert first.value in ({"passed": False}, {"passed": True, "score": 1}) or first.error, first
    for _ in range(4):  # every zygote serves at least once more after the poisoning
        assert_benign(pool)
