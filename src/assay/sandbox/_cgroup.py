"""One cgroup v2 group per program run, where the kernel can end a whole process tree at once
(``cgroup.kill``, Linux 5.14+), fork loops included.

Groups are made under the cgroup this process is in, which must be writable (root in a
container, or a delegated systemd unit); where it is not, :func:`find_parent` returns None
and programs are contained by the launcher's /proc sweep alone.
"""

from __future__ import annotations

import os
import re
import time
import uuid

_KILL_WAIT_S = 0.2


def find_parent() -> str | None:
    """The directory of this process's own cgroup v2 group, when children can be made, joined
    and killed there; else None."""
    try:
        path = _own_cgroup_dir()
    except (OSError, ValueError):
        return None
    if path is None or not os.access(os.path.join(path, "cgroup.procs"), os.W_OK):
        return None
    probe = make_group(path)
    if probe is None:
        return None
    _remove_stale(path)
    usable = (os.path.exists(os.path.join(probe, "cgroup.kill"))
              and os.access(os.path.join(probe, "cgroup.procs"), os.W_OK))
    remove_group(probe)
    return path if usable else None


def make_group(parent: str) -> str | None:
    """A new, empty group under ``parent``, or None when it cannot be made."""
    path = os.path.join(parent, f"assay-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    return path


def kill_group(path: str) -> None:
    """SIGKILL every process in the group (and in groups under it)."""
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as fh:
            fh.write("1")
    except OSError:
        pass


def remove_group(path: str) -> None:
    """Kill what is left in the group and remove it; a group that stays busy is left behind."""
    kill_group(path)
    deadline = time.monotonic() + _KILL_WAIT_S
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.005)


def _remove_stale(parent: str) -> None:
    # Groups left by an assay process that died (it could not remove its own): empty ones go.
    for name in os.listdir(parent):
        owner = name.split("-")[1] if name.startswith("assay-") and name.count("-") == 2 else ""
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass


def _own_cgroup_dir() -> str | None:
    with open("/proc/self/cgroup") as fh:
        own = next((line.rstrip("\n")[3:] for line in fh if line.startswith("0::")), None)
    if own is None:
        return None
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields, _, rest = line.partition(" - ")
            if rest.split(" ", 1)[0] != "cgroup2":
                continue
            root, mount_point = (_unescape(f) for f in fields.split()[3:5])
            relative = os.path.relpath(own, root)
            if relative == ".." or relative.startswith("../"):
                continue  # our group is not visible through this mount
            return os.path.normpath(os.path.join(mount_point, relative))
    return None


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as octal escapes (\040).
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)
