"""``RemoteCodeRunner`` and the code grader through it: the same grades as the local pool, Node.js
checks with their line, and ``SANDBOX_URL`` choosing it in ``build_resources``."""

from __future__ import annotations

import pytest
from service_process import SECRET

from assay.core.errors import AssayError
from assay.core.interfaces import CodeCall, Resources
from assay.core.result import ErrorCode
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import LazyCodeRunner, build_resources, describe_code_runner
from assay.sandbox import SandboxRunner
from assay.sandbox.remote import RemoteCodeRunner
from assay.settings import Settings

SAMPLE = Sample(id="s", input="q", output="the capital is Paris", expected="Paris", metadata={"min": 5})
CONFIGS = [
    {"language": "python", "code": "def evaluate(i, o, e, m):\n    return {'passed': e in o, 'reason': 'found'}\n"},
    {"language": "python", "code": "def evaluate(i, o, e, m):\n    return {'passed': True, 'score': 0.4, "
                                   "'details': {'limits': 'mine', 'n': len(o)}}\n"},
    {"language": "python", "code": "async def evaluate(i, o, e, m):\n    return {'passed': 1}\n"},
    {"language": "python", "code": "def evaluate(i, o, e, m):\n    print('dbg')\n    return 1 / 0\n"},
    {"language": "python", "code": "def evaluate(i, o, e, m):\n    return {'passed': len(o) > m['min'], "
                                   "'reason': 'x' * 9000}\n"},
    {"language": "python", "code": "def evaluate(i, o, e, m):\n    raise SystemExit(3)\n"},  # a phrased error
    {"assertions": ["len(output) > 3", "expected in output", "output.startswith('no')"]},
    pytest.param({"language": "nodejs", "code": "module.exports = (i, o, e, m) => ({ passed: o.includes(e), "
                                                "score: 0.5, reason: require('dayjs')('2024-01-02').format('YYYY') })"},
                 marks=pytest.mark.node_sandbox),
    pytest.param({"language": "nodejs", "assertions": ["output.length > 3", "output.startsWith('no')"]},
                 marks=pytest.mark.node_sandbox),
    pytest.param({"language": "nodejs", "code": "module.exports = () => { throw new TypeError('bad') }"},
                 marks=pytest.mark.node_sandbox),
]


@pytest.fixture(scope="module")
def local():
    with SandboxRunner(size=1) as runner:
        yield runner


def _graded(config, runner):
    return compile_spec({"type": "code", "config": config}).build(Resources(code_runner=runner)).grade(SAMPLE)


@pytest.mark.parametrize("config", CONFIGS)
def test_the_remote_path_grades_as_the_local_pool(config, remote, local):
    there, here = _graded(config, remote), _graded(config, local)
    keep = ("status", "passed", "score", "reason", "reason_code", "reason_args", "error")
    assert there.model_dump(include=set(keep)) == here.model_dump(include=set(keep))
    drop = {"limits", "traceback"}
    assert {k: v for k, v in there.details.items() if k not in drop} == \
           {k: v for k, v in here.details.items() if k not in drop}
    assert there.details["limits"]["layers"] == here.details["limits"]["layers"]


def test_a_phrased_error_keeps_its_phrase_across_the_service(remote):
    result = _graded({"language": "python", "code": "def evaluate(i, o, e, m):\n    raise SystemExit(3)\n"}, remote)
    assert (result.reason, result.reason_code, result.reason_args) == \
        ("the evaluator called exit(3)", "sandbox.exit_called", {"code": "3"})


def test_check_goes_to_the_service(remote):
    assert "line 1" in remote.check("python", "def evaluate(:\n")
    assert remote.check("python", "def other():\n    pass\n") is not None
    assert remote.check("python", "def evaluate(*a):\n    pass\n") is None


@pytest.mark.node_sandbox
def test_node_syntax_errors_found_remotely_carry_their_line(remote):
    problem = remote.check("nodejs", "module.exports = function () {\n  return {;\n}\n")
    assert problem is not None and "line 2" in problem
    assert remote.check("nodejs", "module.exports = () => 1") is None


def test_a_wrong_secret_is_unavailable_not_a_failed_grade(service):
    with RemoteCodeRunner(service.url, "wrong-secret-wrong-secret") as runner:
        result = _graded(CONFIGS[0], runner)
        assert result.status == "error" and result.error is ErrorCode.UNAVAILABLE
        assert "401" in result.reason and "SANDBOX_SECRET" in result.reason and "wrong-secret" not in result.reason
        # validation still checks Python locally when the service will not answer
        assert "line 1" in runner.check("python", "def evaluate(:\n")
        assert runner.check("nodejs", "const x = ;") is None


def test_a_call_the_spec_does_not_shape_goes_to_call(remote):
    out = remote.call(CodeCall("python", "def evaluate(a):\n    return a * 3\n", [14], memory_mb=64))
    assert out.ok and out.value == 42 and out.limits["memory_mb"] == 64
    out = remote.call(CodeCall("python", "def evaluate(*a):\n    return 1\n", [1, 2], timeout_ms=10_000_000))
    assert out.error is ErrorCode.INVALID_CONFIG and "timeout" in out.message


def test_batches_through_the_client(remote):
    code = "def evaluate(i, o, e, m):\n    return {'passed': o == e}\n"
    outs = remote.execute_batch("python", code, [{"output": "a", "expected": "a"}, {"output": "a", "expected": "b"}])
    assert [o.value["passed"] for o in outs] == [True, False]


def test_settings_and_resources_choose_the_service(service):
    settings = Settings.from_env({"SANDBOX_URL": service.url + "/", "SANDBOX_SECRET": SECRET})
    assert settings.sandbox_url == service.url and SECRET not in repr(settings)
    resources = build_resources(settings)
    assert isinstance(resources.code_runner, LazyCodeRunner)
    try:
        assert _graded(CONFIGS[0], resources.code_runner).passed is True
        assert isinstance(resources.code_runner._get(), RemoteCodeRunner)
    finally:
        resources.code_runner.close()
    assert service.url in describe_code_runner(settings)
    assert "local" in describe_code_runner(Settings.from_env({}))
    with pytest.raises(AssayError, match="SANDBOX_URL"):
        Settings.from_env({"SANDBOX_URL": "127.0.0.1:8090"})


def test_a_batch_keeps_within_its_spread_in_the_service(remote):
    """``CodeBatch.spread`` travels to the service: a user's cap below the service's workers holds
    there as it does locally (counted from inside the sandbox, never by time)."""
    from dataclasses import replace

    from in_flight import STAMPED, peak, stamps

    from assay.core.interfaces import CodeBatch

    batch = CodeBatch("python", STAMPED, [["q", "a", "a", {"pause": 0.1}] for _ in range(6)])
    for spread, most in ((1, 1), (0, 2)):
        outcomes = remote.call_batch(replace(batch, spread=spread))
        assert all(o.ok and o.value["passed"] for o in outcomes), outcomes
        assert peak(stamps(o.value["details"] for o in outcomes)) == most, spread
