"""Hostile evaluators through the remote path (the code grader, ``RemoteCodeRunner``, the spec's
``/execute``): each is stopped or refused as in the local pool, the service's own secret and
port stay out of reach, and a benign evaluation still grades afterwards."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from service_process import SECRET

from assay.core.interfaces import Resources
from assay.core.result import ErrorCode
from assay.core.sample import Sample
from assay.core.spec import compile_spec

PRELUDE = "import collections\nmods = collections._sys.modules\nos = mods['os']\n"
MARKER = "/tmp/assay-remote-pwned"
PY_ATTACKS = {
    "infinite-loop": ("def evaluate(i, o, e, m):\n    while True:\n        pass\n", ErrorCode.TIMEOUT),
    "memory-bomb": ("def evaluate(i, o, e, m):\n    hog = []\n    while True:\n        hog.append(' ' * (1 << 20))\n",
                    ErrorCode.MEMORY),
    "fork-bomb": (PRELUDE + "def evaluate(i, o, e, m):\n    while True:\n        os.fork()\n", ErrorCode.RUNTIME_ERROR),
}
PY_PROBES = {  # each returns what it got: every attempt must have been refused
    "read-files": PRELUDE + (
        "def evaluate(i, o, e, m):\n    got = []\n"
        "    for path in ('/etc/passwd', '/proc/1/environ', f'/proc/{m[\"service_pid\"]}/environ'):\n"
        "        try:\n            got.append(open(path).read()[:20])\n"
        "        except OSError as exc:\n            got.append(type(exc).__name__)\n"
        "    return {'passed': set(got) <= {'PermissionError'}, 'reason': repr(got)}\n"),
    "write-file": PRELUDE + (
        f"def evaluate(i, o, e, m):\n    try:\n        open({MARKER!r}, 'w').write('x')\n"
        "        return {'passed': False, 'reason': 'wrote'}\n"
        "    except OSError as exc:\n        return {'passed': type(exc).__name__ == 'PermissionError'}\n"),
    "reach-the-service": PRELUDE + (
        "socket = mods['socket']\n"
        "def evaluate(i, o, e, m):\n    try:\n"
        "        s = socket.create_connection(('127.0.0.1', m['port']), timeout=1)\n"
        "        s.send(b'POST /execute HTTP/1.1\\r\\n\\r\\n')\n        return {'passed': False, 'reason': 'connected'}\n"
        "    except OSError as exc:\n        return {'passed': type(exc).__name__ == 'PermissionError', "
        "'reason': type(exc).__name__}\n"),
    "environment": PRELUDE + (
        "def evaluate(i, o, e, m):\n    env = dict(os.environ)\n"
        "    return {'passed': set(env) <= {'PATH', 'LANG'}, 'reason': repr(sorted(env))}\n"),
}
JS_ATTACKS = {
    "infinite-loop": ("module.exports = () => { while (true) {} }", ErrorCode.TIMEOUT),
    "heap-bomb": ("module.exports = () => { const a = []; while (true) a.push(new Array(1e6).fill(1)); }",
                  ErrorCode.MEMORY),
    "require-fs": ("const fs = require('fs');\nmodule.exports = () => ({ passed: fs.existsSync('/etc/passwd') })",
                   ErrorCode.RUNTIME_ERROR),
}
JS_PROBES = {
    "constructor-escape": ("module.exports = () => { let p; try { p = this.constructor.constructor('return process')(); }"
                           " catch (e) { return { passed: true, reason: String(e) }; }\n"
                           "  return { passed: !p || !p.env, reason: typeof p }; }"),
    "process-env": ("module.exports = () => ({ passed: typeof process === 'undefined' "
                    "|| !JSON.stringify(process.env || {}).includes('SECRET') })"),
}
BENIGN = {"python": "def evaluate(i, o, e, m):\n    return {'passed': o == e, 'score': 1.0 if o == e else 0.0}\n",
          "nodejs": "module.exports = (i, o, e) => ({ passed: o === e, score: o === e ? 1 : 0 })"}


def _grade(remote, language: str, code: str, service, timeout: int = 1000):
    spec = {"type": "code", "config": {"language": language, "code": code, "timeout": timeout}}
    metadata = {"port": urlsplit(service.url).port, "service_pid": service.proc.pid}
    return compile_spec(spec).build(Resources(code_runner=remote)).grade(
        Sample(id="h", input="q", output="a", expected="a", metadata=metadata))


@pytest.fixture
def still_grades(remote, service):
    """After the attack, the same service grades a benign evaluation correctly."""
    yield
    result = _grade(remote, "python", BENIGN["python"], service)
    assert result.status == "passed" and result.score == 1.0, result
    assert not Path(MARKER).exists()


@pytest.mark.parametrize("name", list(PY_ATTACKS))
def test_python_attacks_are_stopped(remote, service, still_grades, name):
    code, error = PY_ATTACKS[name]
    result = _grade(remote, "python", code, service)
    assert result.status == "error" and result.error is error, result


@pytest.mark.parametrize("name", list(PY_PROBES))
def test_python_probes_are_refused(remote, service, still_grades, name):
    result = _grade(remote, "python", PY_PROBES[name], service)
    assert result.status == "passed", result
    assert SECRET not in (result.reason or "")


@pytest.mark.node_sandbox
@pytest.mark.parametrize("name", list(JS_ATTACKS))
def test_node_attacks_are_stopped(remote, service, still_grades, name):
    code, error = JS_ATTACKS[name]
    result = _grade(remote, "nodejs", code, service)
    assert result.status == "error" and result.error is error, result
    assert _grade(remote, "nodejs", BENIGN["nodejs"], service).status == "passed"


@pytest.mark.node_sandbox
@pytest.mark.parametrize("name", list(JS_PROBES))
def test_node_probes_are_refused(remote, service, still_grades, name):
    result = _grade(remote, "nodejs", JS_PROBES[name], service)
    assert result.status == "passed", result
