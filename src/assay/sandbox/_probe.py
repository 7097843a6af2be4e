"""Try each confinement layer in a throwaway child and report what works (``assay doctor``)."""

from __future__ import annotations

import json
import os
import resource
import socket
from collections.abc import Callable

from assay.sandbox import _landlock, _seccomp
from assay.sandbox.confine import Confinement, apply_in_child, enter_network_namespace, prepare

_PROBE = Confinement(memory_bytes=None, drop_to_uid=65534)


def probe() -> dict[str, dict]:
    """Run the probes in a forked child (layers are irreversible) and collect the answers."""
    prepare(_PROBE)
    prepare(Confinement(memory_bytes=None, skip=frozenset({"landlock", "uid"})))
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.close(read_fd)
            os.write(write_fd, json.dumps(_probe_in_child()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks = []
    with os.fdopen(read_fd, "rb") as fh:
        chunks.append(fh.read())
    os.waitpid(pid, 0)
    try:
        layers = json.loads(b"".join(chunks))
    except ValueError:
        layers = {name: {"available": False, "detail": "probe process failed"}
                  for name in ("netns", "rlimits", "landlock", "uid_drop", "seccomp")}
    layers["cgroups"] = _cgroups()
    return layers


def _probe_in_child() -> dict[str, dict]:
    out: dict[str, dict] = {}
    ok = enter_network_namespace()
    out["netns"] = {"available": ok, "detail": "new empty network namespace per zygote" if ok
                    else "unshare(CLONE_NEWNET) refused (needs root or user namespaces)"}
    try:
        resource.setrlimit(resource.RLIMIT_AS, (2**40, 2**40))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        out["rlimits"] = {"available": True, "detail": "AS, CPU, NOFILE, FSIZE, CORE"}
    except (OSError, ValueError) as exc:
        out["rlimits"] = {"available": False, "detail": str(exc)}
    abi = _landlock.abi_version()
    out["landlock"] = {"available": False, "detail": "not offered by this kernel"}
    out["uid_drop"] = {"available": os.geteuid() != 0,
                       "detail": f"already unprivileged (uid {os.geteuid()})"}
    try:
        skip = frozenset() if abi else frozenset({"landlock"})
        apply_in_child(Confinement(memory_bytes=None, skip=skip | {"seccomp"}))
        if abi:
            out["landlock"] = {"available": _denied(lambda: open("/etc/hostname", "rb")),
                               "detail": f"ABI {abi}: files" + (", TCP" if abi >= 4 else "")
                               + (", signal and abstract-socket scoping" if abi >= 6 else "")}
        if os.getuid() == 65534:
            out["uid_drop"] = {"available": True, "detail": "root drops to uid 65534 (nobody)"}
    except Exception as exc:  # noqa: BLE001 - the probe reports, it does not fail
        out["landlock"]["detail"] = f"ABI {abi}, but applying failed: {exc}"
    if not _seccomp.supported():
        out["seccomp"] = {"available": False, "detail": "filter is written for x86-64 only"}
        return out
    try:
        apply_in_child(Confinement(memory_bytes=None, skip=frozenset({"landlock", "uid"})))
        blocked = _denied(os.fork) and _denied(lambda: socket.socket(socket.AF_INET))
        out["seccomp"] = {"available": blocked, "detail": "deny-list installed; fork and sockets refused"
                          if blocked else "filter installed but fork or socket still allowed"}
    except Exception as exc:  # noqa: BLE001
        out["seccomp"] = {"available": False, "detail": str(exc)}
    return out


def _denied(action: Callable[[], object]) -> bool:
    try:
        result = action()
    except PermissionError:
        return True
    if isinstance(result, int) and result == 0:  # pragma: no cover - a forked probe child
        os._exit(0)
    return False


def _cgroups() -> dict:
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as fh:
            controllers = fh.read().split()
        v2 = True
    except OSError:
        controllers, v2 = [], False
    memory = "memory" in controllers or os.path.isdir("/sys/fs/cgroup/memory")
    detail = ("v2" if v2 else "v1") + (" with a memory controller" if memory else ", no memory controller")
    return {"available": memory, "detail": detail + " (optional: RLIMIT_AS bounds memory)"}
