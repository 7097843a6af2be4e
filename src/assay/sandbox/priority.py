"""CPU priority of sandboxed code that runs long (both sandboxes).

A server's sandbox has more workers than cores, so that code sleeping or blocked does not keep
a worker from other users. Code that computes competes for the cores instead: a busy loop of one
user would slow every other user's evaluation, and the server itself. So the host lowers the
CPU priority of an evaluation's process group once it has run ``demote_after_s`` (a pool's
option; the service's pools use ``DEMOTE_AFTER_S``; a CLI run's, never) to nice
``DEMOTED_NICE``, every thread of it. Short evaluations, such as a test in the editor, then
take a core ahead of it within a scheduler tick, and a long one still gets every cycle nobody
else wants. Its time limit is unchanged (the wall-clock deadline, and ``RLIMIT_CPU``).

A Python child is used once, so it is never raised again; a Node.js worker serves many
evaluations and is raised back after a long one to the host's own nice value (0 unless the
server was started under ``nice``: a worker is never raised above the process that runs it)
(``restore``), or replaced when this process may not raise priorities.
"""

from __future__ import annotations

import os

DEMOTE_AFTER_S = 0.05
"""The service's ``demote_after_s``: wall time an evaluation (or a chunk of a batch on one
worker) runs at normal priority, far beyond a one-line evaluator's few milliseconds."""
DEMOTED_NICE = 19
"""The lowest priority: a nice-0 task gets about 98% of a core it shares with one at 19."""


def demote(group: int) -> None:
    """Every thread of process group ``group`` to nice ``DEMOTED_NICE`` (nothing when it is gone)."""
    _set(group, DEMOTED_NICE)


def restore(group: int) -> bool:
    """Every thread of process group ``group`` back to this process's own nice value; False when
    not allowed (without ``CAP_SYS_NICE`` a priority cannot be raised) or when the group is gone."""
    return _set(group, os.getpriority(os.PRIO_PROCESS, 0))


def _set(group: int, nice: int) -> bool:
    try:
        os.setpriority(os.PRIO_PGRP, group, nice)  # every thread of every process of the group
    except OSError:
        return False
    return True
