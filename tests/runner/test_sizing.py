"""``runner.sizing``: batch sizes that keep each batch near its time budget (``Pacer``, for the
local engine's chunks and the service's pieces and slices alike), and the sandbox's workers."""

from __future__ import annotations

import os

from assay.runner.sizing import Pacer, code_slots, local_sandbox_workers
from assay.sandbox import SandboxRunner


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


def test_a_local_sandbox_has_one_worker_a_core_and_a_servers_four():
    cores = os.cpu_count() or 1
    assert local_sandbox_workers() == cores and local_sandbox_workers(shared=True) == 4 * cores
    assert local_sandbox_workers(3) == local_sandbox_workers(3, shared=True) == 3


def test_the_code_slots_are_the_workers_of_the_runner_that_owns_the_pools():
    cores = os.cpu_count() or 1
    assert code_slots(SandboxRunner(size=3)) == 3 and code_slots(SandboxRunner()) == cores
    # A sandbox service elsewhere: its --workers when the settings say it, else its default.
    from assay.sandbox.remote import RemoteCodeRunner

    remote = RemoteCodeRunner("http://127.0.0.1:9", None)
    assert code_slots(remote, 5) == 5 and code_slots(remote) == cores
    assert code_slots(None) == cores
