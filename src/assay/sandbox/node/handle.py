"""The host's side of one Node.js worker: start it confined, move lines in and out, kill it.

A worker is one ``node worker.js`` process. It is confined before ``node`` is exec'd: a new
network namespace, then ``confine.apply_in_child`` (rlimits without an address-space cap:
each isolate's heap limit bounds memory; Landlock read-only on the runtime's files; uid 65534;
seccomp without fork). The isolate inside it is the second boundary (``worker.js``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time

from assay.core.errors import AssayError
from assay.sandbox import confine
from assay.sandbox.node.runtime import NODE_DIR, NODE_MODULES, WORKER_JS, modules_dir, runtime_files
from assay.sandbox.process import pipe

MAX_RESPONSE_LINE_BYTES = 8 << 20
"""Bytes of one line from a worker before it is declared broken (its results are 1 MiB at most)."""
# Only what node needs to start; nothing of the host's environment (keys, tokens) goes along
# but the host's locale, which evaluators see through Intl (toLocaleString and the like).
_PATH = "/usr/local/bin:/usr/bin:/bin"
# The layers weak mode leaves out: the name reported in ``limits["layers"]`` (the probe's, as
# the Python sandbox reports them) and the name ``confine.Confinement.skip`` knows it by.
_SKIPPABLE = {"landlock": "landlock", "uid_drop": "uid", "seccomp": "seccomp"}
_STDERR_TAIL = 4096


class WorkerGone(AssayError):
    """The worker closed its output, wrote too much, or broke the protocol."""


class Confined:
    """How every worker of a pool is confined: the ``preexec_fn`` and the names of its layers.

    Built once per pool, before any fork: the seccomp program and the Landlock rules are
    prepared here, so the forked child only applies them. ``weak`` leaves out Landlock,
    seccomp and the uid drop (the isolate, the network namespace and the rlimits remain).
    ``modules`` is the ``node_modules`` the workers load (``runtime.modules_dir()``), readable by them.
    """

    def __init__(self, node: str, weak: bool) -> None:
        skip = frozenset(_SKIPPABLE.values()) if weak else frozenset()
        self._weak = weak
        self.modules = modules_dir() or NODE_MODULES
        self._conf = confine.Confinement(memory_bytes=None, block_exec=False,
                                         read_paths=runtime_files(node, self.modules), skip=skip)
        confine.prepare(self._conf)
        self.layers = ["isolate", "netns", "rlimits"] + [name for name, flag in _SKIPPABLE.items() if flag not in skip]

    def preexec(self) -> None:
        """Runs in the forked child before exec; a failure must not exec node unconfined, so it
        is reported on stdout (already the pipe) in the worker's own ready format."""
        try:
            if not confine.enter_network_namespace() and not self._weak:
                raise confine.ConfinementError("cannot enter a new network namespace")
            confine.apply_in_child(self._conf)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape into an exec
            os.write(1, json.dumps({"ready": False, "error": f"confinement failed: {exc}"}).encode() + b"\n")
            os._exit(70)


class Worker:
    """One ``node worker.js`` process, used by one thread at a time (the pool hands it out)."""

    def __init__(self, node: str, confined: Confined, locale: str = "C.UTF-8") -> None:
        self.layers = confined.layers
        self.calls = 0  # evaluations answered: the pool replaces the worker after its max_calls
        self.seq = 0  # the id of the last request (``session`` numbers them)
        self._buf = bytearray()
        env = {"PATH": _PATH, "LANG": locale}
        self.proc = subprocess.Popen(
            [node, "--max-old-space-size=256", str(WORKER_JS), str(confined.modules)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(NODE_DIR),
            start_new_session=True, preexec_fn=confined.preexec, close_fds=True)

    def send(self, line: bytes) -> None:
        """Write one request line (``line`` ends with a newline)."""
        try:
            stdin = pipe(self.proc.stdin)
            stdin.write(line)
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerGone(f"cannot write to the worker: {exc}") from None

    def read_line(self, deadline: float) -> bytes:
        """The next line the worker writes, without its newline; ``TimeoutError`` past ``deadline``."""
        fd = pipe(self.proc.stdout).fileno()
        while (nl := self._buf.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerGone(f"the worker exited (status {self.proc.poll()})")
            self._buf += chunk
            if len(self._buf) > MAX_RESPONSE_LINE_BYTES:
                raise WorkerGone("the worker's response is too large")
        line = bytes(self._buf[:nl])
        del self._buf[: nl + 1]
        return line

    def stderr_tail(self) -> str:
        """The end of what the worker wrote on stderr, once it has exited."""
        # Read only once the process is gone: while it runs nobody drains stderr (the worker
        # writes there only when it dies), so a blocking read could hang.
        if self.proc.poll() is None:
            return "(still running)"
        return pipe(self.proc.stderr).read(_STDERR_TAIL).decode(errors="replace").strip()[-1000:]

    def signal_kill(self) -> None:
        """SIGKILL the worker's process group, unless already reaped; the thread in its call
        sees its end and reaps it (``kill``)."""
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """SIGKILL the worker's process group, unless already reaped (its id may then be another's), and wait."""
        self.signal_kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                pipe(stream).close()
            except OSError:
                pass
        self.proc.wait()
