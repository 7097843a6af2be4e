"""The confinement primitives on their own: syscall table, preexec use, probing."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from assay.sandbox import _seccomp
from assay.sandbox.confine import REQUIRED_LAYERS, Confinement, apply_in_child, prepare, probe_layers

HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


@pytest.mark.skipif(not HEADER.exists(), reason="kernel headers not installed")
def test_syscall_numbers_match_the_kernel_headers():
    numbers = dict(re.findall(r"#define __NR_(\w+) (\d+)", HEADER.read_text()))
    table = (_seccomp.ALWAYS | _seccomp.PROCESS | _seccomp.EXEC | _seccomp.SOCKETS | _seccomp.SIGNALS
             | {"clone": _seccomp.NR_CLONE, "clone3": _seccomp.NR_CLONE3, "socketpair": _seccomp.NR_SOCKETPAIR,
                "prctl": _seccomp.NR_PRCTL})
    wrong = {name: nr for name, nr in table.items() if name in numbers and int(numbers[name]) != nr}
    assert not wrong
    assert len([n for n in table if n in numbers]) >= len(table) - 2  # memfd_secret etc. may be newer


def test_filter_program_is_well_formed():
    code = _seccomp.build_filter(block_exec=True, block_threads=False, block_sockets=True, block_signals=True)
    assert len(code) % 8 == 0 and len(code) // 8 < 4096


def _confined_run(cmd: list[str], c: Confinement) -> subprocess.CompletedProcess:
    prepare(c)  # build in the parent; the preexec_fn only installs
    return subprocess.run(cmd, preexec_fn=lambda: apply_in_child(c), capture_output=True, text=True, timeout=20)


def test_preexec_confinement_allows_the_exec_but_not_what_follows():
    c = Confinement(memory_bytes=None, block_exec=False, read_paths=("/usr", "/lib", "/lib64", "/bin", "/etc/hostname"))
    done = _confined_run(["/bin/cat", "/etc/hostname"], c)
    assert done.returncode == 0 and done.stdout.strip()
    assert "Permission denied" in _confined_run(["/bin/cat", "/etc/passwd"], c).stderr
    shell = _confined_run(["/bin/sh", "-c", "id -u; echo x > /tmp/assay-confine-test"], c)
    assert "Cannot fork" in shell.stderr or "Operation not permitted" in shell.stderr
    assert not os.path.exists("/tmp/assay-confine-test")


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop applies to root only")
def test_uid_drop_in_preexec():
    c = Confinement(memory_bytes=None, block_exec=False, read_paths=("/usr", "/lib", "/lib64", "/bin"))
    assert _confined_run(["/usr/bin/id", "-u"], c).stdout.strip() == "65534"


def test_exec_is_blocked_by_default():
    with pytest.raises(PermissionError):
        _confined_run(["/bin/true"], Confinement(memory_bytes=None))


def test_probe_reports_every_layer():
    layers = probe_layers()
    assert set(REQUIRED_LAYERS) | {"uid_drop", "cgroups"} <= set(layers)
    assert all(isinstance(v["available"], bool) and v["detail"] for v in layers.values())
