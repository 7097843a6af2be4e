"""NodePool: the product spec's examples, the four libraries, outcomes and the pool's mechanics."""

from __future__ import annotations

import gc
import os
import threading

import pytest

from assay.core.interfaces import CodeCall
from assay.core.result import ErrorCode
from assay.sandbox import SandboxRunner
from assay.sandbox.node import NodePool, find_node, probe, runtime

pytestmark = pytest.mark.node_sandbox

LENGTH_CHECK = """
module.exports = async function evaluate(input, output, expected, metadata) {
  const minLength = metadata.minLength || 100;

  if (output.length < minLength) {
    return {
      passed: false,
      score: output.length / minLength,
      reason: `输出长度 ${output.length} 小于要求的 ${minLength}`
    };
  }

  return { passed: true, score: 1.0, reason: '长度符合要求' };
};
"""

KEYWORDS = """
const _ = require('lodash');

module.exports = async function evaluate(input, output, expected, metadata) {
  const keywords = metadata.keywords || [];
  const foundKeywords = keywords.filter(kw => output.includes(kw));
  const coverage = foundKeywords.length / keywords.length;

  return {
    passed: coverage >= 0.8,
    score: coverage,
    reason: `包含关键词 ${foundKeywords.length}/${keywords.length}`,
    details: { foundKeywords, missingKeywords: _.difference(keywords, foundKeywords) }
  };
};
"""


@pytest.fixture(scope="module")
def pool():
    with NodePool(size=2) as p:
        yield p


def run(pool, source, *args, **kw):
    return pool.call(CodeCall("nodejs", source, list(args) or ["in", "out", None, {}], **kw))


def test_spec_length_check(pool):
    short = pool.call(CodeCall("nodejs", LENGTH_CHECK, ["q", "abc", None, {"minLength": 6}]))
    assert short.ok, short
    assert short.value == {"passed": False, "score": 0.5, "reason": "输出长度 3 小于要求的 6"}
    long = pool.call(CodeCall("nodejs", LENGTH_CHECK, ["q", "x" * 120, None, {}]))
    assert long.value == {"passed": True, "score": 1.0, "reason": "长度符合要求"}
    assert long.limits["timeout_ms"] == 5000 and long.limits["memory_mb"] == 128
    assert long.duration_ms > 0
    # The Python sandbox's names for the same layers, plus the isolate.
    assert long.limits["layers"] == ["isolate", "netns", "rlimits", "landlock", "uid_drop", "seccomp"]


def test_spec_keyword_coverage_with_lodash(pool):
    meta = {"keywords": ["北京", "上海", "广州", "深圳", "杭州"]}
    out = pool.call(CodeCall("nodejs", KEYWORDS, ["q", "北京 上海 广州 深圳", None, meta]))
    assert out.ok, out
    assert out.value["passed"] is True and out.value["score"] == 0.8
    assert out.value["details"] == {"foundKeywords": ["北京", "上海", "广州", "深圳"], "missingKeywords": ["杭州"]}


def test_dayjs_validator_ajv(pool):
    src = """
    const dayjs = require('dayjs'), validator = require('validator'), Ajv = require('ajv');
    module.exports = async (input, output, expected, metadata) => {
      const ajv = new Ajv({ allErrors: true });
      const validate = ajv.compile({ type: 'object', required: ['age'], properties: { age: { type: 'integer', minimum: 0 } } });
      const ok = validate(JSON.parse(output));
      return { passed: ok && validator.isEmail(metadata.email), reason: dayjs(metadata.day).add(1, 'day').format('YYYY-MM-DD'),
               details: { errors: (validate.errors || []).map(e => e.instancePath + ' ' + e.message) } };
    };"""
    good = run(pool, src, "", '{"age": 3}', None, {"email": "a@b.org", "day": "2024-02-28"})
    assert good.value == {"passed": True, "reason": "2024-02-29", "details": {"errors": []}}, good
    bad = run(pool, src, "", '{"age": -1}', None, {"email": "nope", "day": "2024-12-31"})
    assert bad.value == {"passed": False, "reason": "2025-01-01", "details": {"errors": ["/age must be >= 0"]}}


