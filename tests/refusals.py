"""What a refused command looks like to its user, shared by the tests that run the installed
``assay``: exit 2 and one ``error:`` line naming what was wrong and where, never a traceback."""

from __future__ import annotations

import subprocess


def refused(done: subprocess.CompletedProcess[str], *named: str) -> str:
    """The command exited 2 with an ``error:`` line naming each of ``named``; that line."""
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    for word in named:
        assert word in errors[0], (word, errors[0])
    return errors[0]
