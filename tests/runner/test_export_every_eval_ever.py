"""`assay run --export every-eval-ever`, by the installed command: the record validates against
the Every Eval Ever schema of the pinned release (read from its wheel, which `make setup`
fetches), and its figures are the run's own (`--summary-json`), intervals and pass@k included."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
ASSAY = str(Path(sys.executable).with_name("assay"))


def _schema() -> dict:
    wheels = sorted((REPO / ".venv" / "every-eval-ever").glob("every_eval_ever-0.3.0-*.whl"))
    if not wheels:
        pytest.skip("the every-eval-ever 0.3.0 wheel is not in .venv/every-eval-ever (make eee-schema fetches it)")
    with zipfile.ZipFile(wheels[0]) as wheel:
        return json.loads(wheel.read("every_eval_ever/schemas/eval.schema.json"))


def test_an_export_validates_against_the_schema_and_carries_the_runs_figures(tmp_path: Path) -> None:
    schema = _schema()
    rows = [{"id": f"q{i}", "output": "Paris" if i % 3 else "Lyon", "expected": "Paris"} for i in range(9)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "eval.yaml").write_text(textwrap.dedent("""\
        name: capitals
        dataset: data.jsonl
        repeats: 2
        graders:
          - {type: exact_match, name: exact}
          - {type: similarity, name: close, config: {threshold: 0.5}}
        """))
    target, summary = tmp_path / "eee.json", tmp_path / "s.json"
    run = subprocess.run([ASSAY, "run", str(tmp_path / "eval.yaml"), "--export", "every-eval-ever", "--export-path",
                          str(target), "--summary-json", str(summary), "-q"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stderr
    doc = json.loads(target.read_text())
    jsonschema.Draft7Validator(schema).validate(doc)
    assert doc["schema_version"] == schema["version"] == "0.3.0"
    ours = json.loads(summary.read_text())
    by_id = {r["evaluation_result_id"]: r for r in doc["evaluation_results"]}
    exact = next(g for g in ours["graders"] if g["name"] == "exact")
    rate = by_id["exact.pass_rate"]["score_details"]
    assert rate["score"] == exact["pass_rate"] == 6 / 9
    ci = rate["uncertainty"]["confidence_interval"]
    assert [ci["lower"], ci["upper"]] == exact["pass_rate_ci"] and ci["confidence_level"] == 0.95
    assert rate["uncertainty"]["num_samples"] == 9  # the tasks are the units: 9 samples, each graded twice
    at_k = by_id["exact.pass_at_k"]
    assert at_k["metric_config"]["metric_parameters"] == {"k": 2}
    assert at_k["score_details"]["score"] == exact["repeats"]["pass_at_k"]
    assert by_id["samples.mean_score"]["score_details"]["score"] == ours["mean_score"]
    assert by_id["close.mean_score"]["source_data"]["dataset_name"] == "data.jsonl"
    # The check can fail: a record without its model is refused by the same schema.
    del doc["model_info"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(doc)
