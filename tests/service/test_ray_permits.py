"""The cluster's book of code permits (``service.ray_permits.PermitBook``), on a clock the test
moves: the cap per user, permits given back, leases that end when not renewed (a dead holder
frees its permits), renewals that put permits back into a book started anew, and the permits of
killed run actors dropped at once (``CodePermits``, the book's actor class, driven by asyncio
here without Ray)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from assay.service.ray_permits import CodePermits, PermitBook


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_user_holds_at_most_the_cap_and_others_are_not_held_back():
    book = PermitBook(Clock())
    first, second = book.take("alice", 1, 2, 30), book.take("alice", 1, 2, 30)
    assert first and second and book.take("alice", 1, 2, 30) is None
    assert book.take("bob", 2, 2, 30) is not None
    assert book.in_flight() == {"alice": 2, "bob": 2}
    assert book.give_back(first) and not book.give_back(first)
    assert book.take("alice", 1, 2, 30) is not None and book.in_flight()["alice"] == 2


def test_a_permit_not_renewed_ends_with_its_lease_and_a_renewed_one_does_not():
    clock = Clock()
    book = PermitBook(clock)
    dead, alive = book.take("alice", 1, 2, 30), book.take("alice", 1, 2, 30)
    assert dead and alive
    clock.now += 20
    book.renew([(alive, "alice", 1)], 30)
    clock.now += 15  # past the first lease: the holder that stopped renewing has died
    assert book.take("alice", 1, 2, 30) is not None  # the dead holder's permit went
    assert book.in_flight() == {"alice": 2}
    clock.now += 31
    assert book.expire() == 2 and book.in_flight() == {}


def test_renewals_put_permits_back_into_a_book_started_anew():
    held = PermitBook(Clock())
    permits = [(p, "alice", 1) for p in (held.take("alice", 1, 2, 30), held.take("alice", 1, 2, 30)) if p]
    restarted = PermitBook(Clock())  # Ray restarted the book's actor: it knows nothing
    restarted.renew(permits, 30)
    assert restarted.in_flight() == {"alice": 2} and restarted.take("alice", 1, 2, 30) is None
    assert restarted.give_back(permits[0][0]) and restarted.take("alice", 1, 2, 30) is not None


def test_a_killed_holders_permits_are_dropped_and_its_waiting_calls_get_none():
    async def scenario() -> None:
        book = CodePermits()
        killed = [await book.take("alice", 1, 2, 30, "run1:a"), await book.take("alice", 1, 2, 30, "run1:a")]
        other = await book.take("bob", 1, 2, 30, "run2:b")
        assert all(p.startswith("run1:a/") for p in killed) and book.book.in_flight() == {"alice": 2, "bob": 1}
        waiting = asyncio.create_task(book.take("alice", 1, 2, 30, "run1:a"))  # over the cap: it waits
        await asyncio.sleep(0.05)
        assert not waiting.done()
        assert await book.drop(["run1:a"]) == 2
        assert await asyncio.wait_for(waiting, 1) == ""  # its holder is dead: no permit, none counted
        assert book.book.in_flight() == {"bob": 1}
        assert await book.take("alice", 1, 2, 30, "run3:c")  # another actor of hers is not held back
        assert book.book.give_back(other) and await book.take("bob", 1, 2, 30, "run1:a") == ""

    # in a thread of its own: a test before it in this process may have left its thread's loop running
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, scenario()).result(timeout=30)
