"""``Pacer``: batch sizes that keep each batch near its time budget."""

from __future__ import annotations

from assay.service.pace import Pacer


def test_slow_work_stays_at_one_item_a_batch():
    pacer = Pacer(0.05, first=1, largest=256)
    pacer.observe(1, 1.5)
    assert pacer.size == 1


def test_fast_work_grows_fourfold_a_step_up_to_the_budget_and_the_largest():
    pacer = Pacer(0.05, first=1, largest=256)
    sizes = []
    for _ in range(6):
        pacer.observe(pacer.size, pacer.size * 0.0001)  # 0.1 ms an item: 500 fit the budget
        sizes.append(pacer.size)
    assert sizes == [4, 16, 64, 256, 256, 256]
    pacer = Pacer(0.05, first=1, largest=1000)
    for _ in range(8):
        pacer.observe(pacer.size, pacer.size * 0.001)  # 1 ms an item: 50 fit
    assert pacer.size == 50


def test_work_that_slows_down_shrinks_the_next_batch_at_once():
    pacer = Pacer(0.5, first=64, largest=256)
    pacer.observe(64, 64 * 0.1)
    assert pacer.size == 5


def test_a_short_batch_does_not_grow_the_size():
    pacer = Pacer(0.05, first=16, largest=256)
    pacer.observe(2, 0.0001)
    assert pacer.size == 16
    pacer.observe(0, 0.0)
    assert pacer.size == 16
