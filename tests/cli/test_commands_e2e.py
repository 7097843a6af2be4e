"""One end-to-end test per documented command (issue 31, item 7), through the installed entry point.

Each command runs as a user types it (``.venv/bin/assay`` in a subprocess, in a folder of its
own holding a copy of ``examples/``), once on a real happy path and once on a bad input, which
must exit 2 with one line that names what was wrong and where (file, line, field, id or
variable), never a traceback. ``serve`` and ``sandbox serve`` start on a free 127.0.0.1 port,
are probed over HTTP and stopped by pid, each within a bounded time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from refusals import refused  # tests/refusals.py

ASSAY = Path(sys.executable).parent / "assay"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def here(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    return tmp_path


def _env(here: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "SANDBOX_"))}
    return {**env, "HOME": str(here), "COLUMNS": "200", "ASSAY_JUDGE_CACHE": "off",
            "ASSAY_DATABASE_URL": f"sqlite:///{here / 'assay.db'}", **extra}


def assay(here: Path, *args: str, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ASSAY), *args], cwd=here, env=env or _env(here), capture_output=True, text=True,
                          timeout=timeout)


def _graded(here: Path, out: str = "results.jsonl") -> Path:
    done = assay(here, "run", "examples/presets/eval.yaml", "--out", out, "-q")
    assert done.returncode == 1, done.stderr  # the example fails two samples on purpose
    return here / out


# --- run ------------------------------------------------------------------------------------

def test_run_grades_a_suite_and_writes_its_files(here: Path) -> None:
    done = assay(here, "run", "examples/presets/eval.yaml", "--out", "r.jsonl", "--junit", "r.xml",
                 "--summary-json", "s.json")
    assert done.returncode == 1, done.stderr
    assert "4/6 passed, 2 failed" in done.stdout
    lines = [json.loads(line) for line in (here / "r.jsonl").read_text().splitlines()]
    assert [row["id"] for row in lines][:2] == ["capital-cn", "capital-fr"] and len(lines) == 6
    assert json.loads((here / "s.json").read_text())["total"] == 6
    assert "<testsuite" in (here / "r.xml").read_text()


def test_run_refuses_a_bad_config_naming_file_line_and_field(here: Path) -> None:
    (here / "data.jsonl").write_text('{"id": "1", "output": "a", "expected": "a"}\n')
    (here / "eval.yaml").write_text("name: bad\ndataset: data.jsonl\ngraders:\n  - {type: exact_match}\n"
                                    "  - {type: similarity, config: {threshold: 2}}\n")
    line = refused(assay(here, "run", "eval.yaml"))
    # the shape docs/guides/grade-a-dataset.md ("The suite file") shows for a bad config
    assert line == "error: eval.yaml:5: graders[1].config.threshold: Input should be less than or equal to 1"


def test_run_refuses_a_duplicate_sample_id_naming_both_lines(here: Path) -> None:
    (here / "data.jsonl").write_text('{"id": "1", "output": "a"}\n{"id": "1", "output": "b"}\n')
    (here / "eval.yaml").write_text("name: dup\ndataset: data.jsonl\ngraders:\n  - {type: contains}\n")
    line = refused(assay(here, "run", "eval.yaml"))
    assert line == "error: data.jsonl:2: duplicate sample id '1' (first on line 1)"


# --- report, compare, review, calibrate ---------------------------------------------------------

def test_report_prints_the_summary_of_a_results_file(here: Path) -> None:
    results = _graded(here)
    done = assay(here, "report", str(results))
    assert done.returncode == 1, done.stderr
    assert "4/6 passed, 2 failed" in done.stdout


def test_report_refuses_a_damaged_line_naming_file_and_line(here: Path) -> None:
    results = _graded(here)
    results.write_text(results.read_text() + '{"id": "x"\n{"id": "y"}\n')
    refused(assay(here, "report", "results.jsonl"), "results.jsonl:7", "damaged line")


def test_compare_pairs_two_runs(here: Path) -> None:
    for name in ("a", "b"):
        assay(here, "run", "examples/prompts/eval.yaml", "--results", f"examples/prompts/prompt-{name}.jsonl",
              "--out", f"{name}.jsonl", "-q")
    done = assay(here, "compare", "a.jsonl", "b.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    graders = {g["grader"]: g for g in json.loads(done.stdout)["graders"]}
    assert graders["exact"]["pairs"] == 40 and len(graders["exact"]["to_pass"]) == 28


def test_compare_refuses_a_missing_file_naming_it(here: Path) -> None:
    _graded(here)
    refused(assay(here, "compare", "results.jsonl", "nowhere.jsonl"), "nowhere.jsonl")


def test_review_records_a_verdict_and_report_applies_it(here: Path) -> None:
    done = assay(here, "run", "examples/waza-suite", "--out", "agent.jsonl", "-q")
    assert "1 pending" in done.stdout, done.stderr
    done = assay(here, "review", "agent.jsonl", "--sample", "deploy-webapp", "--grader", "expert_review", "--pass",
                 "-m", "looks safe")
    assert done.returncode in (0, 1), done.stderr
    assert "0 pending" in assay(here, "report", "agent.jsonl").stdout


def test_review_refuses_an_unknown_sample_naming_it_and_the_file(here: Path) -> None:
    _graded(here)
    refused(assay(here, "review", "results.jsonl", "--sample", "s9", "--grader", "exact", "--pass"),
            "'s9'", "results.jsonl")


def test_calibrate_compares_a_judge_with_labels(here: Path) -> None:
    done = assay(here, "calibrate", "examples/calibration/results.jsonl", "--judge", "judge",
                 "--labels", "examples/calibration/labels.jsonl", "--json")
    assert done.returncode == 1, done.stderr  # 1: not calibrated, as docs/guides/llm-judges.md says of it
    assert json.loads(done.stdout)["status"] == "uncalibrated"


def test_calibrate_refuses_a_bad_label_naming_file_line_and_field(here: Path) -> None:
    (here / "labels.jsonl").write_text('{"sample_id": "boil", "passed": true}\n'
                                       '{"sample_id": "x", "passed": "perhaps"}\n')
    refused(assay(here, "calibrate", "examples/calibration/results.jsonl", "--judge", "judge",
                  "--labels", "labels.jsonl"), "labels.jsonl:2", "passed")


# --- doctor ------------------------------------------------------------------------------------

def test_doctor_reports_the_sandbox_layers(here: Path) -> None:
    done = assay(here, "doctor")
    assert done.returncode in (0, 1), done.stderr
    assert "python:" in done.stdout and "preset graders:" in done.stdout


def test_doctor_refuses_a_bad_setting_naming_the_variable(here: Path) -> None:
    refused(assay(here, "doctor", env=_env(here, ASSAY_SANDBOX_ALLOW_WEAK="maybe")), "ASSAY_SANDBOX_ALLOW_WEAK")


# --- users and tokens ------------------------------------------------------------------------------

def test_users_and_tokens_create_list_and_revoke(here: Path) -> None:
    assert assay(here, "users", "create", "alice").returncode == 0
    created = assay(here, "tokens", "create", "alice")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip().splitlines()[-1]
    listed = assay(here, "tokens", "list")
    assert "alice" in listed.stdout and token not in listed.stdout  # never the token itself
    assert assay(here, "tokens", "revoke", token).returncode == 0


def test_users_refuses_a_name_taken_naming_it(here: Path) -> None:
    assert assay(here, "users", "create", "alice").returncode == 0
    refused(assay(here, "users", "create", "alice"), "'alice'")


def test_tokens_refuses_an_unknown_user_naming_it(here: Path) -> None:
    refused(assay(here, "tokens", "create", "nobody"), "'nobody'")


# --- serve and sandbox serve -------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, headers: dict[str, str] | None = None, body: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@contextmanager
def _started(here: Path, args: list[str], env: dict[str, str]) -> Iterator[str]:
    """Start ``assay ARGS --port P`` in its own session, wait for /health (60 s), yield its base
    URL, then stop it by pid (SIGTERM, SIGKILL after 15 s)."""
    port = _free_port()
    log = here / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(ASSAY), *args, "--host", "127.0.0.1", "--port", str(port)], cwd=here, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                if _get(f"http://127.0.0.1:{port}/health")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "no answer on /health within 60 s"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.timeout(150)
def test_serve_answers_the_api_with_a_token(here: Path) -> None:
    assay(here, "users", "create", "alice")
    token = assay(here, "tokens", "create", "alice").stdout.strip().splitlines()[-1]
    with _started(here, ["serve"], _env(here)) as base:
        status, body = _get(f"{base}/api/v1/evaluators/presets", {"Authorization": f"Bearer {token}"})
        assert status == 200, body
        assert len(json.loads(body)["data"]) == 5
        assert _get(f"{base}/api/v1/evaluators/presets")[0] == 401


def test_serve_refuses_an_unknown_database_naming_it(here: Path) -> None:
    refused(assay(here, "serve", "--database-url", "foo://x", "--port", str(_free_port())), "'foo'")


@pytest.mark.timeout(150)
def test_sandbox_serve_runs_code_for_the_secret_only(here: Path) -> None:
    env = _env(here, SANDBOX_SECRET="s3cret-for-this-test")
    body = json.dumps({"language": "python", "timeout": 5000,
                       "code": "def evaluate(input, output, expected, metadata):\n"
                               "    return {'passed': output == expected, 'score': 1.0}\n",
                       "input": {"input": "q", "output": "a", "expected": "a", "metadata": {}}}).encode()
    with _started(here, ["sandbox", "serve", "--workers", "1"], env) as base:
        json_type = {"Content-Type": "application/json"}
        status, answer = _get(f"{base}/execute", {**json_type, "Authorization": "Bearer s3cret-for-this-test"}, body)
        assert status == 200, answer
        assert json.loads(answer)["result"]["passed"] is True, answer
        assert _get(f"{base}/execute", {**json_type, "Authorization": "Bearer wrong"}, body)[0] == 401


def test_sandbox_serve_refuses_to_start_without_a_secret(here: Path) -> None:
    refused(assay(here, "sandbox", "serve", "--port", str(_free_port())), "SANDBOX_SECRET")


# --- sandbox setup --------------------------------------------------------------------------------

STAND_IN_NPM = """#!{python}
# npm's stand-in: `npm install` of package.json's pinned dependencies, without the registry
import json, pathlib
for name, version in json.loads(pathlib.Path("package.json").read_text())["dependencies"].items():
    folder = pathlib.Path("node_modules", name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({{"name": name, "version": version}}))
"""


def test_sandbox_setup_installs_the_pinned_modules_for_the_user(here: Path) -> None:
    # The registry and isolated-vm's compile take minutes: a stand-in npm installs the pinned
    # versions, and the command's own path (target, npm's call, the version check) is real.
    tools = here / "tools"
    tools.mkdir()
    (tools / "npm").write_text(STAND_IN_NPM.format(python=sys.executable))
    (tools / "npm").chmod(0o755)
    env = _env(here, PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    done = assay(here, "sandbox", "setup", "--user", env=env)
    assert done.returncode == 0, done.stderr
    pinned = json.loads((REPO / "src/assay/sandbox/node/package.json").read_text())["dependencies"]
    assert f"lodash {pinned['lodash']}" in done.stdout
    assert (here / ".local/share/assay/node/node_modules/isolated-vm/package.json").is_file()


def test_sandbox_setup_without_npm_says_what_to_install(here: Path) -> None:
    env = _env(here, PATH=str(Path(sys.executable).parent))  # no npm on PATH
    refused(assay(here, "sandbox", "setup", "--user", env=env), "npm was not found")
