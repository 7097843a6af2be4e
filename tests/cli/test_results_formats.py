"""A suite in each dialect graded the documented way, `assay run SUITE --results FILE`, through
the installed command, with its results in every shape a user may hand over: a `.jsonl` file, a
`.json` array, and (for the peers' runs) a folder of one JSON file per run, as waza's
`--transcript-dir` writes. Every shape must load and give the verdicts the `.jsonl` gives.
(waza's own `EvaluationOutcome` JSON and `--transcript-dir` files of real suites are graded by
tests/peers/test_corpus.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ASSAY = Path(sys.executable).parent / "assay"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SUITES = {"assay": ("presets", "data.jsonl"), "waza": ("waza-suite", "results.jsonl"),
          "vally": ("vally-stimuli", "trajectories.jsonl")}


def _verdicts(suite: Path, results: Path, tmp: Path) -> dict[str, tuple[bool, float, list]]:
    out = tmp / f"out-{results.name}.jsonl"
    done = subprocess.run([str(ASSAY), "run", str(suite), "--results", str(results), "--out", str(out), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), f"{results.name}: exit {done.returncode}: {done.stderr}"
    assert "Traceback" not in done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records, f"{results.name}: nothing graded"
    return {r["id"]: (r["passed"], r["score"], sorted((x["name"], x["status"]) for x in r["results"]))
            for r in records}


# an assay dataset is one file; folders of runs are the peers' (waza --transcript-dir, Vally runs)
@pytest.mark.parametrize("dialect, shape", [(d, s) for d in sorted(SUITES) for s in ("json", "folder")
                                            if (d, s) != ("assay", "folder")])
def test_every_results_shape_grades_as_the_jsonl_does(tmp_path: Path, dialect: str, shape: str) -> None:
    folder, jsonl = SUITES[dialect]
    suite = shutil.copytree(EXAMPLES / folder, tmp_path / folder)
    rows = [json.loads(line) for line in (suite / jsonl).read_text().splitlines() if line.strip()]
    if shape == "json":
        given = suite / jsonl.replace(".jsonl", ".json")
        given.write_text(json.dumps(rows))
    else:
        given = suite / "runs"
        given.mkdir()
        for i, row in enumerate(rows):
            (given / f"run-{i:03}.json").write_text(json.dumps(row))
    assert _verdicts(suite, given, tmp_path) == _verdicts(suite, suite / jsonl, tmp_path)
