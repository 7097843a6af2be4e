"""`assay run` on a one-sample preset suite beside the floors it stands on, in one run.

Each command runs ``ROUNDS`` times, interleaved (every command once, then again), so that the
machine's load drifts over all of them alike; the figure is the median CPU time (user + system)
of the process, which the load disturbs less than the wall time, and the median wall time beside
it. The floors:

- ``python -c "import pydantic, yaml"``: the interpreter and the two libraries' import (pydantic
  imports its model machinery lazily, so this builds no model);
- the same, defining and validating one pydantic model: the price any program using pydantic
  models pays (its schema builder, its plugin loader and ``importlib.metadata``);
- the same with Typer and rich imported: the command-line and table libraries assay prints with.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 21
ONE_MODEL = "import pydantic, yaml\nclass M(pydantic.BaseModel):\n    x: int\nM(x=1)"
FRAMEWORKS = "import typer, rich.console, rich.table\n" + ONE_MODEL
SUITE = "name: one\ndataset: data.jsonl\ngraders:\n  - {type: contains, name: says-hello}\n"
ROW = '{"id": "a", "input": "hi", "output": "hello world", "expected": "hello"}\n'


def _timed(argv: list[str], cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=60)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(rounds: int = ROUNDS) -> list[tuple[str, float, float]]:
    """Rows of (what, median CPU s, median wall s), the floors first, assay's run last."""
    python, assay = sys.executable, str(Path(sys.executable).parent / "assay")
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "eval.yaml").write_text(SUITE, encoding="utf-8")
        Path(tmp, "data.jsonl").write_text(ROW, encoding="utf-8")
        commands = {
            'python -c "import pydantic, yaml"': [python, "-c", "import pydantic, yaml"],
            "+ one pydantic model defined and validated": [python, "-c", ONE_MODEL],
            "+ Typer and rich imported": [python, "-c", FRAMEWORKS],
            "assay --version": [assay, "--version"],
            "assay run, one sample, one preset grader": [assay, "run", "eval.yaml"],
        }
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                seen[name].append(_timed(argv, tmp))
    return [(name, statistics.median(c for _, c in runs), statistics.median(w for w, _ in runs))
            for name, runs in seen.items()]


def describe(rows: list[tuple[str, float, float]], rounds: int = ROUNDS) -> str:
    floor = rows[0][1]
    lines = [f"start-up: median of {rounds} interleaved runs each, load average {os.getloadavg()[0]:.1f}",
             f"{'':46} {'CPU s':>7} {'wall s':>7} {'over the floor':>15}"]
    lines += [f"{name:46} {cpu:7.3f} {wall:7.3f} {cpu - floor:+15.3f}" for name, cpu, wall in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
    print(describe(main(n), n))
