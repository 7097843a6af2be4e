"""What a confined process was doing when its deadline passed, for a timeout's reason: read
from ``/proc`` by the host before it kills the process (both sandboxes)."""

from __future__ import annotations

import os

# What a thread waits on, by the system call it sleeps in (x86-64 numbers, /proc/<pid>/syscall).
_WAITS = {35: "sleeping (waiting on a timer)", 230: "sleeping (waiting on a timer)",
          7: "waiting on a timer or input (poll)", 23: "waiting on a timer or input (select)",
          270: "waiting on a timer or input (select)", 271: "waiting on a timer or input (poll)",
          232: "waiting on a timer or input (an event loop)", 281: "waiting on a timer or input (an event loop)",
          441: "waiting on a timer or input (an event loop)",
          202: "blocked (waiting on a lock or another thread)", 0: "blocked (reading input)",
          1: "blocked (writing output)"}


def activity(pid: int) -> str | None:
    """What the process ``pid`` is doing, read from ``/proc``: "running" when one of its threads
    is on a CPU or ready to be, else what its main thread waits on; None when unreadable."""
    try:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as fh:
                states.append(fh.read().rsplit(b")", 1)[1].split()[0])
        if b"R" in states:
            return "running"
        with open(f"/proc/{pid}/syscall", "rb") as fh:
            call = fh.read().split()
    except (OSError, IndexError):
        return None
    if not call or not call[0].lstrip(b"-").isdigit():
        return "running" if call and call[0] == b"running" else "blocked"
    return _WAITS.get(int(call[0]), "blocked (in a system call)")
