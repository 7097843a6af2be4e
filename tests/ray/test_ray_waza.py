"""`--waza-version` reaches the Ray engine's workers: each worker compiles the suite itself
(`SuiteRef.open`), so the release must travel with the reference. A suite whose task has a key
waza refuses from 0.24 (`colour`) and `expected` checks (graded from 0.27) gives the local
engine's lines under `--waza-version 0.21` on Ray too; read as the newest release it is refused."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from assay.cli.run_cmd import execute

pytestmark = pytest.mark.ray

EVAL = "name: e\nskill: s\ntasks: [tasks/*.yaml]\ngraders:\n  - {type: text, name: says, config: {contains: [azure]}}\n"
TASK = ("id: {id}\nname: T\ncolour: blue\ninputs:\n  prompt: deploy it\n  output: {output}\n"
        "expected:\n  output_contains: [deployed]\n")


def lines(path) -> dict[str, list[tuple[str, bool]]]:
    out = {}
    for raw in path.read_bytes().splitlines():
        row = orjson.loads(raw)
        out[row["id"]] = sorted((r["name"], r["passed"]) for r in row["results"])
    return out


def test_ray_workers_read_the_suite_as_the_release_given(tmp_path):
    pytest.importorskip("ray")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text(EVAL)
    for i, output in enumerate(["Deployed to Azure", "Failed", "azure, nothing deployed"]):
        (tmp_path / "tasks" / f"t{i}.yaml").write_text(TASK.format(id=f"t{i}", output=output))
    local, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    code = execute(tmp_path / "eval.yaml", out=local, junit=None, results=None, threshold=None, concurrency=2,
                   resume=False, cost_ordered=None, summary_json=None, quiet=True, waza_version="0.21")
    args = [sys.executable, "-m", "assay.cli.main", "run", str(tmp_path / "eval.yaml"), "-q", "--engine", "ray"]
    done = subprocess.run([*args, "--out", str(ray_out), "--waza-version", "0.21"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == code == 1, done.stderr
    assert lines(ray_out) == lines(local) == {"t0": [("says", True)], "t1": [("says", False)],
                                              "t2": [("says", True)]}  # no `_output_contains` before 0.27



def test_the_suite_reference_workers_open_carries_the_release(tmp_path):
    # what each worker does (GradingActor opens its SuiteRef), without starting Ray
    from assay.core.errors import SpecError
    from assay.runner.ray_engine import SuiteRef

    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text(EVAL)
    (tmp_path / "tasks" / "t0.yaml").write_text(TASK.format(id="t0", output="Deployed to Azure"))
    suite, _ = SuiteRef.of(tmp_path / "eval.yaml", waza_version="0.21").open()
    assert [g.name for g in suite.graders_for("t0")] == ["says"]  # no `_output_contains` before 0.27
    with pytest.raises(SpecError, match="field colour not found in type models.TestCase"):
        SuiteRef.of(tmp_path / "eval.yaml").open()
