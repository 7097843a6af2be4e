"""Run the local judge in this process: llama.cpp's server (``xllamacpp.Server``, its own HTTP
threads) with the bundled model, on 127.0.0.1, until ``stop`` is set.

Settings that make it usable on a small, shared machine: OpenMP's threads sleep when idle
(``OMP_WAIT_POLICY=passive``; spinning, they starve every other process: 1.5–4.6 tokens/s
instead of 30–63 under load), two threads by default, and a context split among a few
parallel slots so that several judge calls decode together.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from assay.judges.local.find import MODEL_NAME, LocalJudgeMissing, check_server, model_path

TOY_WARNING = ("a toy judge (SmolLM2-135M, a 135-million-parameter model): for trying assay out and for tests, "
               "not for real grading")


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """How the server runs: ``threads`` for decoding and for prompts, ``context`` tokens in
    all, shared by ``parallel`` slots (calls decoded at once; more wait), and where it listens
    (port 0: a free one)."""

    threads: int = 2
    context: int = 8192
    parallel: int = 4
    host: str = "127.0.0.1"
    port: int = 0


def serve(options: LocalOptions, *, announce: Callable[[str], None], stop: threading.Event) -> None:
    """Load the model, call ``announce`` with the endpoint's base URL (``http://HOST:PORT/v1``),
    serve until ``stop`` is set, then stop the server. LocalJudgeMissing when a part is missing."""
    check_server()
    path = model_path()
    # Read by OpenMP when the server's library loads (below), from the C environment: the
    # process's own settings are not consulted, and the server must not spin whatever they say.
    os.putenv("OMP_WAIT_POLICY", "passive")
    try:
        import xllamacpp
    except ImportError as exc:  # installed, but its native library cannot load (a missing libgomp)
        raise LocalJudgeMissing(f"the local judge's server (xllamacpp) cannot be loaded: {exc}") from None

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {MODEL_NAME}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_ctx = options.context
    params.n_parallel = options.parallel
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.verbosity = -1
    server = xllamacpp.Server(params)
    try:
        announce(server.listening_address.rstrip("/") + "/v1")
        # A timed wait: a signal the kernel hands to one of the server's threads runs its Python
        # handler only when the main thread next wakes, and an untimed wait never does.
        while not stop.wait(0.2):
            pass
    finally:
        del server  # its destructor stops the HTTP threads and frees the model
