"""Start-up: `assay run` of a small preset suite imports nothing heavy that it does not use.

The figures (assay's start-up beside `python -c "import pydantic, yaml"`) are measured by
`make bench` (bench/startup.py), not here: this test holds the cause, the imports, which do not
drift with the machine's load.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import orjson
import yaml

from tests.suite_files import write

LIGHT = {"assay", "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection",
         "yaml", "_yaml", "orjson", "re2", "typer", "click", "shellingham", "annotated_doc", "rich", "colorama"}
"""Third-party packages a plain run may load: its models, its YAML and JSON, the regex grader's RE2,
its command line and its table."""


def write_suite(tmp: Path, graders: list[dict], rows: list[dict]) -> Path:
    suite = {"name": "small", "dataset": "data.jsonl", "graders": graders}
    return write(tmp, {"eval.yaml": yaml.safe_dump(suite),
                       "data.jsonl": "".join(orjson.dumps(row).decode() + "\n" for row in rows)})


def imported_packages(*argv: str, cwd: Path) -> set[str]:
    """Top-level packages that ``assay *argv`` imports beyond what the interpreter's own start
    imports (``site``, ``sitecustomize``...), from ``python -X importtime``."""
    return _imported(["-m", "assay.cli.entry", *argv], cwd) - _imported(["-c", "pass"], cwd)


def _imported(args: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+([\w.]+)$", proc.stderr, re.M)
    assert names, proc.stderr[-2000:]
    return {name.split(".")[0] for name in names}


def test_a_small_preset_run_imports_only_what_it_uses(tmp_path):
    suite = write_suite(tmp_path, graders=[{"type": "contains", "name": "says-hello"},
                                           {"type": "regex", "name": "no-sorry", "config": {"must_not_match": ["sorry"]}}],
                        rows=[{"id": "a", "input": "hi", "output": "hello there", "expected": "hello"}])
    loaded = imported_packages("run", str(suite), cwd=tmp_path)
    third_party = {name for name in loaded  # (importtime also lists probes that find nothing, e.g. org)
                   if name not in sys.stdlib_module_names and not name.startswith("_") and find_spec(name)}
    assert third_party <= LIGHT, f"a one-sample preset run imported {sorted(third_party - LIGHT)}"
    assert "assay" in loaded and "numpy" not in loaded


def test_a_command_builds_only_itself(tmp_path):
    """`assay run` does not read the options of the service's commands (their modules stay unloaded)."""
    suite = write_suite(tmp_path, graders=[{"type": "contains", "name": "says-hello"}],
                        rows=[{"id": "a", "output": "hello", "expected": "hello"}])
    proc = subprocess.run([sys.executable, "-c", (
        "import sys, typer.main\n"
        "seen = []\n"
        "real = typer.main.get_params_from_function\n"
        "def spy(fn):\n"
        "    seen.append(fn.__name__)\n"
        "    return real(fn)\n"
        "typer.main.get_params_from_function = spy\n"
        f"sys.argv = ['assay', 'run', {str(suite)!r}]\n"
        "from assay.cli import main\n"
        "try:\n"
        "    main.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('SEEN', sorted(set(seen)), file=sys.stderr)\n")], capture_output=True, text=True, timeout=120)
    seen = re.search(r"SEEN (\[.*\])", proc.stderr)
    assert seen, proc.stderr[-2000:]
    assert "serve" not in seen.group(1) and "'run'" in seen.group(1), seen.group(1)
