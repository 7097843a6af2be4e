"""The batched Node.js path: a chunk of samples per worker request, a fresh context and limits per sample.

Batches are checked against the same samples run one call at a time (value, error code,
message, output, traceback), and against what a sample may leave behind for the next one.
"""

from __future__ import annotations

import random
import re

import pytest

from assay.core.interfaces import CodeBatch, CodeCall
from assay.core.result import ErrorCode
from assay.sandbox import chunks as chunks_module
from assay.sandbox.node import NodePool

pytestmark = pytest.mark.node_sandbox

MIXED = r"""
const _ = require('lodash');
module.exports = async function evaluate(input, output, expected, metadata) {
  const kind = metadata.kind;
  if (kind === 'print') console.log('sample', input, 'é\u2603', { n: input });
  if (kind === 'throw') throw new RangeError(`bad sample ${input}`);
  if (kind === 'throw_value') throw input;
  if (kind === 'function') return { passed: true, f() {} };
  if (kind === 'undefined') return undefined;
  if (kind === 'nan') return { passed: true, score: NaN, big: 2n ** 70n };
  if (kind === 'timer') await new Promise((r) => setTimeout(r, 5));
  if (kind === 'never') return new Promise(() => {});
  return { passed: output === expected, score: output.length / 100, reason: String(input),
           details: { words: _.words(output), left: _.difference([1, 2, 3], [input % 3]) } };
};
"""
KINDS = ["plain", "plain", "plain", "print", "throw", "throw_value", "function", "undefined", "nan", "timer", "never"]

# What a sample leaves behind, and what the next one sees of it: nothing, in a fresh context.
MUTATES = r"""
const _ = require('lodash');
module.exports = (i) => {
  const seen = [typeof _.zz, typeof _.difference([1], []).map, ({}).x, typeof globalThis.leak,
                typeof Array.prototype.pwned, JSON.stringify([1]), _.difference([1, 2], [1]).length, ({}).late];
  // Each write either throws here (frozen: the code is strict) or stays in this sample.
  for (const attempt of [() => _.mixin({ zz: () => 'zz' }), () => { _.difference = () => 'mutated'; },
                         () => { Object.prototype.x = 1; }, () => { globalThis.leak = i; },
                         () => { Array.prototype.pwned = true; }, () => { JSON.stringify = () => 'pwned'; }]) {
    try { attempt(); } catch (_) { /* refused */ }
  }
  setTimeout(() => { Object.prototype.late = true; }, 0);
  return { passed: true, seen };
};
"""
FRESH = ["undefined", "function", None, "undefined", "undefined", "[1]", 1, None]


@pytest.fixture(scope="module")
def node_pool():
    with NodePool(size=2) as p:
        yield p


def fields(outcome):
    return (outcome.value, outcome.error, outcome.message, outcome.output, outcome.traceback)


def _no_eval_origin(outcome_fields):
    *rest, traceback = outcome_fields
    return (*rest, traceback and re.sub(r"\(eval at [^,]*, ", "(eval at ..., ", traceback))


def one_by_one(pool, source, args, **kw):
    return [pool.call(CodeCall("nodejs", source, a, **kw)) for a in args]


def test_batch_matches_one_call_at_a_time(node_pool):
    rng = random.Random(11)
    args = []
    for i in range(60):
        text = rng.choice(["Paris", "paris", "", "日本語 テキスト", "a\ud800b", "x" * 50, "emoji 😀"])
        args.append([i, text, rng.choice([text, "Paris"]), {"kind": rng.choice(KINDS)}])
    batched = node_pool.call_batch(CodeBatch("nodejs", MIXED, args, timeout_ms=3000))
    single = one_by_one(node_pool, MIXED, args, timeout_ms=3000)
    assert [fields(o) for o in batched] == [fields(o) for o in single]
    kinds = {a[3]["kind"]: o for a, o in zip(args, batched)}
    assert kinds["print"].output.startswith("sample ") and "é☃" in kinds["print"].output
    assert kinds["throw"].error is ErrorCode.RUNTIME_ERROR and "evaluator.js" in kinds["throw"].traceback
    assert kinds["function"].error is ErrorCode.INVALID_OUTPUT
    assert kinds["nan"].value == {"passed": True, "score": "NaN", "big": str(2 ** 70)}
    assert "never settle" in kinds["never"].message
    assert all(o.limits["layers"] and o.limits["timeout_ms"] == 3000 for o in batched)


def test_a_sample_that_loops_times_out_alone(node_pool):
    source = "module.exports = (i) => { if (i === 4) for (;;) {} return { passed: true, score: i }; }"
    args = [[i] for i in range(10)]
    out = node_pool.call_batch(CodeBatch("nodejs", source, args, timeout_ms=300))
    assert [o.value["score"] for k, o in enumerate(out) if k != 4] == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert out[4].error is ErrorCode.TIMEOUT
    assert fields(out[4]) == fields(node_pool.call(CodeCall("nodejs", source, [4], timeout_ms=300)))


def test_a_sample_past_the_memory_limit_fails_alone(node_pool):
    source = """module.exports = (i) => {
      if (i === 2) { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)); }
      return { passed: true, score: i, n: new Array(1000).fill(i).length };
    };"""
    out = node_pool.call_batch(CodeBatch("nodejs", source, [[i] for i in range(6)], memory_mb=64))
    assert out[2].error is ErrorCode.MEMORY and out[2].message == "the evaluation exceeded the 64 MB memory limit"
    assert [o.value["score"] for k, o in enumerate(out) if k != 2] == [0, 1, 3, 4, 5]


