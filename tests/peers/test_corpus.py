"""The regression corpus of real suites, graded the way users grade them: each waza (Python and
Go eras) and Vally suite in ``../shared/corpus/peers`` (outside this repository: suites written
by others, with the peers' verdicts; its README says how they were obtained) goes through the
installed ``assay`` command, ``assay run SUITE --results FILE --out OUT``, and every sample's
verdict, score and per-grader verdicts and scores must equal the peer's.

``ASSAY_PEER_CORPUS`` names another corpus folder of the same layout; without it the corpus is
looked for beside the checkout, then at /work/shared (a clone elsewhere still finds it). The corpus's own
``allowed.json`` lists samples whose verdict is not fixed; ``NEWER_RELEASE`` below lists the
samples where the peer that made ``expected.json`` is older than the release assay reads the
suite as, each with the figure the newer release gives (so those are checked too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ASSAY = Path(sys.executable).parent / "assay"
REPO = Path(__file__).resolve().parents[2]
# beside this checkout (as the workplace lays it out), else where the workplace keeps it
_PLACES = [REPO.parent / "shared" / "corpus" / "peers", Path("/work/shared/corpus/peers")]
CORPUS = Path(os.environ.get("ASSAY_PEER_CORPUS") or next((p for p in _PLACES if p.is_dir()), _PLACES[0]))

NEWER_RELEASE: dict[tuple[str, str], float] = {
    # expected.json is waza at 091a1f9e, which graded no task `expected` lists. The suite loads
    # under 0.35 (the newest release assay knows), where internal/graders/run.go
    # evaluateExpectations (0a694334, from 0.27) adds `_output_contains` and
    # `_output_contains_any` results to the weighted mean: the verdict is the same, the score is
    # the newer release's. `assay run --waza-version 0.21` gives the older figure.
    ("waza-go-code-explainer-text", "explain-python-recursion-001#2"): 0.2,
    ("waza-go-code-explainer-text", "explain-python-recursion-001#3"): 0.8,
    ("waza-go-code-explainer-text", "explain-sql-join-001#2"): 0.8,
}


def _runs() -> list[Any]:
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS} (set ASSAY_PEER_CORPUS)"))]
    out = []
    for case in sorted(p for p in CORPUS.iterdir() if (p / "expected.json").is_file()):
        expected = json.loads((case / "expected.json").read_text())
        for i, run in enumerate(expected["runs"]):
            out.append(pytest.param((case, expected["suite"], run), id=f"{case.name}[{i}]"))
    return out


def _allowed() -> set[tuple[str, str]]:
    path = CORPUS / "allowed.json"
    return {(c, s) for c, s, _ in json.loads(path.read_text())["samples"]} if path.is_file() else set()


@pytest.mark.parametrize("entry", _runs())
def test_real_suite_agrees_with_its_peer(entry: tuple[Path, str, dict[str, Any]], tmp_path: Path) -> None:
    case, suite, run = entry
    out = tmp_path / "out.jsonl"
    done = subprocess.run([str(ASSAY), "run", suite, "--results", run["results"], "--out", str(out), "-q"],
                          cwd=case, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), f"{case.name} [{run['label']}]: assay exit {done.returncode}: {done.stderr}"
    assert "Traceback" not in done.stderr
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    allowed = _allowed()
    problems = []
    for sid, want in run["samples"].items():
        have = got.get(sid)
        if have is None:
            problems.append(f"{sid}: not graded (got {sorted(got)[:4]})")
            continue
        if (case.name, sid) in allowed:
            continue
        score = NEWER_RELEASE.get((case.name, sid), want.get("score"))
        if bool(have["passed"]) != want["passed"]:
            problems.append(f"{sid}: peer passed={want['passed']}, assay {have['status']}")
        if score is not None and (have["score"] is None or abs(have["score"] - score) > 1e-3):
            problems.append(f"{sid}: score {score}, assay {have['score']}")
        results = {r["name"]: r for r in have["results"]}
        for name, g in want["graders"].items():
            r = results.get(name)
            if r is None or bool(r["passed"]) != g["passed"] or r["score"] is None or abs(r["score"] - g["score"]) > 1e-6:
                problems.append(f"{sid} {name}: peer {g}, assay {r and (r['status'], r['score'])}")
    assert not problems, f"{case.name} [{run['label']}]:\n" + "\n".join(problems)