@pytest.mark.parametrize("source", [
    "module.exports = function (i, o) { return { passed: o === 'out' }; }",
    "module.exports.evaluate = (i, o) => ({ passed: o === 'out' })",
    "exports.evaluate = async (i, o) => ({ passed: o === 'out' })",
    "async function evaluate(i, o) { return { passed: o === 'out' }; }",
    "module.exports = async (i, o) => { await new Promise(r => setTimeout(r, 20)); return { passed: o === 'out' }; }",
])
def test_export_styles_sync_async_and_timers(pool, source):
    out = run(pool, source)
    assert out.ok and out.value == {"passed": True}, out


def test_thrown_error_keeps_user_frames(pool):
    out = run(pool, "\nfunction helper() {\n  throw new TypeError('bad input');\n}\nmodule.exports = async () => helper();\n")
    assert out.error is ErrorCode.RUNTIME_ERROR
    assert out.message == "TypeError: bad input"
    assert "evaluator.js:3:" in out.traceback and "helper" in out.traceback
    assert "bootstrap" not in out.traceback and "worker.js" not in out.traceback


@pytest.mark.parametrize(("source", "fragment"), [
    ("module.exports = () => ({ passed: true, f() {} })", "function"),
    ("module.exports = () => { const a = { passed: true }; a.self = a; return a; }", "circular"),
    ("module.exports = () => ({ passed: true, s: Symbol('x') })", "symbol"),
    ("module.exports = () => 'x'.repeat(3 << 20)", "too large"),
    ("module.exports = () => undefined", "undefined"),
])
def test_invalid_outputs(pool, source, fragment):
    out = run(pool, source)
    assert out.error is ErrorCode.INVALID_OUTPUT, out
    assert fragment in out.message


@pytest.mark.parametrize(("source", "value"), [
    ("module.exports = () => NaN", "NaN"),
    ("module.exports = () => [Infinity, -Infinity, 10n, 2n ** 100n, -(2n ** 64n)]",
     ["Infinity", "-Infinity", 10, str(2 ** 100), str(-(2 ** 64))]),
    ("module.exports = () => 'a\\ud800b' + '\\udc00'", "a\ufffdb\ufffd"),
])
def test_odd_json_values_are_normalised(pool, source, value):
    out = run(pool, source)
    assert out.ok and out.value == value, out


def test_check_reports_syntax_line_and_missing_export(pool):
    assert pool.check("nodejs", "module.exports = async () => ({ passed: true })") is None
    msg = pool.check("nodejs", "const a = 1;\nconst b = ;\n")
    assert msg.startswith("SyntaxError at line 2")
    assert "does not export a function 'evaluate'" in pool.check("nodejs", "const x = 1;")
    assert "grade" in pool.check("nodejs", "module.exports.evaluate = () => 1", function="grade")
    assert pool.check("nodejs", "exports.grade = () => 1", function="grade") is None
    assert "python" in pool.check("python", "def evaluate(): pass")


def test_function_name_and_language(pool):
    out = pool.call(CodeCall("nodejs", "exports.grade = (i) => ({ passed: i === 1 })", [1], function="grade"))
    assert out.value == {"passed": True}
    wrong = pool.call(CodeCall("python", "def evaluate(*a): pass", []))
    assert wrong.error is ErrorCode.INVALID_CONFIG


def test_concurrent_threads_share_the_pool(pool):
    results: list = []

    def work(n: int) -> None:
        for k in range(10):
            results.append(run(pool, "module.exports = (i) => ({ passed: true, score: i / 100 })", n * 10 + k).value)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["score"] for r in results) == [i / 100 for i in range(60)]


