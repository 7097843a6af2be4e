"""runner.comparing: the streamed comparison of two results files gives what the in-memory
one (``core.compare.compare_runs`` over the files' verdicts, as `assay compare` did before)
gives, to the last digit and the last reason, and its JSON prints the same text."""

from __future__ import annotations

import io
import random
from pathlib import Path

import orjson
import pytest

from assay.cli._json_stream import write_json
from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.compare import compare_runs
from assay.core.errors import SpecError
from assay.core.result import ErrorCode, Status, make_result
from assay.runner.comparing.files import compare_files
from assay.runner.comparing.readers import DOCUMENT, JSONL, format_of
from assay.runner.results import verdict_line
from assay.runner.reviews import apply_reviews, load_reviews, load_verdicts, submit_review

STATUSES = (Status.PASSED, Status.PASSED, Status.FAILED, Status.FAILED, Status.ERROR, Status.PENDING)


def _result(rng: random.Random, name: str, kind: str = "exact_match"):
    status = rng.choice(STATUSES)
    scored = status in (Status.PASSED, Status.FAILED)
    score = (rng.choice([None, rng.random(), float(status is Status.PASSED)]) if scored else None)
    reason = None if status is Status.PASSED else rng.choice([None, "", f"{name} said no {rng.randrange(9)}"])
    return make_result(name, kind, "code", status, status is Status.PASSED, score, reason=reason, details={},
                       error=ErrorCode.TIMEOUT if status is Status.ERROR else None, weight=1.0)


def _run(rng: random.Random, samples: int, graders: list[str], repeats: bool) -> list[SampleVerdict]:
    out = []
    for i in range(samples):
        for k in range(rng.choice([1, 2, 3]) if repeats else 1):
            names = [g for g in graders if rng.random() < 0.9] + (["a"] if rng.random() < 0.05 else [])
            v = judge_sample(f"s{i}-{k}" if repeats else f"s{i}", [_result(rng, n) for n in names])
            v.cluster = f"s{i}" if repeats else None
            out.append(v)
    rng.shuffle(out)
    return out


def _write(path: Path, verdicts: list[SampleVerdict]) -> Path:
    path.write_bytes(b"".join(verdict_line(v, "fp") for v in verdicts))
    return path


def _reference(base: Path, new: Path, **options) -> dict:
    def verdicts(path: Path) -> list[SampleVerdict]:
        got = load_verdicts(path)
        reviews = load_reviews(path)
        return apply_reviews(got, reviews) if reviews else got

    return compare_runs(verdicts(base), verdicts(new), **options).to_dict()


def _streamed(base: Path, new: Path, **options) -> tuple[dict, str]:
    text = io.StringIO()
    with compare_files(base, new, **options) as doc:
        write_json(doc, text)
    return orjson.loads(text.getvalue()), text.getvalue()


@pytest.mark.parametrize("seed,repeats", [(1, False), (2, False), (3, True), (4, True)])
def test_streamed_equals_in_memory_on_generated_runs(tmp_path: Path, seed: int, repeats: bool) -> None:
    rng = random.Random(seed)
    base = _write(tmp_path / "base.jsonl", _run(rng, 120, ["a", "b", "only-base"], repeats))
    new_rows = _run(rng, 130, ["b", "a", "only-new"], repeats)
    new = _write(tmp_path / "new.jsonl", new_rows)
    want = _reference(base, new)
    got, text = _streamed(base, new)
    assert got == want
    assert text == orjson.dumps(want, option=orjson.OPT_INDENT_2).decode()  # byte for byte
    assert {g["grader"]: g["present"] for g in got["graders"]} == {"a": "both", "b": "both", "only-base": "base",
                                                                   "only-new": "new"}
    assert got["unpaired"]["new_only"] and any(g["to_fail"] for g in got["graders"])
    assert any(f["base_reason"] for g in got["graders"] for f in g["flips"])
    assert any(f["new_reason"] for f in got["overall"]["flips"])
    for adjust in ("bh", "none"):
        assert _streamed(base, new, adjust=adjust, alpha=0.1)[0] == _reference(base, new, adjust=adjust, alpha=0.1)


def test_reviews_and_documents_are_read_as_before(tmp_path: Path) -> None:
    rng = random.Random(7)
    base_rows = _run(rng, 40, ["a"], False)
    for v in base_rows[:10]:  # a human grader awaiting review on some samples
        v.results.append(make_result("person", "human", "human", Status.PENDING, False, None, reason=None,
                                     details={}, error=None, weight=1.0))
    base = _write(tmp_path / "base.jsonl", base_rows)
    submit_review(base, base_rows[0].id, "person", False, comment="not good enough")
    submit_review(base, base_rows[1].id, "person", True)
    new = _write(tmp_path / "new.jsonl", [judge_sample(v.id, [r for r in v.results if r.name != "person"])
                                          for v in base_rows])
    assert _streamed(base, new)[0] == _reference(base, new)
    doc = tmp_path / "export.json"
    doc.write_bytes(orjson.dumps({"suite": "x", "samples": [v.to_dict() for v in base_rows]},
                                 option=orjson.OPT_INDENT_2))
    assert format_of(doc) is DOCUMENT and format_of(base) is JSONL
    assert _streamed(doc, new)[0] == _reference(doc, new)


def test_a_sample_written_twice_or_a_damaged_line_is_named(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = _run(rng, 5, ["a"], False)
    good = _write(tmp_path / "good.jsonl", rows)
    twice = _write(tmp_path / "twice.jsonl", [*rows, rows[2]])
    with pytest.raises(SpecError, match=rf"sample '{rows[2].id}' is written twice \(samples 3 and 6\)"):
        with compare_files(twice, good):
            pass
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(verdict_line(rows[0]) + b'{"id": "x", "status": "passed", "results": [{"name": 1}]}\n')
    with pytest.raises(SpecError) as info:
        with compare_files(good, damaged):
            pass
    assert f"{damaged}:2" in str(info.value)
