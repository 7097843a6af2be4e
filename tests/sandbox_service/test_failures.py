"""When the service is not there, is full, or is started carelessly: errors that say so
(``unavailable``, never a failed grade), and recovery when it is back."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

import httpx2 as httpx
import pytest
from service_process import ASSAY, SECRET, SandboxService, free_port

from assay.core.interfaces import CodeCall, Resources
from assay.core.messages import code_and_args
from assay.core.result import ErrorCode
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.sandbox.remote import RemoteCodeRunner

EQUAL = "def evaluate(i, o, e, m):\n    return {'passed': o == e}\n"
SLEEPY = "import time\n\ndef evaluate(i, o, e, m):\n    time.sleep(m.get('pause', 0))\n    return {'passed': True}\n"


def _grade(runner: RemoteCodeRunner, i: int):
    grader = compile_spec({"type": "code", "config": {"language": "python", "code": EQUAL}}).build(
        Resources(code_runner=runner))
    return grader.grade(Sample(id=f"s{i}", output="a", expected="a" if i % 2 else "b"))


def test_service_down_mid_run_then_back():
    with SandboxService(args=("--workers", "1")) as service, RemoteCodeRunner(service.url, SECRET) as runner:
        before = [_grade(runner, i) for i in range(4)]
        assert [r.status for r in before] == ["failed", "passed", "failed", "passed"]
        service.stop(signal.SIGKILL)  # gone without a goodbye: the kept-alive connections die too
        started = time.monotonic()
        down = [_grade(runner, i) for i in range(4)]
        assert all(r.status == "error" and r.error is ErrorCode.UNAVAILABLE for r in down)
        assert "cannot be reached" in down[0].reason and service.url in down[0].reason
        assert down[0].reason_code == "sandbox.remote.unavailable"  # said in the page's language
        assert down[0].reason_args["url"] == service.url
        assert down[0].reason_args["what"]["code"] == "sandbox.remote.unreachable"
        assert time.monotonic() - started < 4.0  # refused at once, not each waited for until its deadline
        service.start()  # the same port
        after = [_grade(runner, i) for i in range(4)]
        assert [r.status for r in after] == ["failed", "passed", "failed", "passed"]


@pytest.mark.solo  # a client allowed 0.3 s must get its 503 within them: not beside a loaded suite
def test_a_full_queue_answers_503_and_clients_wait_their_turn_or_say_busy():
    with SandboxService(args=("--workers", "1", "--queue", "1")) as service:
        auth = {"Authorization": f"Bearer {SECRET}"}
        body = {"language": "python", "code": SLEEPY, "input": {"metadata": {"pause": 0.6}}}
        held = [threading.Thread(target=httpx.post, args=(service.url + "/execute",),
                                 kwargs={"json": body, "headers": auth, "timeout": 10}) for _ in range(2)]
        for thread in held:  # one runs, one waits: the queue is full
            thread.start()
        deadline = time.monotonic() + 5
        while httpx.get(service.url + "/health").json()["pool"] != {"workers": 1, "running": 1, "queued": 1,
                                                                     "queueLimit": 1}:
            assert time.monotonic() < deadline, "the two requests were never in flight"
            time.sleep(0.02)
        refused = httpx.post(service.url + "/execute", json=body, headers=auth)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["success"] is False
        call = CodeCall("python", EQUAL, ["q", "a", "a", {}], timeout_ms=100)
        with RemoteCodeRunner(service.url, SECRET, margin_s=0.2) as hurried:  # cannot wait for a slot
            out = hurried.call(call)
            assert out.error is ErrorCode.UNAVAILABLE and "busy" in out.message and "503" in out.message
            assert code_and_args(out.message) == ("sandbox.remote.unavailable", {
                "url": service.url, "what": {"code": "sandbox.remote.busy", "args": {}}})
        with RemoteCodeRunner(service.url, SECRET) as patient:  # retried within its deadline
            out = patient.call(call)
            assert out.ok and out.value["passed"] is True
        for thread in held:
            thread.join()


def test_a_wrong_secret_and_a_rejected_request_are_phrases():
    with SandboxService(args=("--workers", "1")) as service:
        with RemoteCodeRunner(service.url, "not the secret") as wrong:
            out = wrong.call(CodeCall("python", EQUAL, ["q", "a", "a", {}], timeout_ms=1000))
        assert out.error is ErrorCode.UNAVAILABLE and out.message == \
            f"the sandbox service at {service.url} refused the secret (401): set SANDBOX_SECRET to the service's secret"
        assert code_and_args(out.message)[1]["what"] == {"code": "sandbox.remote.secret", "args": {}}


def test_the_service_refuses_to_start_without_a_secret_unless_told_explicitly():
    env = {"PATH": "/usr/bin:/bin"}
    refused = subprocess.run([str(ASSAY), "sandbox", "serve", "--port", str(free_port())], env=env,
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "SANDBOX_SECRET is not set" in refused.stderr
    assert "--insecure-no-secret" in refused.stderr
    with SandboxService(secret=None, args=("--workers", "1")) as service:
        answer = httpx.post(service.url + "/execute", json={"language": "python", "code": EQUAL,
                                                            "input": {"output": "a", "expected": "a"}})
        assert answer.json()["result"]["passed"] is True
        assert "NO SECRET" in service.log()
