"""The ``assay`` command's entry point: answers ``--version`` before importing anything heavy,
then hands over to the Typer app in ``assay.cli.main``, and ends the process without the
interpreter's teardown once the command is done."""

from __future__ import annotations

import sys
from typing import NoReturn


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from assay import __version__

        print(f"assay {__version__}")
        return
    from assay.cli.main import main as run

    try:
        run()
    except SystemExit as stop:
        _leave(stop.code)
    _leave(0)


def _leave(code: str | int | None) -> NoReturn:
    """Exit with ``code`` as ``sys.exit`` would, skipping the interpreter's teardown.

    The teardown frees every object of every imported module one by one, about a tenth of the
    CPU of a short preset run. It is skipped only once everything a normal exit would finish is
    finished: the exit handlers run (logging, temporary files, sandboxes), the streams are
    flushed, and no thread but this one is still running; otherwise the exit is the normal one.
    """
    import atexit
    import os
    import threading

    running = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if running:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message") prints it and exits with 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the normal exit report it as it does
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    main()
