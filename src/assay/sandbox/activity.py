"""What a confined process was doing when its deadline passed, for a timeout's reason: read
from ``/proc`` by the host before it kills the process (both sandboxes)."""

from __future__ import annotations

import os

from assay.core.messages import Phrase, Said

RUNNING = Phrase("sandbox.doing.running", "running")
BLOCKED = Phrase("sandbox.doing.blocked", "blocked")
IN_SYSCALL = Phrase("sandbox.doing.syscall", "blocked (in a system call)")
_SLEEPING = Phrase("sandbox.doing.sleeping", "sleeping (waiting on a timer)")()
_WAITING = Phrase("sandbox.doing.waiting", "waiting on a timer or input ({how})")
_POLL, _SELECT = _WAITING(how="poll"), _WAITING(how="select")
_LOOP = Phrase("sandbox.doing.event_loop", "waiting on a timer or input (an event loop)")()
# What a thread waits on, by the system call it sleeps in (x86-64 numbers, /proc/<pid>/syscall).
_WAITS = {35: _SLEEPING, 230: _SLEEPING, 7: _POLL, 23: _SELECT, 270: _SELECT, 271: _POLL,
          232: _LOOP, 281: _LOOP, 441: _LOOP,
          202: Phrase("sandbox.doing.lock", "blocked (waiting on a lock or another thread)")(),
          0: Phrase("sandbox.doing.reading", "blocked (reading input)")(),
          1: Phrase("sandbox.doing.writing", "blocked (writing output)")()}

def activity(pid: int) -> Said | None:
    """What the process ``pid`` is doing, read from ``/proc``: "running" when one of its threads
    is on a CPU or ready to be, else what its main thread waits on; None when unreadable."""
    try:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as fh:
                states.append(fh.read().rsplit(b")", 1)[1].split()[0])
        if b"R" in states:
            return RUNNING()
        with open(f"/proc/{pid}/syscall", "rb") as fh:
            call = fh.read().split()
    except (OSError, IndexError):
        return None
    if not call or not call[0].lstrip(b"-").isdigit():
        return RUNNING() if call and call[0] == b"running" else BLOCKED()
    return _WAITS.get(int(call[0])) or IN_SYSCALL()
