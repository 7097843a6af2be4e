"""A sandbox worker starts under a busy parent: a server with many connections holds more file
descriptors than a worker's ``nofile`` limit (64) until exec closes them, and the confinement
must not lower the limit before the opens it still makes itself (landlock's ruleset and paths).
Before the fix, a parent holding 100 descriptors could not start a Node.js worker at all
("confinement failed: landlock create_ruleset: Too many open files")."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from assay.core.interfaces import CodeCall
from assay.sandbox.python import PythonPool

PY = "def evaluate(input, output, expected, metadata):\n    import json\n    return {'passed': output == 'o'}\n"
JS = "module.exports = async (input, output) => ({ passed: output === 'o' })"


@pytest.fixture
def busy() -> Iterator[None]:
    held = [os.pipe() for _ in range(100)]  # 200 descriptors, far past a worker's 64
    yield
    for read, write in held:
        os.close(read)
        os.close(write)


def test_a_python_worker_starts_and_grades_under_a_busy_parent(busy):
    with PythonPool(size=1) as pool:
        out = pool.call(CodeCall("python", PY, ["q", "o", None, {}]))
    assert out.ok and out.value == {"passed": True}, out


@pytest.mark.node_sandbox
def test_a_node_worker_starts_and_grades_under_a_busy_parent(busy):
    from assay.sandbox.node import NodePool

    with NodePool(size=1) as pool:
        out = pool.call(CodeCall("nodejs", JS, ["q", "o", None, {}]))
    assert out.ok and out.value == {"passed": True}, out
