"""One caller's concurrent tests of a code evaluator share sandbox batches; callers never do."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from assay.core.grader import Grader, GraderConfig, Traits
from assay.core.sample import Sample
from assay.service.coalesce import MAX_BATCH, Coalescer

PID_CODE = ("import collections\n"
            "def evaluate(input, output, expected, metadata):\n"
            "    pid = collections._sys.modules['os'].getpid()\n"
            "    return {'passed': output == expected, 'reason': output, 'details': {'pid': pid}}\n")


def _run(coroutine):
    """``asyncio.run`` in a thread of its own: a test before may have left this thread's loop running."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


class _Recorder(Grader[GraderConfig]):
    """Grades in batches, recording their sizes; the first batch waits until released."""

    type = "recorder"
    description = "test double"
    traits = Traits(io_bound=True, batches_io=True)

    def __init__(self) -> None:
        super().__init__(GraderConfig())
        self.sizes: list[int] = []
        self.release = threading.Event()

    def grade(self, sample: Sample):
        return self.grade_batch([sample])[0]

    def grade_batch(self, samples):
        self.sizes.append(len(samples))
        if len(self.sizes) == 1:
            self.release.wait(10)
        return [self.scored_result(True, reason=str(s.output)) for s in samples]


def test_requests_queued_behind_a_batch_go_together():
    grader = _Recorder()

    async def main():
        coalescer = Coalescer(lanes=1)
        first = asyncio.ensure_future(coalescer.grade("alice", grader, Sample(id="t", output="0")))
        await asyncio.sleep(0.05)  # the first is in the sandbox; the rest queue behind it
        rest = [asyncio.ensure_future(coalescer.grade("alice", grader, Sample(id="t", output=str(i))))
                for i in range(1, MAX_BATCH + 6)]
        await asyncio.sleep(0.05)
        grader.release.set()
        return [r.reason for r in await asyncio.gather(first, *rest)]

    reasons = _run(main())
    assert reasons == [str(i) for i in range(MAX_BATCH + 6)]
    assert grader.sizes == [1, MAX_BATCH, 5]


def test_callers_have_their_own_lanes():
    grader = _Recorder()
    grader.release.set()

    async def main():
        coalescer = Coalescer(lanes=1)
        jobs = [coalescer.grade(user, grader, Sample(id="t", output=user)) for user in ("alice", "bob")]
        return await asyncio.gather(*jobs)

    assert [r.reason for r in _run(main())] == ["alice", "bob"]
    assert grader.sizes == [1, 1]


def test_concurrent_tests_over_http_answer_each_request(api):
    created = api.call("POST", "/evaluators", json={"name": "pid", "type": "code",
                                                    "config": {"language": "python", "code": PID_CODE}})
    evaluator = created.json()["data"]["id"]

    def test(job):
        user, i = job
        body = {"input": "q", "output": f"{user}-{i}", "expected": f"{user}-{i % 2}"}
        answer = api.call("POST", f"/evaluators/{evaluator}/test", user, json=body)
        assert answer.status_code == 200, answer.text
        return user, i, answer.json()["data"]

    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(test, [(user, i) for i in range(12) for user in ("alice", "bob")]))
    pids: dict[str, set[int]] = {"alice": set(), "bob": set()}
    for user, i, data in answers:
        assert (data["reason"], data["passed"]) == (f"{user}-{i}", i < 2 and i % 2 == i), data
        pids[user].add(data["details"]["pid"])
    assert not pids["alice"] & pids["bob"]  # never one process for two callers