def test_workers_recycled_after_max_calls_and_closed():
    with NodePool(size=1, max_calls=3) as p:
        pids = set()
        for _ in range(7):
            assert run(p, "module.exports = () => ({ passed: true })").ok
            pids.update(w.proc.pid for w in p._idle)
        assert len(pids) == 3
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_unavailable_without_node_modules(monkeypatch, tmp_path):
    monkeypatch.setattr(runtime, "NODE_MODULES", tmp_path / "node_modules")
    out = run(NodePool(size=1), "module.exports = () => 1")
    assert out.error is ErrorCode.UNAVAILABLE and "make node-deps" in out.message


def test_probe():
    info = probe()
    assert info["node"].startswith("v") and info["isolated_vm"] is True
    assert set(info["modules"]) == {"lodash", "dayjs", "validator", "ajv"}
    assert all(info["modules"].values())


def test_the_node_executable_comes_from_the_caller(monkeypatch, tmp_path):
    """Settings.node_binary reaches the pool through SandboxRunner; ASSAY_NODE is not read here."""
    missing = str(tmp_path / "no-node")
    monkeypatch.setenv("ASSAY_NODE", missing)
    with NodePool(size=1) as default:  # the environment is not consulted: node on PATH
        assert default.node == find_node() and run(default, "module.exports = () => 1").ok
    with SandboxRunner(size=1, node=missing) as runner:
        out = runner.call(CodeCall("nodejs", "module.exports = () => 1", []))
        assert out.error is ErrorCode.UNAVAILABLE and missing in out.message
        assert runner.check("nodejs", "const x = ;") is None  # nothing to say about the code
    with SandboxRunner(size=1, node=find_node()) as runner:
        assert runner.call(CodeCall("nodejs", "module.exports = () => 2", [])).value == 2


def test_a_pool_dropped_without_close_stops_its_workers():
    """weakref.finalize, as PythonPool: garbage collection stops the workers, not only exit."""
    p = NodePool(size=1)
    assert run(p, "module.exports = () => ({ passed: true })").ok
    pid = p._idle[0].proc.pid
    del p
    gc.collect()
    assert not os.path.exists(f"/proc/{pid}")


def test_weak_mode_comes_from_the_caller_not_the_environment(monkeypatch):
    monkeypatch.setenv("ASSAY_SANDBOX_ALLOW_WEAK", "1")  # read once, by Settings, not here
    with NodePool(size=1) as strict:
        assert "seccomp" in run(strict, "module.exports = () => 1").limits["layers"]
    with NodePool(size=1, weak=True) as weak:
        assert run(weak, "module.exports = () => 1").limits["layers"] == ["isolate", "netns", "rlimits"]


def test_start_up_failures_are_phrases(monkeypatch, tmp_path):
    """What keeps a worker from starting is said by a phrase (the pages say it in their language)."""
    from assay.core.messages import code_and_args

    monkeypatch.setattr(runtime, "NODE_MODULES", tmp_path / "node_modules")
    out = run(NodePool(size=1), "module.exports = () => 1")
    assert code_and_args(out.message) == ("sandbox.node.not_installed", {})
    missing = str(tmp_path / "no-node")
    out = run(NodePool(size=1, node=missing), "module.exports = () => 1")
    assert code_and_args(out.message) == ("sandbox.node.no_executable", {"node": repr(missing)})


def test_a_worker_that_refuses_to_start_is_a_phrase(tmp_path):
    """A 'node' that says what worker.js says when isolated-vm cannot be loaded."""
    from assay.core.messages import code_and_args

    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho '{\"ready\": false, \"error\": \"isolated-vm cannot be loaded: no binding\"}'\n")
    fake.chmod(0o755)
    with NodePool(size=1, node=str(fake), weak=True) as p:
        out = run(p, "module.exports = () => 1")
    assert out.error is ErrorCode.UNAVAILABLE and out.message.startswith("isolated-vm cannot be loaded: no binding")
    code, args = code_and_args(out.message)
    if code == "sandbox.node.hidden":  # tmp_path is private: the note on what uid 65534 cannot read comes after
        code, args = args["problem"]["code"], args["problem"]["args"]
    assert (code, args) == ("sandbox.node.no_isolate", {"error": "no binding"})
