"""Property: whatever is done to a bundled suite, its dataset or a results file, `assay`
either grades (exit 0 or 1) or stops cleanly with exit 2 and one message, never a traceback,
a hang or an internal error.

Runs the CLI in-process (typer's runner) on the preset suites, so a few hundred examples
take seconds; the example count is bounded so `make test` stays quick (set
ASSAY_FUZZ_EXAMPLES for a longer, random hunt; otherwise examples are derandomised, so CI is
repeatable).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from assay.cli.main import app
from assay.core.errors import SpecError
from assay.runner.suites import load_suite

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FUZZ = settings(max_examples=int(os.environ.get("ASSAY_FUZZ_EXAMPLES", "60")), deadline=None, derandomize="ASSAY_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NASTY_JSON = st.sampled_from([
    None, True, False, 0, -1, 2**64, 2**200, -(2**70), 1e308, -0.0, "", " ", "x" * 20000, "\u0000",
    "\ud800", "\udfff\ud800", "\x1b[2J", "\u202e", "北京", [], {}, [[[[[[]]]]]], {"a": {"b": None}},
    {"output": 1}, [1, "a", None], "NaN", "Infinity",
])
NASTY_YAML_SCALARS = st.sampled_from([
    ".nan", ".inf", "-.inf", "1e999", "true", "null", "~", "''", "'x'", "[]", "{}", "-1", "0", "2",
    "999999999999999999999999999", '"\\ud800"', '"\\0"', "&a [*a]", "!!python/object/apply:os.system [id]",
    "!!binary aGVsbG8=", "2001-12-14", "{type: nope}", "[{type: contains}]", "'" + "y" * 5000 + "'",
    "{pattern: '(a'}", "{threshold: 2}", "*undefined", "|\n  text", "? complex\n  : key",
])


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=True)
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise AssertionError(f"uncaught {type(exc).__name__}: {exc}") from exc
    return result.exit_code, result.output


def assert_clean(code: int, output: str) -> None:
    assert code in (0, 1, 2), (code, output[-2000:])
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    if code == 2:
        assert "error:" in output, output[-2000:]


def copy_example(name: str, into: Path) -> Path:
    shutil.copytree(EXAMPLES / name, into / name)
    return into / name


def mutate_lines(data: st.DataObject, lines: list[str], values: st.SearchStrategy[str]) -> list[str]:
    """Delete, duplicate, swap or rewrite lines, or replace a value after a `key:`."""
    lines = list(lines)
    for _ in range(data.draw(st.integers(1, 3))):
        if not lines:
            lines.append(data.draw(values))
            continue
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["delete", "duplicate", "swap", "value", "raw", "indent"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "value" and ":" in lines[i]:
            head = lines[i].split(":", 1)[0]
            lines[i] = f"{head}: {data.draw(values)}"
        elif op == "indent":
            lines[i] = " " * data.draw(st.integers(1, 5)) + lines[i]
        else:
            lines[i] = data.draw(st.text(max_size=40))
    return lines


def mutate_bytes(data: st.DataObject, raw: bytes) -> bytes:
    op = data.draw(st.sampled_from(["truncate", "garbage", "utf16", "nul", "crlf", "keep"]))
    if op == "truncate" and raw:
        return raw[:data.draw(st.integers(0, len(raw) - 1))]
    if op == "garbage":
        at = data.draw(st.integers(0, len(raw)))
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=12)) + raw[at:]
    if op == "utf16":
        return raw.decode("utf-8", "replace").encode("utf-16")
    if op == "nul":
        return raw.replace(b"\n", b"\x00\n", 1)
    if op == "crlf":
        return raw.replace(b"\n", b"\r\n")
    return raw


@pytest.mark.timeout(300)
@FUZZ
@given(data=st.data())
def test_mutated_suite_files_grade_or_exit_2(data):
    with tempfile.TemporaryDirectory() as tmp:
        suite = copy_example(data.draw(st.sampled_from(["presets", "json-schema"])), Path(tmp))
        path = suite / "eval.yaml"
        text = "\n".join(mutate_lines(data, path.read_text().splitlines(), NASTY_YAML_SCALARS)) + "\n"
        path.write_bytes(mutate_bytes(data, text.encode()))
        assert_clean(*run_cli("run", str(path), "-q", "--out", str(suite / "r.jsonl"), "--junit", str(suite / "r.xml")))


@pytest.mark.timeout(300)
@FUZZ
@given(data=st.data())
def test_mutated_datasets_grade_or_exit_2(data):
    with tempfile.TemporaryDirectory() as tmp:
        suite = copy_example("presets", Path(tmp))
        dataset = suite / "data.jsonl"
        rows = [json.loads(line) for line in dataset.read_text().splitlines()]
        for _ in range(data.draw(st.integers(0, 3))):
            row = rows[data.draw(st.integers(0, len(rows) - 1))]
            key = data.draw(st.sampled_from(["id", "input", "output", "expected", "metadata", "transcript", "extra"]))
            row[key] = data.draw(NASTY_JSON)
        lines = [json.dumps(r, ensure_ascii=data.draw(st.booleans())) for r in rows]
        lines = mutate_lines(data, lines, st.just('{"id": "dup"}')) if data.draw(st.booleans()) else lines
        dataset.write_bytes(mutate_bytes(data, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")))
        out = suite / "r.jsonl"
        code, output = run_cli("run", str(suite / "eval.yaml"), "-q", "--out", str(out), "--junit", str(suite / "r.xml"))
        assert_clean(code, output)
        if code in (0, 1):
            assert_clean(*run_cli("report", str(out)))


@pytest.fixture(scope="module")
def graded_results(tmp_path_factory):
    suite = copy_example("presets", tmp_path_factory.mktemp("graded"))
    code, output = run_cli("run", str(suite / "eval.yaml"), "-q", "--out", str(suite / "r.jsonl"))
    assert code == 1, output
    return suite


@pytest.mark.timeout(300)
@FUZZ
@given(data=st.data())
def test_mutated_results_files_report_resume_or_exit_2(graded_results, data):
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(shutil.copytree(graded_results, Path(tmp) / "s"))
        out = suite / "r.jsonl"
        lines = out.read_text().splitlines()
        if data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(lines) - 1))
            row = json.loads(lines[i])
            target = row if data.draw(st.booleans()) else row["results"][0]
            target[data.draw(st.sampled_from(sorted(target)))] = data.draw(NASTY_JSON)
            lines[i] = json.dumps(row)
        lines = mutate_lines(data, lines, st.just("{}"))
        out.write_bytes(mutate_bytes(data, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")))
        assert_clean(*run_cli("report", str(out)))
        assert_clean(*run_cli("run", str(suite / "eval.yaml"), "-q", "--out", str(out), "--resume"))


@pytest.mark.parametrize("example", ["waza-suite", "vally-stimuli"])
@pytest.mark.timeout(300)
@FUZZ
@given(data=st.data())
def test_mutated_peer_suites_load_or_refuse(example, data):
    with tempfile.TemporaryDirectory() as tmp:
        suite = copy_example(example, Path(tmp))
        path = suite / "eval.yaml"
        text = "\n".join(mutate_lines(data, path.read_text().splitlines(), NASTY_YAML_SCALARS)) + "\n"
        path.write_bytes(mutate_bytes(data, text.encode()))
        try:
            load_suite(path)
        except SpecError as exc:
            assert str(exc)
        except yaml.YAMLError as exc:  # pragma: no cover - would be a bug
            raise AssertionError(f"YAML error escaped: {exc}") from exc
