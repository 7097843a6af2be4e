"""As a user sets it up: the sandbox service in one process, ``assay run``, ``assay doctor`` and
``assay serve`` in others, pointed at it with ``SANDBOX_URL`` and ``SANDBOX_SECRET``.

Each client process gets ``ASSAY_NODE`` naming no executable: a Node.js evaluator that passes
there can only have run in the service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from service_process import ASSAY, SECRET, free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "code-evaluators" / "eval.yaml"
NODE_CODE = ("module.exports = async function (input, output, expected) {\n"
             "  return { passed: require('lodash').includes(output, expected), reason: 'lodash' };\n};\n")


def _env(service, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANDBOX_", "ASSAY_"))}
    return {**env, "SANDBOX_URL": service.url, "SANDBOX_SECRET": SECRET, "ASSAY_NODE": str(tmp_path / "no-node"),
            "ASSAY_JUDGE_CACHE": "off", **extra}


def _assay(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ASSAY), *args], env=env, capture_output=True, text=True, timeout=60)


def _verdicts(path: Path) -> dict[tuple[str, str], tuple]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {(row["id"], g["name"]): (g["status"], g["score"], g["reason"], g["error"])
            for row in rows for g in row["results"]}


@pytest.mark.node_sandbox
def test_assay_run_through_the_service_grades_as_locally(service, tmp_path):
    local = _assay("run", str(EXAMPLE), "--out", str(tmp_path / "local.jsonl"), "-q",
                   env={**os.environ, "ASSAY_JUDGE_CACHE": "off"})
    remote = _assay("run", str(EXAMPLE), "--out", str(tmp_path / "remote.jsonl"), "-q", env=_env(service, tmp_path))
    assert remote.returncode == local.returncode == 1, remote.stderr  # the example fails samples on purpose
    there, here = _verdicts(tmp_path / "remote.jsonl"), _verdicts(tmp_path / "local.jsonl")
    assert there == here and len(there) == 12
    assert not any(verdict[3] for verdict in there.values())  # no error: every Node.js evaluator ran remotely


def test_doctor_says_which_runner_is_used(service, tmp_path):
    remote = _assay("doctor", "--json", env=_env(service, tmp_path))
    report = json.loads(remote.stdout)
    assert remote.returncode == 0 and report["code_runner"]["kind"] == "remote"
    assert report["code_runner"]["service"]["can_run"] is True
    assert report["code_runner"]["service"]["health"]["pool"]["workers"] == 2
    wrong = _assay("doctor", env=_env(service, tmp_path, SANDBOX_SECRET="not-the-secret-at-all"))
    assert wrong.returncode == 1 and "401" in wrong.stdout and "not-the-secret" not in wrong.stdout
    down = _assay("doctor", env=_env(service, tmp_path, SANDBOX_URL=f"http://127.0.0.1:{free_port()}"))
    assert down.returncode == 1 and "cannot be reached" in down.stdout


@pytest.mark.node_sandbox
def test_assay_serve_runs_code_evaluators_in_the_service(service, tmp_path):
    env = _env(service, tmp_path, ASSAY_DATABASE_URL=f"sqlite:///{tmp_path / 'assay.db'}")
    assert _assay("users", "create", "alice", env=env).returncode == 0
    token = _assay("tokens", "create", "alice", env=env).stdout.strip().splitlines()[-1]
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "serve", "--port", str(port),
                               "--log-level", "warning"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30) as api:
            broken = api.post("/evaluators", json={"name": "broken", "type": "code", "config": {
                "language": "nodejs", "code": "module.exports = function () {\n  return {;\n}\n"}})
            assert broken.status_code == 422 and "line 2" in broken.json()["message"]  # checked by the service
            created = api.post("/evaluators", json={"name": "has", "type": "code",
                                                    "config": {"language": "nodejs", "code": NODE_CODE}})
            assert created.status_code == 200, created.text
            tested = api.post(f"/evaluators/{created.json()['data']['id']}/test",
                              json={"input": "q", "output": "北京是首都", "expected": "首都"}).json()["data"]
            assert (tested["passed"], tested["score"], tested["reason"], tested["error"]) == (True, 1.0, "lodash", None)
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(30)
        log.close()
