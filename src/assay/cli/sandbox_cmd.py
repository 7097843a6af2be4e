"""Bodies of ``assay sandbox serve`` and ``assay sandbox setup``: read the settings, delegate to
``assay.sandbox_service`` and ``assay.sandbox.node.install``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import typer

from assay.core.errors import AssayError
from assay.settings import Settings

_WARM_PYTHON = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"
_WARM_NODE = "module.exports = () => ({ passed: true })"
_SHORT_SECRET = 16


def serve(host: str, port: int, workers: int | None, queue: int, max_body_bytes: int, max_code_bytes: int,
          insecure_no_secret: bool, log_level: str) -> int:
    """Run the sandbox service until interrupted; its sandbox's processes stop with it."""
    settings = Settings.from_env()
    secret = settings.sandbox_secret
    if secret is None and not insecure_no_secret:
        raise AssayError("SANDBOX_SECRET is not set: set it to a long random string (its clients send the same), "
                         "or pass --insecure-no-secret to let anyone who reaches the port run code")

    import uvicorn

    from assay.core.interfaces import CodeCall
    from assay.runner.sizing import local_sandbox_workers
    from assay.sandbox import SandboxRunner
    from assay.sandbox.doctor import diagnose
    from assay.sandbox_service import ServiceOptions, create_app
    if secret is not None and len(secret) < _SHORT_SECRET:
        typer.echo(f"warning: SANDBOX_SECRET is shorter than {_SHORT_SECRET} characters; use a long random one",
                   err=True)
    workers = local_sandbox_workers(workers or 0)
    options = ServiceOptions(secret=secret, workers=workers, queue=queue, max_body_bytes=max_body_bytes,
                             max_code_bytes=max_code_bytes, timeout_max_ms=settings.code_timeout_max_ms)
    report = diagnose(weak=settings.sandbox_allow_weak, node=settings.node_binary)
    runner = SandboxRunner(size=workers, weak=settings.sandbox_allow_weak, node=settings.node_binary,
                           locale=settings.locale)
    try:
        # Start every worker now (calls at once take one each), so that first requests do not pay for it.
        warm = [CodeCall("python", _WARM_PYTHON, [None, None, None, {}])] * workers
        if report["nodejs"]["can_run"]:
            warm += [CodeCall("nodejs", _WARM_NODE, [None, None, None, {}])] * workers
        with ThreadPoolExecutor(len(warm)) as threads:
            list(threads.map(runner.call, warm))
        langs = "; ".join(f"{lang}: {'can run' if report[lang]['can_run'] else 'REFUSES'} untrusted code"
                          for lang in ("python", "nodejs"))
        typer.echo(f"assay sandbox serve: http://{host}:{port} (POST /execute, GET /health; {workers} workers, "
                   f"queue {queue}; {langs}; "
                   f"{'bearer secret required' if secret else 'NO SECRET: anyone who reaches the port may run code'})",
                   err=True)
        if settings.sandbox_url:
            typer.echo("note: SANDBOX_URL is ignored here: this service runs code in its own local sandbox", err=True)
        uvicorn.run(create_app(options, runner, report), host=host, port=port, log_level=log_level,
                    access_log=log_level == "debug", timeout_graceful_shutdown=10, timeout_keep_alive=30)
    finally:
        runner.close()
    return 0


COMPILING = ("compiling the Node.js sandbox (isolated-vm, a native module built by npm), a few minutes "
             "on a first install…")
"""Said before the step that takes minutes (make serve's node-deps says the same)."""


def setup(per_user: bool) -> int:
    """Install the pinned Node.js modules for code evaluators and say where they went."""
    from assay.sandbox.node.install import choose_target, install, pinned_versions
    from assay.sandbox.node.runtime import NODE_MODULES, modules_dir

    settings = Settings.from_env()
    target = choose_target(per_user)
    typer.echo(f"installing the Node.js evaluator modules into {target / 'node_modules'} (npm): "
               f"{', '.join(pinned_versions())}", err=True)
    typer.echo(COMPILING, err=True)
    done = install(target, node=settings.node_binary, environ=settings.environ)
    typer.echo("installed: " + ", ".join(f"{name} {version}" for name, version in done.versions.items()))
    if done.warning:
        typer.echo(f"warning: {done.warning}", err=True)
    found = modules_dir()
    if found == NODE_MODULES and found != done.modules:
        typer.echo(f"note: this checkout's own {NODE_MODULES} (make node-deps) is found first", err=True)
    typer.echo("`assay doctor` reports whether Node.js evaluators can run")
    return 0
