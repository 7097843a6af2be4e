"""Batch sizes that follow the measured speed of the work, so each batch takes about a given time.

Used where a batch is the unit someone else waits for: a piece of a sandbox batch holding its
workers while another user waits (``service.fairness``), and the results of a slice committed
together while a user watches its progress (``service.slices``). Sizes start small, so the first
batch of slow work is one item, and grow at most fourfold a step while the work stays fast.
"""

from __future__ import annotations


class Pacer:
    """The size of the next batch: about ``budget_s`` of work at the speed measured so far,
    between ``smallest`` and ``largest``, starting at ``first``."""

    def __init__(self, budget_s: float, first: int, largest: int, smallest: int = 1) -> None:
        self.budget_s = budget_s
        self.smallest = max(1, smallest)
        self.largest = max(self.smallest, largest)
        self.size = max(self.smallest, min(first, self.largest))

    def observe(self, count: int, seconds: float) -> None:
        """``count`` items took ``seconds``: the next size fits the budget at that speed (at most
        four times the batch measured: one fast batch does not prove the next will be; a short one,
        such as the last of a list, proves nothing beyond the size it had)."""
        if count <= 0:
            return
        per_item = seconds / count
        fits = int(self.budget_s / per_item) if per_item > 0 else self.largest
        self.size = max(self.smallest, min(self.largest, fits, max(self.size, 4 * count)))
