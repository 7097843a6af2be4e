"""A timeout is reported when its deadline has really passed, saying what the code was doing, and
an evaluation that returns with timers (or threads) still pending says so. Both languages."""

from __future__ import annotations

import time

import pytest

from assay.core.interfaces import CodeCall
from assay.core.result import ErrorCode
from assay.sandbox.node import NodePool
from assay.sandbox.python import PythonPool

pytestmark = pytest.mark.node_sandbox

PRELUDE = "import collections\nmods = collections._sys.modules\n"  # past the import allow-list


@pytest.fixture(scope="module")
def pools():
    with PythonPool(size=1) as python, NodePool(size=1) as node:
        yield {"python": python, "nodejs": node}


def timed(pools, language: str, source: str, timeout_ms: int = 1000):
    started = time.monotonic()
    out = pools[language].call(CodeCall(language, source, [1, 2, 3, {}], timeout_ms=timeout_ms))
    return out, (time.monotonic() - started) * 1000


@pytest.mark.parametrize(("language", "source", "doing"), [
    ("nodejs", "module.exports = async () => { await new Promise((r) => setTimeout(r, 30000)); return 1; }",
     "still waiting on a timer (due "),
    ("nodejs", "module.exports = () => { for (;;) {} }", "still running"),
    ("python", "import time\ndef evaluate(*a):\n    time.sleep(30)\n", "still sleeping (waiting on a timer)"),
    ("python", "import asyncio\nasync def evaluate(*a):\n    await asyncio.sleep(30)\n", "still waiting on a timer or input"),
    ("python", "def evaluate(*a):\n    while True:\n        pass\n", "still running"),
    ("python", PRELUDE + "def evaluate(*a):\n    mods['threading'].Event().wait()\n",
     "still blocked (waiting on a lock or another thread)"),
])
def test_a_timeout_comes_after_its_deadline_and_says_what_the_code_was_doing(pools, language, source, doing):
    out, elapsed_ms = timed(pools, language, source)
    assert out.error is ErrorCode.TIMEOUT, out
    assert doing in out.message and "1000 ms ran out" in out.message, out.message
    assert elapsed_ms >= 1000  # no reason may claim a time that did not pass
    assert "ran past" not in out.message


@pytest.mark.parametrize(("language", "source", "note"), [
    ("nodejs", "module.exports = () => { setTimeout(() => {}, 10000); setTimeout(() => {}, 1); console.log('hi');"
               " return { passed: true }; }", "hi\n[assay: evaluate() returned with 2 timers still pending"),
    ("python", "import asyncio\nasync def evaluate(*a):\n    asyncio.get_running_loop().call_later(10, print)\n"
               "    return {'passed': True}\n", "[assay: evaluate() returned with 1 timer still pending"),
    ("python", PRELUDE + "import time\ndef evaluate(*a):\n    mods['threading'].Thread(target=time.sleep, args=(5,)).start()\n"
               "    print('hi')\n    return {'passed': True}\n", "hi\n[assay: evaluate() returned with 1 thread still pending"),
])
def test_returning_with_timers_pending_is_said(pools, language, source, note):
    out, _ = timed(pools, language, source, timeout_ms=3000)
    assert out.ok and out.value == {"passed": True}, out
    assert out.output.startswith(note), out.output


def test_nothing_is_said_when_nothing_is_pending(pools):
    for language, source in (("nodejs", "module.exports = async () => { await new Promise((r) => setTimeout(r, 1)); return 1; }"),
                             ("python", "import asyncio\nasync def evaluate(*a):\n    await asyncio.sleep(0.001)\n    return 1\n")):
        out, _ = timed(pools, language, source)
        assert out.ok and out.value == 1 and out.output is None, out
