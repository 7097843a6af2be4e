"""`assay run` wall-clock on a 2,000-case suite, start-up included, as a user runs it.

The suite mirrors the promptfoo comparison in the issue: equals, contains, regex and
levenshtein on every case (promptfoo: 160-180 cases/s on this kind of machine).
"""

from __future__ import annotations

import json
import random
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


def main(repeats: int = 5, n: int = 2000) -> dict[str, float]:
    assay = Path(sys.executable).parent / "assay"
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp), n)
        out = Path(tmp) / "results.jsonl"
        times, startup = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            subprocess.run([str(assay), "run", str(suite), "--out", str(out), "-q"], check=False,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([str(assay), "--help"], check=True, stdout=subprocess.DEVNULL)
            startup.append(time.perf_counter() - t)
        lines = out.read_text(encoding="utf-8").count("\n")
        assert lines == n, f"expected {n} result lines, got {lines}"
    wall = statistics.median(times)
    return {"cases": n, "wall_s": wall, "cases_per_s": n / wall, "startup_s": statistics.median(startup),
            "vs_promptfoo_170": n / wall / 170}


if __name__ == "__main__":
    r = main()
    print(f"assay run, {r['cases']} cases x 4 graders: {r['wall_s']:.2f} s wall ({r['cases_per_s']:,.0f} cases/s, "
          f"{r['vs_promptfoo_170']:.0f}x promptfoo's ~170/s); CLI start-up {r['startup_s']:.2f} s")
