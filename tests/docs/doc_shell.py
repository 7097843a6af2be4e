"""Sybil parser and evaluator for the shell blocks of README.md and docs/*.md.

A fenced block labelled ``sh``, ``shell``, ``bash`` or ``console`` that runs ``assay`` or
``curl`` is an example. It runs in ``bash`` with the installed ``assay`` (this venv's ``bin``)
first on ``PATH``, in a temporary folder holding a copy of the repository's ``examples/``, so
a line such as ``assay run examples/presets/eval.yaml`` runs as a reader would type it.

What makes a block fail:
- an ``assay`` command exits 2 or more (0 is "all passed", 1 "some sample failed", both are
  what a documented run may end on), or anything prints a Python traceback;
- a ``curl`` answer with an HTTP status of 400 or more, or no answer at all;
- the block shows output (an unlabelled fenced block right after it) and a shown line is not
  in what the block printed, in order (see ``normalise``).

Blocks of one document share their shell variables and functions (``TOKEN=...`` in one block is ``$TOKEN``
in the next) and one folder, and run in order. A block containing a line that is only
``assay serve ...`` starts that server in the background on a free 127.0.0.1 port, waits for
``/health``, runs the rest of the block, and leaves the server up for the document's later
blocks; the test stops it by pid when the document is done.

Blocks that cannot run here say so in the Markdown, just before the block, with Sybil's own
``<!-- skip: next "why" -->``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Example, Region
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SHELL_LANGUAGES = {"sh", "shell", "bash", "console"}
OUTPUT_LANGUAGES = {"", "text"}
# assay or curl in a command's place: first on a line (after VAR=value words), or after $( | ; &&
RUNS_SOMETHING = re.compile(r"(^[ \t]*(\w+=\S*[ \t]+)*|\$\(|[|;&][ \t]*)(\S*/)?(assay|curl)\b", re.MULTILINE)
SERVE_LINE = re.compile(r"^assay (?:sandbox )?serve\b[^\n]*$", re.MULTILINE)
BLOCK_TIMEOUT_S = 90


@dataclass
class ShellBlock:
    source: str
    shown: str | None  # the output block shown right after it, if any
    line: int


class ShellParser:
    """Yields one region per shell block that runs ``assay`` or ``curl``, with its shown output."""

    def __init__(self) -> None:
        self.lexer = FencedCodeBlockLexer(language=r"[\w-]*", mapping={"language": "language", "source": "source"})

    def __call__(self, document: Document) -> Iterable[Region]:
        blocks = list(self.lexer(document))
        for i, region in enumerate(blocks):
            if region.lexemes["language"].strip() not in SHELL_LANGUAGES:
                continue
            source = str(region.lexemes["source"])
            if not RUNS_SOMETHING.search(source):
                continue
            shown, end = None, region.end
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            if (after is not None and after.lexemes["language"].strip() in OUTPUT_LANGUAGES
                    and not document.text[region.end:after.start].strip()):
                shown, end = str(after.lexemes["source"]), after.end
            line = document.text.count("\n", 0, region.start) + 1
            yield Region(region.start, end, ShellBlock(source, shown, line), evaluate_shell)


def normalise(text: str) -> list[str]:
    """The lines compared: trailing blanks dropped, and durations (``0.02 s``, ``12 ms``,
    ``latencyMs``) read as a placeholder, since they are the one thing that moves between runs."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\d+(\.\d+)? ?(ms|s)\b", "<duration>", line.rstrip())
        line = re.sub(r'("latencyMs":)[\d.]+', r"\1<duration>", line)
        if line.strip():
            lines.append(line)
    return lines


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)  # not our child: raises, and kill(0) decides
        return done == 0
    except ChildProcessError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ShellSession:
    """One document's folder, shell variables and background servers."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="assay-docs-")))
    addresses: dict[str, str] = field(default_factory=dict)  # documented server address -> the started one

    def __post_init__(self) -> None:
        shutil.copytree(REPO / "examples", self.root / "examples")
        self.state = self.root / ".doc-shell-state"
        self.failures = self.root / ".doc-shell-failures"
        self.pids = self.root / ".doc-shell-pids"
        self.env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200",
                    "HOME": str(self.root), "ASSAY_JUDGE_CACHE": "off", "NO_COLOR": "1"}
        self.env.pop("ASSAY_TOKEN", None)
        self.env.pop("ASSAY_DATABASE_URL", None)

    def close(self) -> None:
        pids = [int(p) for p in self.pids.read_text().split()] if self.pids.exists() else []
        for pid in pids:  # each server leads its own session (setsid): its workers go with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for pid in pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


PRELUDE = r"""
__before=" $(compgen -v | tr '\n' ' ') "
[ -f "$DOC_STATE" ] && source "$DOC_STATE"
__dump() {
  for __v in $(compgen -v); do
    case "$__before" in *" $__v "*) continue;; esac
    case "$__v" in __*|BASH*|FUNCNAME|PIPESTATUS|_) continue;; esac
    declare -p "$__v" 2>/dev/null
  done > "$DOC_STATE"
  for __f in $(compgen -A function); do
    case "$__f" in __*|assay|curl) continue;; esac
    declare -f "$__f" >> "$DOC_STATE"
  done
}
trap __dump EXIT
__await_health() {
  for __i in $(seq 600); do
    command curl -sf "http://127.0.0.1:$1/health" > /dev/null && return 0
    sleep 0.1
  done
  echo "the server on port $1 did not answer /health within 60 s: $(tail -c 2000 serve-$1.log)" >> "$DOC_FAILURES"
}
assay() {
  command assay "$@"; local rc=$?
  [ $rc -le 1 ] || echo "assay $*: exit $rc" >> "$DOC_FAILURES"
  return 0
}
curl() {
  local __out; __out=$(command curl -w '\n__status=%{http_code}' "$@"); local rc=$?
  local __status=${__out##*__status=}
  printf '%s\n' "${__out%$'\n'__status=*}"
  if [ $rc -ne 0 ] || [ "${__status:-000}" -ge 400 ] || [ "${__status:-000}" = 000 ]; then
    echo "curl $*: exit $rc, HTTP ${__status:-none}" >> "$DOC_FAILURES"
  fi
  return 0
}
"""


def _background(source: str, session: ShellSession) -> str:
    """Each ``assay serve`` / ``assay sandbox serve`` line becomes a server started in the
    background on a free 127.0.0.1 port (its pid kept for ``ShellSession.close``), awaited on
    ``/health``; the documented addresses of it in this and later blocks point at that port."""
    for line in SERVE_LINE.findall(source):
        port = free_port()
        command = line.split("#")[0].split()
        documented = "8090" if command[1] == "sandbox" else "8000"
        if "--port" in command:
            documented = command[command.index("--port") + 1]
            del command[command.index("--port"):command.index("--port") + 2]
        if "--host" in command:
            del command[command.index("--host"):command.index("--host") + 2]
        started = (f"setsid {' '.join(command)} --host 127.0.0.1 --port {port} > serve-{port}.log 2>&1 &\n"
                   f"echo $! >> \"$DOC_PIDS\"; __await_health {port}")
        source = source.replace(line, f"# the test starts: {line}\n{started}", 1)
        host = "sandbox-host" if command[1] == "sandbox" else "127.0.0.1"
        session.addresses[f"http://{host}:{documented}"] = f"http://127.0.0.1:{port}"
    for documented, actual in session.addresses.items():
        source = source.replace(documented, actual)
    return source


def evaluate_shell(example: Example) -> str | None:
    block: ShellBlock = example.parsed
    session: ShellSession = example.namespace["shell"]
    source = _background(block.source, session)
    session.failures.write_text("")
    env = {**session.env, "DOC_STATE": str(session.state), "DOC_FAILURES": str(session.failures),
           "DOC_PIDS": str(session.pids)}
    done = subprocess.run(["bash", "-c", PRELUDE + source], cwd=session.root, env=env, capture_output=True,
                          text=True, timeout=BLOCK_TIMEOUT_S)
    printed = done.stdout + done.stderr
    problems = session.failures.read_text().splitlines()
    if "Traceback (most recent call last)" in printed:
        problems.append("a traceback was printed")
    if block.shown is not None:
        actual = normalise(printed)
        at = 0
        for want in normalise(block.shown):
            while at < len(actual) and actual[at] != want:
                at += 1
            if at == len(actual):
                problems.append(f"shown line not printed (in order): {want!r}")
                break
            at += 1
    if problems:
        return "\n".join(problems) + "\n--- the block printed:\n" + printed[-6000:]
    return None
