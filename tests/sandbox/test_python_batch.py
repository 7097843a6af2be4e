"""The batched Python path: a chunk of samples per confined child, limits and a fresh module per sample.

Every batch is checked against the same samples run one call at a time: the outcomes must be
the same (value, error code, message, output, traceback), whatever happens in the chunk.
"""

from __future__ import annotations

import random

import pytest
from python_helpers import assert_benign

from assay.core.interfaces import CodeBatch, CodeCall
from assay.core.result import ErrorCode
from assay.sandbox import chunks as chunks_module

PRELUDE = "import collections\nmods = collections._sys.modules\nos = mods['os']\n"
MIXED = PRELUDE + '''
def evaluate(input, output, expected, metadata):
    kind = metadata.get("kind")
    if kind == "print":
        print("sample", input, "é\\u2603")
    if kind == "raise":
        raise ValueError(f"bad sample {input}")
    if kind == "nan":
        return {"passed": True, "score": float("nan")}
    if kind == "big":
        return {"passed": True, "details": {"n": 2 ** 80}}
    if kind == "not_json":
        return {"passed": object()}
    if kind == "exit":
        os._exit(3)
    if kind == "sleep":
        while True:
            pass
    if kind == "memory":
        hog = bytearray(512 << 20)
        return {"passed": len(hog) > 0}
    return {"passed": output == expected, "score": len(output) / 100, "reason": input}
'''
KINDS = ["plain", "plain", "plain", "print", "raise", "nan", "big", "not_json", "exit", "memory"]


def _outcome_fields(outcome):
    return (outcome.value, outcome.error, outcome.message, outcome.output, outcome.traceback)


def _batch(source, args, **kw):
    return CodeBatch("python", source, args, **kw)


def test_batch_matches_one_call_at_a_time(pool):
    rng = random.Random(7)
    args = []
    for i in range(60):
        kind = rng.choice(KINDS)
        text = rng.choice(["Paris", "paris", "", "日本語", "a\ud800b", "x" * 50])
        args.append([i, text, rng.choice([text, "Paris"]), {"kind": kind}])
    batched = pool.call_batch(_batch(MIXED, args, timeout_ms=2000))
    single = [pool.call(CodeCall("python", MIXED, a, timeout_ms=2000)) for a in args]
    assert [_outcome_fields(o) for o in batched] == [_outcome_fields(o) for o in single]
    kinds = {a[3]["kind"]: o for a, o in zip(args, batched)}
    assert kinds["exit"].error == ErrorCode.RUNTIME_ERROR and "exit status 3" in kinds["exit"].message
    assert kinds["memory"].error == ErrorCode.MEMORY
    assert kinds["print"].output.startswith("sample ")
    assert_benign(pool)


def test_a_sample_past_its_time_fails_alone(pool):
    args = [[i, "a", "a", {"kind": "sleep" if i == 3 else "plain"}] for i in range(8)]
    outcomes = pool.call_batch(_batch(MIXED, args, timeout_ms=300))
    assert outcomes[3].error == ErrorCode.TIMEOUT, outcomes[3]
    assert all(o.ok and o.value["passed"] for i, o in enumerate(outcomes) if i != 3), outcomes


def test_every_sample_has_its_whole_time(pool):
    """Eight samples of 150 ms each under a 400 ms limit: the deadline is per sample, not per chunk."""
    source = "import time\ndef evaluate(*a):\n    time.sleep(0.15)\n    return {'passed': True}\n"
    outcomes = pool.call_batch(_batch(source, [[i] for i in range(8)], timeout_ms=400))
    assert all(o.ok for o in outcomes), outcomes


def test_output_belongs_to_its_own_sample(pool):
    source = "def evaluate(i):\n    if i % 3:\n        print('printed by', i)\n    return {'passed': True}\n"
    outcomes = pool.call_batch(_batch(source, [[i] for i in range(30)]))
    for i, o in enumerate(outcomes):
        assert o.output == (f"printed by {i}\n" if i % 3 else None), (i, o)


def test_each_sample_gets_fresh_globals_and_builtins(pool):
    source = '''
seen = []
def evaluate(i):
    seen.append(i)
    global counter
    counter = globals().get("counter", 0) + 1
    broken = len("abc") != 3
    __builtins__["len"] = lambda x: -1
    return {"passed": seen == [i] and counter == 1 and not broken}
'''
    outcomes = pool.call_batch(_batch(source, [[i] for i in range(20)]))
    assert all(o.ok and o.value["passed"] for o in outcomes), outcomes


