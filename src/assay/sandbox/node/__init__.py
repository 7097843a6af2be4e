"""Node.js code evaluators: a pool of persistent, OS-confined isolated-vm workers.

Each worker (``worker.js``) is one ``node`` process that runs evaluations one at a time, each
in a fresh isolated-vm context of a reused isolate (heap capped per call), and exchanges only
JSON text with it. The process itself is confined before ``node`` is exec'd: a new network
namespace, then ``confine.apply_in_child`` (rlimits without an address-space cap, Landlock
read-only on the runtime's files, uid 65534, seccomp without fork). Python keeps its own
watchdog: past ``timeout_ms`` plus a margin the worker's process group is killed and replaced.
Every response is untrusted text: it is parsed and normalised by ``sandbox.results`` (the
returned value exactly as a Python evaluator's is) and its messages are capped.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay.core.interfaces import CodeCall, CodeOutcome
from assay.core.result import ErrorCode
from assay.core.untrusted import cap_text
from assay.sandbox.results import MAX_OUTPUT, MAX_TRACEBACK, cap_message, load_json, refusal

NODE_DIR = Path(__file__).resolve().parent
WORKER_JS = NODE_DIR / "worker.js"
NODE_MODULES = NODE_DIR / "node_modules"
LIBRARIES = ("lodash", "dayjs", "validator", "ajv")
MAX_RESPONSE = 8 << 20  # bytes; the worker caps results at 1 MiB of JSON
_STATUS = {"timeout": ErrorCode.TIMEOUT, "memory": ErrorCode.MEMORY, "invalid_output": ErrorCode.INVALID_OUTPUT,
           "error": ErrorCode.RUNTIME_ERROR, "syntax": ErrorCode.RUNTIME_ERROR}
_NOT_INSTALLED = "Node.js evaluator dependencies are not installed: run `make node-deps`"


def node_binary() -> str | None:
    """The ``node`` executable (``ASSAY_NODE`` overrides ``PATH``), or None."""
    found = os.environ.get("ASSAY_NODE") or shutil.which("node")
    return os.path.realpath(found) if found and os.access(found, os.X_OK) else None


def hidden_from_others(path: Path) -> str | None:
    """The first directory on the way to ``path`` (or the file) that others may not enter or read."""
    import stat

    for part in [*reversed(path.parents), path]:
        try:
            mode = part.stat().st_mode
        except OSError:
            return str(part)
        need = stat.S_IXOTH if part != path else stat.S_IROTH
        if not mode & need:
            return str(part)
    return None


def _package_version(name: str) -> str | None:
    try:
        return json.loads((NODE_MODULES / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def probe() -> dict[str, Any]:
    """For ``assay doctor``: ``{node: version|None, modules: {name: version|None}, isolated_vm: bool}``.

    ``isolated_vm`` is True only when ``node`` actually loads the native addon.
    """
    node = node_binary()
    version = None
    ivm_ok = False
    if node:
        try:
            version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                     timeout=10).stdout.strip() or None
            ivm_ok = (NODE_MODULES / "isolated-vm").is_dir() and subprocess.run(
                [node, "-e", f"require({json.dumps(str(NODE_MODULES / 'isolated-vm'))})"],
                capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            pass
    return {"node": version, "modules": {m: _package_version(m) for m in LIBRARIES}, "isolated_vm": ivm_ok}


@lru_cache(maxsize=4)
def _runtime_files(node: str) -> tuple[str, ...]:
    """What the worker must read: node, its shared libraries, and this directory."""
    # openssl.cnf: node reads it at start-up and refuses to run when it cannot.
    paths = {node, str(NODE_DIR), "/etc/ld.so.cache", "/etc/ssl/openssl.cnf"}
    try:
        out = subprocess.run(["ldd", node], capture_output=True, text=True, timeout=10).stdout
        paths.update(m for m in re.findall(r"(/\S+\.so[\w.]*)", out))
    except (OSError, subprocess.TimeoutExpired):
        paths.update(p for p in ("/lib", "/lib64", "/usr/lib") if os.path.isdir(p))
    return tuple(sorted(p for p in paths if os.path.exists(p)))


class _Dead(Exception):
    """The worker closed its output or broke the protocol."""


class _Worker:
    """One ``node worker.js`` process, used by one thread at a time."""

    def __init__(self, node: str, preexec: Any, layers: list[str]) -> None:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8")}
        self.layers = layers
        self.calls = 0
        self._buf = bytearray()
        self._seq = 0
        self.proc = subprocess.Popen(
            [node, "--max-old-space-size=256", str(WORKER_JS)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(NODE_DIR),
            start_new_session=True, preexec_fn=preexec, close_fds=True)

    def wait_ready(self, deadline: float) -> str | None:
        """None when the worker is ready, else why it is not."""
        try:
            hello = json.loads(self._readline(deadline))
        except (_Dead, ValueError, TimeoutError) as exc:
            return f"the Node worker did not start ({exc or 'no answer'}): {self._stderr_tail()}"
        return None if hello.get("ready") else str(hello.get("error") or "the Node worker did not start")

    def _stderr_tail(self) -> str:
        # Read only once the process is gone: while it runs nobody drains stderr (the worker
        # writes there only when it dies), so a blocking read could hang.
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read(4096).decode(errors="replace").strip()[-1000:]

    def request(self, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        self._seq += 1
        payload["id"] = self._seq
        # ASCII with escapes: a lone surrogate in a sample reaches the evaluator as it is (as in
        # Python) instead of failing to encode as UTF-8.
        data = json.dumps(payload, allow_nan=False).encode() + b"\n"
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _Dead(f"cannot write to the worker: {exc}") from None
        try:
            response = load_json(self._readline(deadline))
        except ValueError as exc:  # TooDeep included: the worker's own envelope is flat
            raise _Dead(f"the worker wrote a malformed response ({str(exc).split(':')[0]})") from None
        if not isinstance(response, dict) or response.get("id") != self._seq:
            raise _Dead("the worker answered out of turn")
        return response

    def _readline(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while (nl := self._buf.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Dead(f"the worker exited (status {self.proc.poll()})")
            self._buf += chunk
            if len(self._buf) > MAX_RESPONSE:
                raise _Dead("the worker's response is too large")
        line = bytes(self._buf[:nl])
        del self._buf[: nl + 1]
        return line

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        self.proc.wait()


def _outcome(response: dict[str, Any], out: CodeOutcome) -> CodeOutcome:
    """``out`` completed from a worker's response: the value normalised, or the error capped."""
    status = response.get("status")
    if status == "ok":
        try:
            out.value = load_json(str(response.get("json")).encode())
        except ValueError as exc:
            out.error, out.message = ErrorCode.INVALID_OUTPUT, refusal(exc)
        return out
    out.error = ErrorCode(response["code"]) if "code" in response else _STATUS.get(status, ErrorCode.RUNTIME_ERROR)
    message = response.get("message")
    out.message = cap_message(message) if isinstance(message, str) and message else str(status)
    out.traceback = _text(response.get("stack"), MAX_TRACEBACK)
    return out


