"""Helpers for the Python sandbox tests: a benign check and leak probes (the `pool` fixture is in conftest.py)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from assay.core.interfaces import CodeCall, CodeOutcome
from assay.sandbox.python import PythonPool

SECRET_ENV = "ASSAY_HOSTILE_TEST_SECRET"
SECRET = "s3cr3t-" + secrets.token_hex(8)
BENIGN = """
import json, collections
def evaluate(input, output, expected, metadata):
    words = collections.Counter(output.split())
    return {"passed": output == expected, "score": len(words) / 10,
            "reason": json.dumps(sorted(words)), "details": {"n": len(output)}}
"""


def run(pool: PythonPool, source: str, args: list | None = None, **kw) -> CodeOutcome:
    return pool.call(CodeCall("python", source, [1, 2, 3, {}] if args is None else args, **kw))


def assert_benign(pool: PythonPool) -> None:
    """After any attack, an ordinary evaluation on the same pool must still grade correctly."""
    token = "t" + secrets.token_hex(4)
    text = f"a {token} a"
    out = run(pool, BENIGN, ["q", text, text, {}])
    assert out.ok, out
    assert out.value == {"passed": True, "score": 0.2, "reason": json.dumps(sorted({"a", token})),
                         "details": {"n": len(text)}}


def sandbox_processes() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, cmdline) for every live (not zombie) zygote process and every child it forked."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if "assay.sandbox.python.zygote" in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            found[int(entry.name)] = (ppid, cmdline)
    return found