def test_a_thread_left_running_does_not_meet_the_next_sample(pool):
    source = PRELUDE + '''
thread, time = mods["_thread"], mods["time"]
def evaluate(i):
    alive = thread._count()
    if i == 0:
        thread.start_new_thread(time.sleep, (2,))
    return {"passed": alive == 0}
'''
    outcomes = pool.call_batch(_batch(source, [[i] for i in range(5)]))
    assert all(o.ok and o.value["passed"] for o in outcomes), outcomes


def test_arguments_that_are_not_json_fail_only_their_sample(pool):
    source = "def evaluate(x):\n    return {'passed': True}\n"
    outcomes = pool.call_batch(_batch(source, [[1], [{1, 2}], [3]]))
    assert outcomes[0].ok and outcomes[2].ok
    assert outcomes[1].error == ErrorCode.INVALID_CONFIG


def test_non_finite_numbers_arrive_as_null_and_big_integers_exact(pool):
    source = "def evaluate(x):\n    return {'passed': True, 'details': {'got': repr(x)}}\n"
    nan, inf = float("nan"), float("inf")
    args = [[nan], [{"m": [1.5, -inf]}], [[2 ** 80, nan]], [["\udc00", inf]]]
    got = [o.value["details"]["got"] for o in pool.call_batch(_batch(source, args))]
    assert got == ["None", "{'m': [1.5, None]}", f"[{2 ** 80}, None]", "['\\udc00', None]"]


def test_chunks_are_cut_by_count_and_size(pool, monkeypatch):
    monkeypatch.setattr(chunks_module, "CHUNK_SAMPLES", 7)
    monkeypatch.setattr(chunks_module, "CHUNK_BYTES", 2000)
    source = "def evaluate(i, text):\n    return {'passed': len(text) == i}\n"
    args = [[n, "x" * n] for n in (5, 900, 900, 900, 3000, 1, 2, 3, 4, 5, 6, 7, 8, 9)]
    outcomes = pool.call_batch(_batch(source, args))
    assert [o.value["passed"] for o in outcomes] == [True] * len(args)
    chunks = chunks_module.cut([(i, b"x" * (len(a[1]) + 10)) for i, a in enumerate(args)], 1)
    assert all(len(c) <= 7 and (len(c) == 1 or sum(len(x) for _, x in c) <= 2000) for c in chunks)
    assert [i for c in chunks for i, _ in c] == list(range(len(args)))


@pytest.mark.parametrize("hostile", [
    "os.write(1, b'x' * (3 << 20))",  # floods the output pipe past its cap
    "os.kill(os.getpid(), 9)",  # denied by the sandbox: no signals
])
def test_hostile_sample_leaves_the_rest_of_the_chunk_graded(pool, hostile):
    source = PRELUDE + f"def evaluate(i):\n    if i == 2:\n        {hostile}\n    return {{'passed': True}}\n"
    outcomes = pool.call_batch(_batch(source, [[i] for i in range(6)], timeout_ms=3000))
    assert all(o.ok for i, o in enumerate(outcomes) if i != 2), outcomes
    assert len(outcomes[2].output or "") <= 70_000


def test_a_closed_pool_answers_unavailable_for_a_batch_of_many_chunks():
    from assay.sandbox.python import PythonPool

    closed = PythonPool(2)
    closed.close()
    outcomes = closed.call_batch(_batch("def evaluate(i):\n    return {'passed': True}\n", [[i] for i in range(600)]))
    assert len(outcomes) == 600 and {o.error for o in outcomes} == {ErrorCode.UNAVAILABLE}


def test_a_batch_runs_on_at_most_spread_workers_at_once(pool, monkeypatch):
    from in_flight import STAMPED, peak

    monkeypatch.setattr(chunks_module, "CHUNK_SAMPLES", 2)  # more chunks than workers: lanes take them in turn
    args = [["q", "a", "a", {"pause": 0.1}] for _ in range(8)]
    for spread, most in ((1, 1), (0, pool.size)):
        outcomes = pool.call_batch(_batch(STAMPED, args, spread=spread))
        assert all(o.ok and o.value["passed"] for o in outcomes), outcomes
        assert peak((o.value["details"]["began"], o.value["details"]["ended"]) for o in outcomes) == most, spread
