"""`assay graders` and `assay doctor`."""

from __future__ import annotations

import orjson
from rich.table import Table

from assay.cli._console import make_console
from assay.core import registry


def show_graders(type_: str | None, as_json: bool) -> int:
    console = make_console()
    graders = registry.all_graders()
    if type_ is not None:
        cls = graders.get(type_)
        if cls is None:
            console.print(f"unknown grader type {type_!r}; known: {', '.join(graders)}", markup=False)
            return 2
        graders = {type_: cls}
    rows = [{"type": key, "kind": cls.kind, "description": cls.description,
             "taxonomy": cls.taxonomy.model_dump(), "config_schema": cls.Config.model_json_schema(by_alias=True)}
            for key, cls in graders.items()]
    if as_json or type_ is not None:
        print(orjson.dumps(rows if as_json else rows[0], option=orjson.OPT_INDENT_2).decode())
        return 0
    table = Table(title="registered graders", title_justify="left")
    for col in ("type", "kind", "cost", "description", "config fields"):
        table.add_column(col)
    for row in rows:
        props = row["config_schema"].get("properties", {})
        table.add_row(row["type"], row["kind"], row["taxonomy"]["cost"], row["description"], ", ".join(props))
    console.print(table)
    console.print("`assay graders TYPE` prints a grader's config JSON Schema; `--json` prints them all.")
    return 0


def show_doctor(as_json: bool) -> int:
    """Ask the sandbox what this machine offers; exit 0 when untrusted code can run safely."""
    from assay.sandbox.doctor import diagnose

    report = diagnose()
    if as_json:
        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return 0 if report["python"]["can_run"] else 1
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
    return 0 if report["python"]["can_run"] else 1
