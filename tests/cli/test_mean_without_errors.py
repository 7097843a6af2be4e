"""Mean scores leave errored samples out (docs/guides/compare-and-gate.md, "Every figure comes with
its interval"), in every report of `assay run`:
the closing line, `--summary-json`, JUnit's properties and `assay report --json`, with the
installed command against a real judge server that cannot be read for one sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

from judge_server import good_json, malformed

ASSAY = str(Path(sys.executable).with_name("assay"))
ROWS = [("q0", "paris", "paris", 5), ("q1", "rome", "rome", None), ("q2", "oslo", "lima", 3), ("q3", "kyiv", "kyiv", 1)]


def test_an_errored_sample_is_out_of_every_mean_score(tmp_path, judge_server):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"id": i, "output": o, "expected": e}) + "\n"
                                                 for i, o, e, _ in ROWS))
    (tmp_path / "eval.yaml").write_text(textwrap.dedent("""\
        name: capitals
        dataset: data.jsonl
        graders:
          - {type: exact_match, name: exact}
          - {type: llm, name: judge, config: {rubric: "Is it a capital?"}}
        """))
    marks = {o: m for _, o, _, m in ROWS}
    judge_server.respond = lambda body: next(
        (malformed() if m is None else good_json({"reasoning": "ok", "score": m}))
        for o, m in marks.items() if f"{o}" in body["messages"][-1]["content"])
    env = {**os.environ, "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_MODEL": "judge-test",
           "ASSAY_JUDGE_API_KEY": "sk-test", "ASSAY_JUDGE_CACHE": str(tmp_path / "cache.sqlite")}
    out, summary, junit = tmp_path / "r.jsonl", tmp_path / "s.json", tmp_path / "j.xml"
    run = subprocess.run([ASSAY, "run", str(tmp_path / "eval.yaml"), "--out", str(out), "--summary-json",
                          str(summary), "--junit", str(junit), "-q"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 1, run.stderr
    lines = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert lines["q1"]["status"] == "error" and lines["q1"]["score"] is not None  # exact_match scored it
    decided = [r["score"] for r in lines.values() if r["status"] in ("passed", "failed")]
    assert len(decided) == 3
    mean = sum(decided) / 3
    with_error = sum(r["score"] for r in lines.values()) / 4
    assert round(mean, 3) != round(with_error, 3)
    assert f"mean score {mean:.3f}" in run.stdout, run.stdout
    doc = json.loads(summary.read_text())
    assert doc["mean_score"] == mean and doc["left_out"] == 1
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert float(props["mean_score"]) == round(mean, 6)
    # The judge's own mean: the three it could score, the error out of it.
    judge = next(g for g in doc["graders"] if g["name"] == "judge")
    assert judge["errors"] == 1 and judge["mean_score"] == (1.0 + 0.5 + 0.0) / 3
    report = subprocess.run([ASSAY, "report", str(out), "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(report.stdout)["mean_score"] == mean
