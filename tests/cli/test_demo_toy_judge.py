"""``assay serve --demo`` with ``assay[local-judge]`` installed (issue 38, item 4): the demo starts
the local toy judge beside the server, its workspace holds an LLM evaluator named as a toy and
pointed at it, a test run of that evaluator through the API is graded by the real model, and
stopping the server stops the judge. A second start points the same evaluator at the new port."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from assay.judges.local.find import available
from assay.server.demo import TOY_JUDGE

ASSAY = Path(sys.executable).parent / "assay"
pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(folder: Path) -> tuple[subprocess.Popen[bytes], str, str, int, Path]:
    port, log = free_port(), folder / f"serve-{time.monotonic_ns()}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    with open(log, "wb") as out:
        process = subprocess.Popen([str(ASSAY), "serve", "--demo", "--port", str(port), "--log-level", "warning"],
                                   cwd=folder, env={**env, "ASSAY_JUDGE_CACHE": "off", "HOME": str(folder)},
                                   stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    pattern = r"paste this token \(user 'demo'\):\n(\S+)"
    while not ((token := re.search(pattern, log.read_text())) and (pid := re.search(r"\(pid (\d+)\)", log.read_text()))):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    return process, f"http://127.0.0.1:{port}", token.group(1), int(pid.group(1)), log


def toy_evaluator(url: str, token: str, judge_pid_log: Path) -> dict:
    deadline = time.monotonic() + 90
    with httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30) as api:
        while time.monotonic() < deadline:
            try:
                found = api.get("/evaluators", params={"type": "llm"}).json()["data"]
            except httpx.TransportError:
                found = []
            items = found["items"] if isinstance(found, dict) else found
            mine = [e for e in items if e["name"] == TOY_JUDGE]
            if mine:
                return api.get(f"/evaluators/{mine[0]['id']}").json()["data"]
            time.sleep(0.3)
    raise AssertionError(f"no toy evaluator: {judge_pid_log.read_text()}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(30)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_demo_has_a_toy_llm_evaluator_on_the_local_judge_which_stops_with_it(tmp_path):
    process, url, token, judge_pid, log = start(tmp_path)
    try:
        evaluator = toy_evaluator(url, token, log)
        config = evaluator["config"]
        assert "玩具" in evaluator["name"] and "不可用于真实评测" in evaluator["description"]
        assert config["model"] == "local" and config["scoring"] == "logprobs"
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", config["base_url"])
        with httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60) as api:
            tried = api.post(f"/evaluators/{evaluator['id']}/test",
                             json={"input": "法国的首都是哪里？", "output": "巴黎。"}).json()
        assert tried["code"] == 200, tried
        assert tried["data"]["error"] is None and 0.0 <= tried["data"]["score"] <= 1.0
        assert tried["data"]["reason"].startswith("P(pass) ")  # the real model's odds, stated
    finally:
        stop(process)
    deadline = time.monotonic() + 15
    while alive(judge_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(judge_pid), "the local judge outlived the server"

    again, url, token, second_pid, log = start(tmp_path)  # the same database, a new judge port
    try:
        moved = toy_evaluator(url, token, log)
        deadline = time.monotonic() + 30
        while moved["config"]["base_url"] == config["base_url"] and time.monotonic() < deadline:
            time.sleep(0.3)
            moved = toy_evaluator(url, token, log)
        assert moved["id"] == evaluator["id"] and moved["config"]["base_url"] != config["base_url"]
    finally:
        stop(again)
