"""`assay run` on the local engine holds no object per sample: its peak memory grows by a few
bytes per sample (ids as 8-byte hashes, a score and a flag per grader), not by the samples and
verdicts (about 8.7 KB each before the run streamed)."""

import json
import subprocess
import sys

import orjson
import pytest

SMALL, LARGE = 5_000, 50_000
MAX_GROWTH_MB = 48
"""Allowed peak-RSS growth from SMALL to LARGE samples: 45,000 more samples held as objects
would be about 390 MB; held as the run keeps them, a few MB (the rest is allocator noise).
SMALL is the columnar path's minimum (``runner.columnar.MIN_ROWS``), so both sizes take it."""

MEASURE = """
import json, resource, sys
from pathlib import Path
from assay.cli.run_cmd import execute
code = execute(Path(sys.argv[1]), out=Path(sys.argv[2]), junit=Path(sys.argv[3]), results=None, threshold=None,
               concurrency=2, resume=False, cost_ordered=None, summary_json=Path(sys.argv[4]), quiet=True)
print(json.dumps({"code": code, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def peak_rss(tmp_path, rows, graders):
    work = tmp_path / str(rows)
    work.mkdir()
    with (work / "data.jsonl").open("wb") as fh:
        fh.writelines(orjson.dumps({"id": f"s{i}", "output": f"answer {i % 97}", "expected": f"answer {i % 89}"})
                      + b"\n" for i in range(rows))
    (work / "eval.yaml").write_text(f"name: flat\ndataset: data.jsonl\ngraders:\n{graders}", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", MEASURE, str(work / "eval.yaml"), str(work / "out.jsonl"),
                           str(work / "junit.xml"), str(work / "summary.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    summary = json.loads((work / "summary.json").read_text())
    assert summary["total"] == rows and got["code"] == 1
    assert sum(1 for _ in (work / "out.jsonl").open("rb")) == rows
    return got["peak_mb"]


@pytest.mark.parametrize("graders", [
    pytest.param("  - {type: exact_match}\n  - {type: contains}\n", id="columnar"),
    # A backreference has no RE2 (columnar) kernel: the suite takes the object path.
    pytest.param("  - {type: exact_match}\n  - {type: regex, config: {pattern: '(\\\\w)\\\\1'}}\n", id="object"),
])
def test_peak_memory_stays_flat_from_5k_to_50k_samples(tmp_path, graders):
    small, large = peak_rss(tmp_path, SMALL, graders), peak_rss(tmp_path, LARGE, graders)
    assert large - small < MAX_GROWTH_MB, f"peak RSS {small:.0f} MB at {SMALL:,} samples, {large:.0f} MB at {LARGE:,}"
