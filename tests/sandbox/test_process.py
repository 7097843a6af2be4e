"""The program runner on its own: nothing a program starts outlives its grade, and a grade
returns by its deadline even when descendants hold the pipes open.

Each containment is tested: ``auto`` (a cgroup v2 group per run where this machine allows,
plus the subreaper launcher), ``reaper`` (the launcher alone, as where cgroups are missing)
and, for the time bound only, ``group`` (a process group, as on non-Linux systems)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from assay.core.interfaces import ProcessCall
from assay.sandbox._cgroup import find_parent
from assay.sandbox.process import LocalProcessRunner

PY = sys.executable
LINUX = sys.platform == "linux"
CONTAINED = ["auto", "reaper"]

# A process that records its pid and sleeps; its command line carries the test's marker.
SLEEPER = ("import os, sys, time, signal; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
           "open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(1000)")


@pytest.fixture
def marker(tmp_path):
    """A unique word for this test's processes, and a file where they write their pids."""
    word = f"assay-test-{uuid.uuid4().hex[:10]}"
    pids = tmp_path / "pids"
    yield word, str(pids)
    for pid in _marked(word):  # never leave a process behind, whatever the test found
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def sleeper(pids: str, word: str) -> str:
    return f"{PY} -c \"{SLEEPER}\" {pids} {word}"


def run(containment, argv, *, timeout=5.0, shell=False, stdin=None, cwd="/tmp"):
    runner = LocalProcessRunner(containment, environ=os.environ)
    call = ProcessCall(argv=argv, cwd=cwd, env=dict(os.environ), timeout_s=timeout, shell=shell, stdin=stdin)
    start = time.monotonic()
    out = runner.run(call)
    return out, time.monotonic() - start