def test_nothing_a_sample_changes_reaches_the_next():
    args = [[i] for i in range(8)]
    with NodePool(size=1) as pool:  # one chunk, one worker, one isolate: the samples run back to back
        out = pool.call_batch(CodeBatch("nodejs", MUTATES, args))
    assert [o.value["seen"] for o in out] == [FRESH] * len(args), out[1]


@pytest.mark.parametrize("source", [
    "const fs = require('fs'); module.exports = () => ({ passed: true });",
    "module.exports = () => ({ passed: true, reason: typeof process + typeof require('child_process') });",
    "module.exports = function () { const p = this.constructor.constructor('return process')(); return { passed: true, reason: p.env.PATH }; }",
    "module.exports = (i) => { const p = i.constructor.constructor('return process')(); return { passed: true, reason: p.env.PATH }; }",
    "module.exports = () => ({ passed: true, reason: typeof globalThis.process + typeof fetch + typeof WebAssembly });",
    "module.exports = async () => ({ passed: true, reason: String(await import('fs')) })",
])
def test_escapes_fail_as_in_a_single_call(node_pool, source):
    args = [[{"k": 1}], ["x"], [{"k": 2}]]
    batched = node_pool.call_batch(CodeBatch("nodejs", source, args, timeout_ms=2000))
    single = one_by_one(node_pool, source, args, timeout_ms=2000)
    # V8 caches code made by the Function constructor per isolate, with the position of the call
    # that first made it: an "eval at" frame may point at an earlier evaluation's call, batched or not.
    assert [_no_eval_origin(fields(o)) for o in batched] == [_no_eval_origin(fields(o)) for o in single]
    for o in batched:
        assert not o.ok or "/bin" not in str(o.value), o


def test_arguments_that_are_not_json_fail_only_their_sample(node_pool):
    source = "module.exports = (x) => ({ passed: true, score: x })"
    out = node_pool.call_batch(CodeBatch("nodejs", source, [[1], [float("nan")], [{1, 2}], [2 ** 80], [3]]))
    assert [o.error for o in out] == [None, None, ErrorCode.INVALID_CONFIG, None, None]
    assert out[1].value == {"passed": True, "score": None}  # NaN arrives as null, as in Python
    assert out[2].message.startswith("the arguments are not JSON data")
    assert fields(out[3]) == fields(node_pool.call(CodeCall("nodejs", source, [2 ** 80])))  # a float in JavaScript
    assert out[4].value == {"passed": True, "score": 3}


def test_a_worker_killed_mid_chunk_hands_the_rest_to_a_fresh_one():
    source = "module.exports = (i) => { if (i === 3) for (;;) {} return { passed: true, score: i }; }"
    started = []
    with NodePool(size=1, margin_s=-0.2) as pool:  # the host's deadline fires before the worker's own
        start = pool._start
        pool._start = lambda node: started.append(start(node)) or started[-1]
        out = pool.call_batch(CodeBatch("nodejs", source, [[i] for i in range(7)], timeout_ms=400))
        assert out[3].error is ErrorCode.TIMEOUT and "worker killed" in out[3].message
        assert [o.value["score"] for k, o in enumerate(out) if k != 3] == [0, 1, 2, 4, 5, 6]
        assert len(started) == 2 and started[0].proc.returncode is not None


def test_workers_are_recycled_by_samples(monkeypatch):
    started = []
    with NodePool(size=1, max_calls=4) as pool:
        start = pool._start
        pool._start = lambda node: started.append(start(node)) or started[-1]
        out = pool.call_batch(CodeBatch("nodejs", "module.exports = (i) => i * 2", [[i] for i in range(10)]))
        assert [o.value for o in out] == [i * 2 for i in range(10)]
        assert len(started) == 3 and started[-1].calls == 2


def test_chunks_run_on_every_worker_and_keep_the_order(node_pool, monkeypatch):
    monkeypatch.setattr(chunks_module, "CHUNK_SAMPLES", 16)
    out = node_pool.call_batch(CodeBatch("nodejs", "module.exports = (i, s) => ({ i, s })", [[i, "é" * i] for i in range(100)]))
    assert [o.value for o in out] == [{"i": i, "s": "é" * i} for i in range(100)]
    assert chunks_module.cut([(i, "[1]") for i in range(100)], 2)[0] == [(i, "[1]") for i in range(16)]


def test_limits_language_and_empty_batches(node_pool):
    assert node_pool.call_batch(CodeBatch("nodejs", "module.exports = () => 1", [])) == []
    wrong = node_pool.call_batch(CodeBatch("python", "def evaluate(): pass", [[], []]))
    assert [o.error for o in wrong] == [ErrorCode.INVALID_CONFIG] * 2
    syntax = node_pool.call_batch(CodeBatch("nodejs", "module.exports = (", [[1], [2]]))
    assert [fields(o) for o in syntax] == [fields(node_pool.call(CodeCall("nodejs", "module.exports = (", [1])))] * 2


def test_a_closed_pool_answers_unavailable():
    pool = NodePool(size=2)
    pool.close()
    out = pool.call_batch(CodeBatch("nodejs", "module.exports = () => 1", [[i] for i in range(5)]))
    assert [o.error for o in out] == [ErrorCode.UNAVAILABLE] * 5