def _text(value: Any, limit: int) -> str | None:
    """A text field of a response, capped; None when absent or not text."""
    return cap_text(value, limit) if isinstance(value, str) and value else None


def _confinement(node: str, weak: bool) -> tuple[Any, list[str]]:
    """The ``preexec_fn`` for a worker and the names of the layers it applies."""
    try:
        from assay.sandbox import confine
    except ImportError:
        return None, ["isolate"]
    skip = frozenset({"landlock", "seccomp", "uid"}) if weak else frozenset()
    conf = confine.Confinement(memory_bytes=None, block_exec=False, read_paths=_runtime_files(node),
                               skip=skip)
    confine.prepare(conf)  # build the seccomp program and Landlock attrs before forking
    layers = ["isolate", "netns", "rlimits"] + [x for x in ("landlock", "uid", "seccomp") if x not in skip]

    def preexec() -> None:
        # Runs in the forked child before exec; a failure must not exec node unconfined,
        # so it is reported on stdout (already the pipe) in the worker's own ready format.
        try:
            if not confine.enter_network_namespace() and not weak:
                raise confine.ConfinementError("cannot enter a new network namespace")
            confine.apply_in_child(conf)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape into an exec
            os.write(1, json.dumps({"ready": False, "error": f"confinement failed: {exc}"}).encode() + b"\n")
            os._exit(70)

    return preexec, layers


