"""Repeats: each sample graded K times against a real OpenAI-compatible judge server, the judge
cache serving only the first attempt; clusters, pass@k, pass^k and self-agreement in the
reports; waza trials clustered by their task; `assay run --baseline` gating on a regression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from judge_server import good_json, malformed
from test_waza_results import EVAL, OUTCOME, TASK, load, write

from assay.runner.local_engine.repeats import attempt_id, attempts, sample_ids
from assay.runner.suites import load_suite

ROWS = [{"id": f"q{i}", "output": f"answer {i}", "expected": "x"} for i in range(4)]


def _suite(tmp_path: Path, repeats: int | None) -> Path:
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "eval.yaml").write_text(textwrap.dedent(f"""\
        name: judged
        dataset: data.jsonl
        {f"repeats: {repeats}" if repeats else ""}
        graders:
          - {{type: llm, name: quality, config: {{rubric: "Is it right?"}}}}
          - {{type: exact_match, name: exact}}
        """))
    return tmp_path / "eval.yaml"


def _run(tmp_path: Path, judge_server, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_MODEL": "judge-test",
           "ASSAY_JUDGE_API_KEY": "sk-test", "ASSAY_JUDGE_CACHE": str(tmp_path / "cache.sqlite")}
    return subprocess.run([sys.executable, "-m", "assay.cli.main", "run", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_repeats_ask_the_judge_afresh_and_report_consistency(tmp_path, judge_server):
    calls: list[str] = []

    def respond(body):
        calls.append(body["messages"][-1]["content"])
        # q0 always passes, q1 always fails, q2 and q3 alternate from call to call.
        text = body["messages"][-1]["content"]
        if "answer 0" in text:
            return good_json({"reasoning": "fine", "score": 5})
        if "answer 1" in text:
            return good_json({"reasoning": "wrong", "score": 1})
        marker = "answer 2" if "answer 2" in text else "answer 3"
        asked = sum(marker in c for c in calls)  # this sample's own count: alternates whatever the order
        return good_json({"reasoning": "hm", "score": 5 if asked % 2 else 1})

    judge_server.respond = respond
    path = _suite(tmp_path, repeats=3)
    out, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    first = _run(tmp_path, judge_server, str(path), "--out", str(out), "--summary-json", str(summary))
    assert first.returncode == 1, first.stderr
    assert len(calls) == 12  # 4 samples x 3 attempts, nothing cached yet
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == [attempt_id(r["id"], n) for n in (1, 2, 3) for r in ROWS]
    assert all(r["cluster"] == r["id"].split("#")[0] for r in lines)
    doc = json.loads(summary.read_text())
    quality = doc["graders"][0]
    assert quality["clusters"] == 4 and quality["repeats"]["k"] == 3 and quality["repeats"]["tasks"] == 4
    assert doc["graders"][1]["repeats"]["consistency"] == 1.0  # exact_match agrees with itself
    assert quality["repeats"]["consistency"] < 1.0  # the flaky judge does not
    assert "pass@3" in first.stdout and "self-agreement" in first.stdout
    # Per-sample consistency: the two samples the judge wavered on, with how many attempts passed.
    assert [(w["sample"], w["grader"], w["passed"], w["attempts"]) for w in doc["inconsistent"]] == [
        ("q2", "quality", 2, 3), ("q3", "quality", 2, 3)]
    assert "inconsistent across attempts (2): q2 quality 2/3, q3 quality 2/3" in first.stdout

    calls.clear()
    again = _run(tmp_path, judge_server, str(path), "-q", "--repeats", "2")
    assert again.returncode == 1, again.stderr
    assert len(calls) == 4  # the cache answered attempt 1; attempt 2 asked afresh


def test_an_errored_attempt_keeps_pass_at_k_and_sets_its_task_apart(tmp_path, judge_server):
    """`--repeats 4` and one judge reply that cannot be read: pass@4 stays pass@4 (it fell to
    pass@3 for the whole run before), each task from its own attempts, the short task named;
    `--pass-k 2` asks for pass@2; a k above the repeats is refused."""
    asked: dict[str, int] = {}

    def respond(body):
        text = body["messages"][-1]["content"]
        sample = next(r["id"] for r in ROWS if r["output"] in text)
        asked[sample] = asked.get(sample, 0) + 1
        if sample == "q1" and asked[sample] == 2:
            return malformed()
        return good_json({"reasoning": "ok", "score": 5 if sample != "q2" or asked[sample] == 1 else 1})

    judge_server.respond = respond
    path = _suite(tmp_path, repeats=None)
    summary = tmp_path / "s.json"
    got = _run(tmp_path, judge_server, str(path), "--repeats", "4", "--no-cache", "--summary-json", str(summary))
    assert got.returncode == 1, got.stderr
    quality = json.loads(summary.read_text())["graders"][0]
    again = quality["repeats"]
    assert (again["k"], again["tasks"], again["short"], again["short_tasks"]) == (4, 3, 1, ["q1"])
    assert again["pass_at_k"] == 1.0 and again["pass_at_k_ci"][0] < 1.0 == again["pass_at_k_ci"][1]
    # q0 and q3 passed every attempt, q2 once: pass^4 is 2/3, with an interval over the 3 tasks.
    assert again["pass_hat_k"] == 2 / 3 and again["pass_hat_k_ci"][0] < 2 / 3 < again["pass_hat_k_ci"][1]
    printed = " ".join(got.stdout.split())
    assert "quality: 1 tasks with fewer than 4 scored attempts left out of pass@4 (q1)" in printed, printed

    two = _run(tmp_path, judge_server, str(path), "--repeats", "4", "--pass-k", "2", "--summary-json", str(summary))
    assert two.returncode == 1, two.stderr
    again = json.loads(summary.read_text())["graders"][0]["repeats"]
    assert (again["k"], again["tasks"], again["short"]) == (2, 4, 0)
    refused = _run(tmp_path, judge_server, str(path), "--repeats", "4", "--pass-k", "5", "-q")
    assert refused.returncode == 2 and "k = 5 is more than the 4 repeats" in refused.stderr


def test_resume_continues_the_attempts(tmp_path, judge_server):
    judge_server.respond = lambda body: good_json({"reasoning": "ok", "score": 5})
    path = _suite(tmp_path, repeats=None)
    out = tmp_path / "r.jsonl"
    assert _run(tmp_path, judge_server, str(path), "--out", str(out), "-q", "--repeats", "2").returncode == 1
    kept = out.read_text().splitlines()[:5]
    out.write_text("\n".join(kept) + "\n")
    resumed = _run(tmp_path, judge_server, str(path), "--out", str(out), "-q", "--repeats", "2", "--resume")
    assert "5 resumed" in resumed.stdout, resumed.stdout + resumed.stderr
    assert len(out.read_text().splitlines()) == 8


def test_attempt_suites_rename_samples_and_keep_task_graders(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)})
    suite = load(path)
    assert suite.clusters == {"fix#1": "fix", "fix#2": "fix"}  # waza trials are attempts of their task
    suite.repeats = 2
    made = list(attempts(suite))
    assert [s.id for s in made[1].samples] == ["fix#1#r2", "fix#2#r2"]
    assert made[1].clusters == {"fix#1#r2": "fix", "fix#2#r2": "fix"}
    assert sample_ids(suite) == {"fix#1#r1", "fix#2#r1", "fix#1#r2", "fix#2#r2"}


def test_suite_key_is_validated(tmp_path):
    path = _suite(tmp_path, repeats=None)
    path.write_text(path.read_text().replace("name: judged", "name: judged\nrepeats: 0"))
    import pytest

    from assay.core.errors import SpecError

    with pytest.raises(SpecError, match="repeats"):
        load_suite(path)
