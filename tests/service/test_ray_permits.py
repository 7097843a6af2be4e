"""The cluster's book of code permits (``service.ray_permits.PermitBook``), on a clock the test
moves: the cap per user, permits given back, leases that end when not renewed (a dead holder
frees its permits), and renewals that put permits back into a book started anew."""

from __future__ import annotations

from assay.service.ray_permits import PermitBook


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
