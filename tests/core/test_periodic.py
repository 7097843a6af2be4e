"""``core.periodic.Periodic``: the call repeats on its thread, a failing call is logged and the
next one still comes, and ``close`` ends the thread."""

from __future__ import annotations

import logging
import threading
import time

from assay.core.periodic import Periodic


def test_a_failing_call_is_logged_and_the_next_still_comes(caplog):
    calls: list[int] = []
    third = threading.Event()

    def action() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("the database is away")
        if len(calls) == 3:
            third.set()

    poller = Periodic(action, 0.01, name="assay-test-poller", log=logging.getLogger("assay.test.periodic"),
                      failed="polling failed")
    with caplog.at_level(logging.WARNING, logger="assay.test.periodic"):
        poller.start()
        assert third.wait(10)
        poller.close()
    assert [r.getMessage() for r in caplog.records] == ["polling failed"]
    assert not any(t.name == "assay-test-poller" for t in threading.enumerate())


def test_a_failure_taken_by_on_failure_is_not_logged_and_the_next_try_comes_after_its_pause(caplog):
    times: list[float] = []
    done = threading.Event()
    successes: list[int] = []

    def action() -> None:
        times.append(time.monotonic())
        if len(times) < 3:
            raise ConnectionError("the database is away")
        done.set()

    poller = Periodic(action, 0.5, name="assay-test-paced", log=logging.getLogger("assay.test.periodic"),
                      failed="polling failed", on_failure=lambda _error: 0.01, on_success=lambda: successes.append(1))
    with caplog.at_level(logging.WARNING, logger="assay.test.periodic"):
        poller.start()
        assert done.wait(10)
        poller.close()
    assert caplog.records == [] and successes == [1]
    assert times[2] - times[0] < 0.4  # two pauses of 0.01 s, not two intervals of 0.5 s


def test_wake_calls_at_once_and_again_repeats_while_there_is_work():
    calls: list[float] = []
    work = [3]
    drained = threading.Event()
    woken = threading.Event()

    def action() -> bool:
        calls.append(time.monotonic())
        if len(calls) == 5:
            woken.set()
        if work[0]:
            work[0] -= 1
            if not work[0]:
                drained.set()
            return True
        return False

    poller = Periodic(action, 30.0, name="assay-test-woken", log=logging.getLogger("assay.test.periodic"),
                      failed="polling failed", again=True)
    poller.start()
    try:
        started = time.monotonic()
        poller.wake()
        assert drained.wait(10)  # three calls that found work, one after the other, none waiting 30 s
        assert time.monotonic() - started < 5 and len(calls) >= 3
        time.sleep(0.2)
        assert len(calls) == 4  # the fourth found nothing: the poller waits its interval now
        poller.wake()
        assert woken.wait(10)
    finally:
        poller.close()
    assert not any(t.name == "assay-test-woken" for t in threading.enumerate())
