"""``core.periodic.Periodic``: the call repeats on its thread, a failing call is logged and the
next one still comes, and ``close`` ends the thread."""

from __future__ import annotations

import logging
import threading

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
