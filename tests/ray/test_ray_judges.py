"""LLM judges on Ray: one judge actor for the run, so the judge concurrency limit holds across
every worker and the judge cache is one; the verdicts are the local engine's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from judge_server import good_json, slow

pytestmark = pytest.mark.ray
ROWS = 600  # three Ray batches (256 rows each at most): both workers judge at once
LIMIT = 3


def _suite(tmp_path):
    rows = [{"id": f"r{i:03d}", "input": f"question {i}", "output": f"answer {i}", "expected": f"answer {i % 4}"}
            for i in range(ROWS)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "eval.yaml"
    path.write_text(textwrap.dedent("""\
        name: judged
        dataset: data.jsonl
        graders:
          - {type: exact_match, name: exact}
          - {type: llm, name: quality, config: {rubric: "Is the answer correct?"}}
        """))
    return path


def _run(path, out, env, engine):
    done = subprocess.run([sys.executable, "-m", "assay.cli.main", "run", str(path), "--out", str(out), "-q",
                           "--engine", engine], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    found = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        for r in row["results"]:
            r.pop("latency_ms")
            r["details"].pop("latency_ms", None)
            r["details"].pop("cached", None)
        found[row["id"]] = row
    return found


def test_one_judge_limit_and_one_cache_for_every_worker(tmp_path, judge_server, ray_env):
    pytest.importorskip("ray")

    def respond(body):
        score = 5 if "answer 1" in json.dumps(body) else 2
        return slow(0.01, good_json({"reasoning": "judged", "score": score}))

    judge_server.respond = respond
    path = _suite(tmp_path)
    env = {**os.environ, "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_MODEL": "judge-test",
           "ASSAY_JUDGE_API_KEY": "sk-test", "ASSAY_JUDGE_CONCURRENCY": str(LIMIT),
           "ASSAY_JUDGE_CACHE": str(tmp_path / "ray-cache.sqlite")}
    ray = _run(path, tmp_path / "ray.jsonl", {**env, **ray_env}, "ray")
    assert len(judge_server.requests) == ROWS and judge_server.max_in_flight <= LIMIT, judge_server.max_in_flight

    local = _run(path, tmp_path / "local.jsonl", {**env, "ASSAY_JUDGE_CACHE": "off"}, "local")
    assert ray == local and len(ray) == ROWS
    assert {r["results"][1]["status"] for r in ray.values()} == {"passed", "failed"}

    asked = len(judge_server.requests)
    _run(path, tmp_path / "again.jsonl", {**env, **ray_env}, "ray")  # every reply from the run's one cache
    assert len(judge_server.requests) == asked
    again = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert all(row["results"][1]["details"]["cached"] for row in again)
