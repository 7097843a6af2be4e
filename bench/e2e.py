"""`assay run` wall-clock on a 2,000-case suite, start-up included, as a user runs it, beside
promptfoo grading the same cases with the same four assertions in the same run.

promptfoo runs when it is installed (``PROMPTFOO`` names its executable, else
``bench/node_modules/.bin/promptfoo`` or ``promptfoo`` on PATH; ``npm install --prefix bench
--no-package-lock promptfoo@0.121.20``, the last release that runs on Node.js 20, provides it:
about 1.3 GB). Its ``echo`` provider returns each case's output, so only the grading is
compared, and both tools must pass the same 666 of the 2,000 cases. Without promptfoo the last
recorded figure is printed, and said to be.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from presets import make_text, mutate  # noqa: E402

SUITE = """\
name: e2e-2000
dataset: data.jsonl
graders:
  - {type: exact_match, name: equals}
  - {type: contains, name: contains}
  - {type: regex, name: regex, config: {pattern: "(?:capital|首都)\\\\s*\\\\S+", flags: i}}
  - {type: similarity, name: levenshtein, config: {algorithm: levenshtein, threshold: 0.8}}
"""


def write_suite(folder: Path, n: int = 2000) -> Path:
    rng = random.Random(3)
    with (folder / "data.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            out = make_text(rng, rng.randint(20, 400))
            exp = out if rng.random() < 0.5 else mutate(rng, out)
            fh.write(json.dumps({"id": f"case-{i}", "input": "q", "output": out, "expected": exp},
                                ensure_ascii=False) + "\n")
    (folder / "eval.yaml").write_text(SUITE, encoding="utf-8")
    return folder / "eval.yaml"


PROMPTFOO_RECORDED_S = 3.60
"""promptfoo's wall time for these 2,000 cases, measured on this machine at load average 1.0
(2026-11-28; 7.1 s at load 5.8 the same evening, 9.9 s on an earlier day)."""


PASSED_EXPECTED = (666, 2000)
"""Cases assay passes (every assertion holding) out of 2,000; promptfoo must agree."""


def promptfoo() -> str | None:
    """The promptfoo executable, or None."""
    named = os.environ.get("PROMPTFOO")
    local = Path(__file__).parent / "node_modules" / ".bin" / "promptfoo"
    for candidate in (named, str(local) if local.exists() else None, shutil.which("promptfoo")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def write_promptfoo(folder: Path) -> Path:
    """The same cases as a promptfoo config: echo provider, the four assertions."""
    tests = []
    with (folder / "data.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            tests.append({"vars": {"output": row["output"], "expected": row["expected"]}})
    config = {
        "prompts": ["{{output}}"], "providers": ["echo"],
        "defaultTest": {"assert": [
            {"type": "equals", "value": "{{expected}}"},
            {"type": "contains", "value": "{{expected}}"},
            {"type": "regex", "value": "(?:capital|首都)\\s*\\S+"},
            {"type": "levenshtein", "value": "{{expected}}", "threshold": 80},
        ]},
        "tests": tests,
    }
    path = folder / "promptfooconfig.json"
    path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return path


def time_promptfoo(exe: str, folder: Path, repeats: int) -> float:
    config = write_promptfoo(folder)
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CACHE_ENABLED": "false", "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo")}
    times = []
    out = folder / "promptfoo-results.json"
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([exe, "eval", "-c", str(config), "--no-cache", "--no-write", "--no-table", "-j", "4",
                        "-o", str(out)], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=300)
        times.append(time.perf_counter() - t)
        stats = json.loads(out.read_text(encoding="utf-8"))["results"]["stats"]
        graded = stats["successes"] + stats["failures"] + stats["errors"]
        assert graded == PASSED_EXPECTED[1], f"promptfoo graded {graded} cases: {stats}"
        assert stats["successes"] == PASSED_EXPECTED[0], f"promptfoo passed {stats['successes']} cases"
        out.unlink()
    return statistics.median(times)


def main(repeats: int = 5, n: int = 2000) -> dict[str, float]:
    assay = Path(sys.executable).parent / "assay"
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp), n)
        out = Path(tmp) / "results.jsonl"
        times, version = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            subprocess.run([str(assay), "run", str(suite), "--out", str(out), "-q"], check=False,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([str(assay), "--version"], check=True, stdout=subprocess.DEVNULL)
            version.append(time.perf_counter() - t)
        lines = out.read_text(encoding="utf-8").count("\n")
        assert lines == n, f"expected {n} result lines, got {lines}"
        exe = promptfoo()
        peer = time_promptfoo(exe, Path(tmp), max(1, repeats // 2)) if exe else PROMPTFOO_RECORDED_S
    wall = statistics.median(times)
    return {"cases": n, "wall_s": wall, "cases_per_s": n / wall, "version_s": statistics.median(version),
            "promptfoo_s": peer, "promptfoo_measured": exe is not None, "vs_promptfoo": peer / wall}


def describe(r: dict[str, float]) -> str:
    how = "measured in this run" if r["promptfoo_measured"] else "last recorded figure: promptfoo is not installed"
    return (f"assay run, {r['cases']} cases x 4 graders, start-up included: {r['wall_s']:.2f} s "
            f"({r['cases_per_s']:,.0f} cases/s); promptfoo on the same cases {r['promptfoo_s']:.2f} s ({how}): "
            f"{r['vs_promptfoo']:.1f}x (target 25x); `assay --version` {r['version_s']:.3f} s (target 0.12 s)")


if __name__ == "__main__":
    print(describe(main()))
