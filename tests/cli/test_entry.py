"""The console script's exit: the interpreter's teardown is skipped, and nothing a normal exit
does is lost (output, exit codes, exit handlers, threads still running)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ASSAY = Path(sys.executable).parent / "assay"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60)


def test_leave_runs_exit_handlers_and_flushes_output() -> None:
    done = _python("""
        import atexit, sys
        atexit.register(lambda: print("handler ran"))
        from assay.cli.entry import _leave
        print("partial line", end="")
        sys.stderr.write("to stderr")
        _leave(3)
    """)
    assert done.returncode == 3
    assert done.stdout == "partial linehandler ran\n"
    assert done.stderr == "to stderr"


def test_leave_follows_sys_exit_for_every_kind_of_code() -> None:
    for code, status, err in (("None", 0, ""), ("0", 0, ""), ("True", 1, ""), ("'bad suite'", 1, "bad suite\n"),
                              ("2", 2, "")):
        done = _python(f"from assay.cli.entry import _leave; _leave({code})")
        assert (done.returncode, done.stderr) == (status, err), code


def test_leave_waits_for_a_running_thread() -> None:
    done = _python("""
        import threading, time
        from assay.cli.entry import _leave
        def late():
            time.sleep(0.3)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        _leave(4)
    """)
    assert (done.returncode, done.stdout) == (4, "thread finished\n")


def test_a_run_through_the_console_script_writes_everything(tmp_path: Path) -> None:
    rows = "".join(f'{{"id": "s{i}", "output": "{"yes" if i % 3 else "no"}", "expected": "yes"}}\n'
                   for i in range(300))
    (tmp_path / "data.jsonl").write_text(rows, encoding="utf-8")
    (tmp_path / "eval.yaml").write_text("name: t\ndataset: data.jsonl\ngraders:\n  - type: exact_match\n",
                                        encoding="utf-8")
    out = tmp_path / "results.jsonl"
    done = subprocess.run([str(ASSAY), "run", str(tmp_path / "eval.yaml"), "-q", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # some samples fail
    assert done.stdout.startswith("200/300 passed, 100 failed, 0 errors, 0 pending")
    assert out.read_text(encoding="utf-8").count("\n") == 300

    missing = subprocess.run([str(ASSAY), "run", str(tmp_path / "missing.yaml")], capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 2
    assert "missing.yaml" in missing.stderr
