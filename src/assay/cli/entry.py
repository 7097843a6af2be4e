"""The ``assay`` command's entry point: answers ``--version`` before importing anything heavy,
then hands over to the Typer app in ``assay.cli.main``."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from assay import __version__

        print(f"assay {__version__}")
        return
    from assay.cli.main import main as run

    run()


if __name__ == "__main__":
    main()
