"""`assay graders` and `assay doctor`."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import orjson
from rich.table import Table

from assay.cli._console import make_console
from assay.core import registry


def show_graders(type_: str | None, as_json: bool) -> int:
    """The registered graders; third-party graders left out are listed after them (on stderr
    when stdout is JSON), so the listing itself says why a plugin's type is missing."""
    console = make_console()
    with warnings.catch_warnings():  # the listing reports them itself, once
        warnings.simplefilter("ignore", registry.GraderPluginWarning)
        graders = registry.all_graders()
    problems = registry.plugin_problems()
    if type_ is not None:
        cls = graders.get(type_)
        if cls is None:
            console.print(f"unknown grader type {type_!r}; known: {', '.join(graders)}", markup=False)
            _print_problems(problems, to_stderr=True)
            return 2
        graders = {type_: cls}
    rows: list[dict[str, Any]] = [{"type": key, "kind": cls.kind, "description": cls.description,
             "taxonomy": cls.taxonomy.model_dump(), "config_schema": cls.Config.model_json_schema(by_alias=True)}
            for key, cls in graders.items()]
    if as_json or type_ is not None:
        print(orjson.dumps(rows if as_json else rows[0], option=orjson.OPT_INDENT_2).decode())
        _print_problems(problems, to_stderr=True)
        return 0
    table = Table(title="registered graders", title_justify="left")
    for col in ("type", "kind", "cost", "description", "config fields"):
        table.add_column(col)
    for row in rows:
        props = row["config_schema"].get("properties", {})
        table.add_row(row["type"], row["kind"], row["taxonomy"]["cost"], row["description"], ", ".join(props))
    console.print(table)
    console.print("`assay graders TYPE` prints a grader's config JSON Schema; `--json` prints them all.")
    _print_problems(problems, to_stderr=False)
    return 0


def _print_problems(problems: list[registry.PluginProblem], *, to_stderr: bool) -> None:
    if not problems:
        return
    lines = [f"plugin problems: {len(problems)} third-party grader(s) left out"]
    lines += [f"  {problem}" for problem in problems]
    print("\n".join(lines), file=sys.stderr if to_stderr else sys.stdout)


def show_doctor(as_json: bool) -> int:
    """Ask the sandbox what this machine offers; exit 0 when untrusted code can run safely.

    The answer is for the sandbox the CLI would open: the same settings (weak mode, the
    Node.js executable), read once from the environment by ``Defaults``. With ``SANDBOX_URL``
    set, code runs in the sandbox service: it is asked too, and decides the exit status."""
    from assay.runner.resources import Defaults, describe_code_runner
    from assay.sandbox.doctor import diagnose

    settings = Defaults.settings()
    report = diagnose(weak=settings.sandbox_allow_weak, node=settings.node_binary)
    report["code_runner"] = {"kind": "remote" if settings.sandbox_url else "local",
                             "detail": describe_code_runner(settings)}
    report["grading"] = _grading_path()
    ok = report["python"]["can_run"]
    if settings.sandbox_url:
        from assay.sandbox.remote import RemoteCodeRunner

        with RemoteCodeRunner(settings.sandbox_url, settings.sandbox_secret) as remote:
            report["code_runner"]["service"] = remote.probe()
        ok = report["code_runner"]["service"]["can_run"]
    if as_json:
        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return 0 if ok else 1
    console = make_console()
    table = Table(title="isolation layers", title_justify="left")
    table.add_column("layer")
    table.add_column("available")
    table.add_column("detail")
    for name, layer in report["layers"].items():
        table.add_row(name, "yes" if layer["available"] else "NO", str(layer.get("detail", "")))
    console.print(table)
    for lang in ("python", "nodejs"):
        info = report[lang]
        state = "can run untrusted code" if info["can_run"] else "REFUSES untrusted code"
        console.print(f"{lang}: {state} — {info['detail']}", markup=False)
    if report.get("weak_mode"):
        console.print("ASSAY_SANDBOX_ALLOW_WEAK=1 is set: code evaluators run with missing layers", markup=False)
    console.print(f"code evaluators run in {report['code_runner']['detail']}", markup=False)
    service = report["code_runner"].get("service")
    if service is not None:
        console.print(f"sandbox service: {service['detail']}", markup=False)
        for lang in ("python", "nodejs") if service["health"] else ():
            info = service["health"].get(lang, {})
            state = "can run untrusted code" if info.get("canRun") else "REFUSES untrusted code"
            console.print(f"  its {lang}: {state} — {info.get('detail')}", markup=False)
    console.print(f"preset graders: {report['grading']['path']} path — {report['grading']['detail']}", markup=False)
    return 0 if ok else 1


def _grading_path() -> dict[str, str]:
    """Which path preset-only suites take here: columnar (pyarrow installed) or object."""
    from assay.runner.columnar import MIN_ROWS, path_in_use

    if path_in_use() == "columnar":
        return {"path": "columnar", "detail": f"pyarrow is installed: assay run grades suites of preset graders "
                                              f"column by column from {MIN_ROWS:,} samples"}
    return {"path": "object", "detail": "pyarrow is not installed (pip install 'assay[arrow]' for the columnar "
                                        "path and Parquet datasets)"}