class NodePool:
    """Runs Node.js evaluators (``CodeCall`` with ``language="nodejs"``) in persistent workers.

    Thread-safe: up to ``size`` calls run at once (default: the number of cores), the rest
    wait for a worker. Workers start lazily and are replaced after ``max_calls`` evaluations,
    a crash or a watchdog kill. ``weak=True`` (or ``ASSAY_SANDBOX_ALLOW_WEAK=1``) runs the
    worker without Landlock, seccomp and the uid drop; only the isolate and netns remain.
    """

    def __init__(self, size: int | None = None, *, max_calls: int = 500, margin_s: float = 2.0,
                 startup_s: float = 15.0, weak: bool | None = None) -> None:
        self.size = max(1, size or os.cpu_count() or 1)
        self.max_calls = max_calls
        self.margin_s = margin_s
        self.startup_s = startup_s
        self.weak = os.environ.get("ASSAY_SANDBOX_ALLOW_WEAK") == "1" if weak is None else weak
        self._idle: list[_Worker] = []
        self._live = 0
        self._closed = False
        self._cond = threading.Condition()
        self._preexec: tuple[Any, list[str]] | None = None
        ref = weakref.ref(self)
        atexit.register(lambda: (p := ref()) is not None and p.close())

    # -- public contract ---------------------------------------------------------------
    def call(self, request: CodeCall) -> CodeOutcome:
        """Run ``request.function`` from ``request.source`` with ``request.args``; never raises."""
        limits = {"timeout_ms": request.timeout_ms, "memory_mb": request.memory_mb, "layers": []}
        if request.language != "nodejs":
            return CodeOutcome(error=ErrorCode.INVALID_CONFIG, limits=limits,
                               message=f"NodePool runs nodejs evaluators, not {request.language}")
        payload = {"op": "call", "source": request.source, "function": request.function,
                   "args": list(request.args), "timeout_ms": request.timeout_ms, "memory_mb": request.memory_mb}
        try:
            json.dumps(payload["args"], allow_nan=False)
        except (TypeError, ValueError) as exc:
            return CodeOutcome(error=ErrorCode.INVALID_CONFIG, message=f"arguments are not JSON: {exc}", limits=limits)
        response, elapsed, layers = self._roundtrip(payload, request.timeout_ms / 1000)
        limits["layers"] = layers
        return _outcome(response, CodeOutcome(duration_ms=elapsed, limits=limits,
                                              output=_text(response.get("output"), MAX_OUTPUT)))

    def check(self, language: str, source: str, function: str = "evaluate") -> str | None:
        """None when ``source`` compiles and exports ``function``; else the problem, with its line.

        The module's top level runs (bounded, in the sandbox) so that ``module.exports`` is known.
        """
        if language != "nodejs":
            return f"NodePool checks nodejs evaluators, not {language}"
        response, _, _ = self._roundtrip({"op": "check", "source": source, "function": function,
                                          "timeout_ms": 2000, "memory_mb": 128}, 2.0)
        status = response.get("status")
        if status == "ok" or response.get("code") == "unavailable":
            return None  # unavailable: nothing to say about the code; calls will report it
        message = str(response.get("message") or status)
        if status == "syntax":
            m = re.search(r"^(.*?)\s*\[evaluator\.js:(\d+):(\d+)\]$", message, re.S)
            return f"SyntaxError at line {m[2]}, column {m[3]}: {m[1]}" if m else f"SyntaxError: {message}"
        return message

    def close(self) -> None:
        """Stop every worker (idle now, busy ones as soon as their call returns)."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()

    def __enter__(self) -> NodePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------
    def _roundtrip(self, payload: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], float, list[str]]:
        """Send one request to a worker; return (response, ms, layers). Failures become responses."""
        node = node_binary()
        if node is None:
            return {"status": "x", "code": "unavailable",
                    "message": "node is not installed: Node.js evaluators are unavailable"}, 0.0, []
        if not (NODE_MODULES / "isolated-vm").is_dir() or not all((NODE_MODULES / m).is_dir() for m in LIBRARIES):
            return {"status": "x", "code": "unavailable", "message": _NOT_INSTALLED}, 0.0, []
        worker = self._acquire(node)
        if isinstance(worker, str):
            return {"status": "x", "code": "unavailable", "message": worker}, 0.0, []
        keep = False
        start = time.monotonic()
        try:
            response = worker.request(payload, start + timeout_s + self.margin_s)
            worker.calls += 1
            keep = worker.calls < self.max_calls
        except TimeoutError:
            response = {"status": "timeout",
                        "message": f"the evaluation ran past {int(timeout_s * 1000)} ms (worker killed)"}
        except (_Dead, ValueError) as exc:
            response = {"status": "error", "message": f"the Node worker failed: {exc}"}
        finally:
            self._release(worker, keep)
        return response, (time.monotonic() - start) * 1000, worker.layers

    def _acquire(self, node: str) -> _Worker | str:
        with self._cond:
            while True:
                if self._closed:
                    return "the Node pool is closed"
                if self._idle:
                    return self._idle.pop()
                if self._live < self.size:
                    self._live += 1
                    break
                self._cond.wait()
        try:
            if self._preexec is None:
                self._preexec = _confinement(node, self.weak)
            worker = _Worker(node, *self._preexec)
        except OSError as exc:
            self._release(None, False)
            return f"cannot start node: {exc}"
        problem = worker.wait_ready(time.monotonic() + self.startup_s)
        if problem is not None:
            self._release(worker, False)
            hidden = None if self.weak else hidden_from_others(WORKER_JS)
            if hidden:
                problem += f"; the worker runs as uid 65534 and cannot read {hidden}: put the checkout " \
                           "where every directory is world-readable (chmod o+rx)"
            return problem + ("" if "node_modules" not in problem else f"; {_NOT_INSTALLED}")
        return worker

    def _release(self, worker: _Worker | None, keep: bool) -> None:
        with self._cond:
            keep = keep and worker is not None and not self._closed
            if keep:
                self._idle.append(worker)
            else:
                self._live -= 1
            self._cond.notify()
        if worker is not None and not keep:
            worker.kill()

__all__ = ["NodePool", "probe", "node_binary", "LIBRARIES"]