def _marked(word: str) -> list[int]:
    """Live (not zombie) processes whose command line holds ``word``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if word.encode() not in fh.read():
                    continue
            with open(f"/proc/{name}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        found.append(int(name))
    return found


def assert_all_gone(word: str, pids: str, expected: int) -> None:
    recorded = [int(p) for p in open(pids).read().split()]
    assert len(recorded) >= expected, "the test's processes did not all start"
    assert _marked(word) == [], "a descendant survived the grade"
    # Not even a zombie is left: the launcher reaps what it kills.
    assert [p for p in recorded if os.path.exists(f"/proc/{p}")] == []


needs_linux = pytest.mark.skipif(not LINUX, reason="the subreaper launcher is Linux-only")


@needs_linux
@pytest.mark.parametrize("containment", CONTAINED)
def test_timeout_kills_a_descendant_that_called_setsid(containment, marker):
    word, pids = marker
    # The grandchild leaves the process group (setsid), ignores SIGTERM and keeps the pipes.
    script = f"setsid {sleeper(pids, word)} & {sleeper(pids, word)}"
    out, took = run(containment, [script], shell=True, timeout=1.0)  # time for both to start
    assert out.timed_out and took < 1.0 + 1.0
    assert_all_gone(word, pids, 2)


@needs_linux
@pytest.mark.parametrize("containment", CONTAINED)
def test_double_fork_orphan_is_killed_when_the_program_exits(containment, marker):
    word, pids = marker
    # A daemon-style double fork: the grandchild is orphaned and holds stdout open.
    code = ("import os, sys, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execv({PY!r}, [{PY!r}, '-c', {SLEEPER!r}, sys.argv[1], sys.argv[2]])\n"
            "    os._exit(0)\n"
            "os.wait()\n"
            "while not (os.path.exists(sys.argv[1]) and open(sys.argv[1]).read()):\n"
            "    time.sleep(0.01)\n"
            "print('main done', flush=True)\n")
    start = time.monotonic()
    out, took = run(containment, [PY, "-c", code, pids, word], timeout=20.0)
    assert (out.returncode, out.timed_out, out.stdout) == (0, False, b"main done\n")
    assert took < 5.0, "the grade waited on a pipe held by an orphan"
    assert_all_gone(word, pids, 1)
    assert time.monotonic() - start < 10


@needs_linux
@pytest.mark.parametrize("containment", CONTAINED)
def test_background_job_holding_the_pipes_does_not_hold_the_grade(containment, marker):
    word, pids = marker
    script = f"{sleeper(pids, word)} & while [ ! -s {pids} ]; do sleep 0.01; done; echo done"
    out, took = run(containment, [script], shell=True, timeout=20.0)
    assert (out.returncode, out.timed_out, out.stdout) == (0, False, b"done\n")
    assert took < 5.0
    assert_all_gone(word, pids, 1)


@needs_linux
@pytest.mark.parametrize("containment", CONTAINED)
def test_a_chain_of_forking_orphans_is_ended(containment, marker):
    word, pids = marker
    # The program forks and exits; each generation forks the next and exits in turn: a moving
    # target for a /proc sweep, which the launcher must still end.
    code = ("import os, sys, time\n"
            "open(sys.argv[1], 'a').write(f'{os.getpid()}\\n')\n"
            "while True:\n"
            "    time.sleep(0.005)\n"
            "    if os.fork():\n"
            "        os._exit(0)\n")
    out, took = run(containment, [PY, "-c", code, pids, word], timeout=0.5)
    assert took < 0.5 + 1.0 and os.path.exists(pids)
    time.sleep(0.05)
    assert _marked(word) == []


@needs_linux
def test_each_run_gets_its_own_cgroup_when_the_machine_allows(tmp_path):
    runner = LocalProcessRunner(environ=os.environ)
    parent = runner.cgroup_parent()
    if parent is None:
        pytest.skip("no writable cgroup v2 here: the launcher alone contains programs")
    out = runner.run(ProcessCall(argv=["cat", "/proc/self/cgroup"], cwd=str(tmp_path), env=dict(os.environ),
                                 timeout_s=5))
    line = next(x for x in out.stdout.decode().splitlines() if x.startswith("0::"))
    group = os.path.basename(line[3:])
    assert group.startswith(f"assay-{os.getpid()}-")
    assert not os.path.exists(os.path.join(parent, group)), "the run's cgroup is removed afterwards"


def test_a_process_group_alone_still_returns_in_time(marker):
    # Without the launcher a setsid() descendant escapes the group kill, but not the deadline.
    word, pids = marker
    out, took = run("group", [f"setsid {sleeper(pids, word)} & sleep 30"], shell=True, timeout=0.3)
    assert out.timed_out and took < 0.3 + 1.0


@pytest.mark.parametrize("containment", CONTAINED)
def test_concurrent_runs_keep_to_their_own(containment):
    runner = LocalProcessRunner(containment, environ=os.environ)

    def one(i: int):
        call = ProcessCall(argv=[f"sleep 5 & echo {i}"], cwd="/tmp", env=dict(os.environ), timeout_s=10, shell=True)
        return runner.run(call)

    with ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(one, range(16)))
    assert [o.stdout for o in outs] == [f"{i}\n".encode() for i in range(16)]
    assert all(o.returncode == 0 and not o.timed_out for o in outs)


@pytest.mark.parametrize("containment", ["group", *CONTAINED])
@pytest.mark.parametrize("script, code", [("exit 3", 3), ("kill -9 $$", -9), ("true", 0)])
def test_exit_codes(containment, script, code):
    out, _ = run(containment, [script], shell=True)
    assert (out.returncode, out.timed_out, out.spawn_error) == (code, False, None)


@pytest.mark.parametrize("containment", ["group", *CONTAINED])
def test_spawn_errors_name_the_errno(containment, tmp_path):
    out, _ = run(containment, ["no-such-program-assay-xyz"])
    assert out.spawn_error == "ENOENT" and out.spawn_message
    script = tmp_path / "not-executable"
    script.write_text("echo hi\n")
    out, _ = run(containment, [str(script)])
    assert out.spawn_error == "EACCES"


@pytest.mark.parametrize("containment", ["group", *CONTAINED])
def test_stdin_round_trip_and_unread_stdin(containment):
    data = os.urandom(300_000)  # more than both pipe buffers: reading and writing interleave
    out, _ = run(containment, ["cat"], stdin=data)
    assert out.stdout == data and out.returncode == 0
    out, took = run(containment, ["true"], stdin=data)  # never reads: no hang, no error
    assert out.returncode == 0 and took < 5


@pytest.mark.parametrize("containment", ["group", *CONTAINED])
def test_signals_python_ignores_are_restored_for_the_program(containment):
    out, _ = run(containment, ["grep SigIgn /proc/self/status"], shell=True)
    ignored = int(out.stdout.split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1))


def test_exit_is_polled_where_pidfd_is_missing(monkeypatch):
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    out, took = run("auto", ["echo hi; sleep 0.1"], shell=True)
    assert (out.returncode, out.stdout) == (0, b"hi\n") and took < 5
    out, took = run("auto", ["sleep 5"], shell=True, timeout=0.3)
    assert out.timed_out and took < 0.3 + 1.0


def test_output_caps():
    runner = LocalProcessRunner(environ=os.environ)
    call = ProcessCall(argv=["head -c 5000000 /dev/zero; head -c 200000 /dev/zero | tr '\\0' e >&2"],
                       cwd="/tmp", env=dict(os.environ), timeout_s=10, shell=True, stdout_limit=1024,
                       stderr_limit=2048)
    out = runner.run(call)
    assert (len(out.stdout), out.stdout_truncated) == (1024, True)
    assert (out.stderr, out.stderr_truncated) == (b"e" * 2048, True)


@needs_linux
def test_groups_left_by_a_dead_assay_are_removed():
    parent = find_parent()
    if parent is None:
        pytest.skip("no writable cgroup v2 here")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(parent, f"assay-{dead.pid}-0123456789ab")
    os.mkdir(stale)
    assert find_parent() == parent and not os.path.exists(stale)
