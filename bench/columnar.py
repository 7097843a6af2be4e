"""Throughput of the columnar path (``assay.grade_table``), rows/s on one core, beside its target
and the raw library call on the same data (``assay.grade_batch`` on plain dicts: presets.py).

Data: the pairs bench/presets.py generates (20-2000 characters, mean ~430, ASCII and CJK
mixed, expected an edited copy of the output in 70% of pairs), 20,000 distinct ones repeated
in random order to ``ROWS`` rows of an Arrow table; json_schema grades small JSON objects
(5% cut short, 10% missing a required key). Figures are medians of several runs, timed in
CPU seconds of this process (rows per CPU-second: per core, and less disturbed by other work
on the machine than wall time); the all-cores levenshtein line is wall time.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
import presets  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

ROWS = 1_000_000
REGEX = {"pattern": r"(?:capital|首都)\s*\S+", "flags": "i"}
TARGETS: dict[str, tuple[float, str]] = {
    "exact_match": (5_000_000, "rows/s"), "  exact_match, 95% equal": (5_000_000, "rows/s"),
    "contains": (2_000_000, "rows/s"), "regex": (1_000_000, "rows/s"),
    "json_schema": (250_000, "rows/s"), "similarity/levenshtein": (0.9, "x raw cpdist"),
}


def median_seconds(fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.process_time) -> float:
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


def tables(rows: int) -> tuple[pa.Table, pa.Table]:
    """The text pairs and the JSON outputs, ``rows`` rows each."""
    base = presets.make_samples(20_000, seed=7)
    outputs = pa.array([s.output for s in base], pa.large_string())
    expected = pa.array([s.expected for s in base], pa.large_string())
    pick = pa.array(np.random.default_rng(1).integers(0, len(base), rows))
    # contains: the expected text is a piece of the output in 70% of rows (a row's own needle)
    rng = np.random.default_rng(2)
    starts = [int(rng.integers(0, max(1, len(s.output) - 20))) for s in base]
    pieces = [s.output[i:i + 12] if rng.random() < 0.7 else s.expected[:12] for s, i in zip(base, starts)]
    same = pa.array([s.output if rng.random() < 0.95 else s.expected for s in base], pa.large_string())
    text = pa.table({"output": outputs.take(pick), "expected": expected.take(pick),
                     "piece": pa.array(pieces, pa.large_string()).take(pick), "same": same.take(pick)})
    docs = pa.array([s.output for s in presets.make_json_samples(20_000)], pa.large_string())
    return text, pa.table({"output": docs.take(pick)})


def main(rows: int = ROWS, repeats: int = 5) -> list[tuple[str, float, float, str, str]]:
    """(name, assay figure, raw library figure, raw label, unit) per case."""
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    import assay

    text, docs = tables(rows)
    pieces = text.select(["output"]).append_column("expected", text["piece"])
    mostly_equal = text.select(["output"]).append_column("expected", text["same"])
    out_list, exp_list = text["output"].to_pylist(), text["expected"].to_pylist()

    def rate(spec: dict[str, Any], table: pa.Table, clock: Callable[[], float] = time.process_time,
             **kw: Any) -> float:
        return table.num_rows / median_seconds(lambda: assay.grade_table(spec, table, **kw), repeats, clock)

    def raw(fn: Callable[[], object], n: int = rows, clock: Callable[[], float] = time.process_time) -> float:
        return n / median_seconds(fn, repeats, clock)

    results = [
        ("exact_match", rate({"type": "exact_match"}, text),
         raw(lambda: pc.equal(text["output"], text["expected"])), "Arrow equal; 70% of rows fail", "rows/s"),
        ("  exact_match, 95% equal", rate({"type": "exact_match"}, mostly_equal),
         raw(lambda: pc.equal(mostly_equal["output"], mostly_equal["expected"])), "Arrow equal; 5% fail", "rows/s"),
        ("contains", rate({"type": "contains"}, pieces),
         raw(lambda: [e in o for o, e in zip(out_list, pieces["expected"].to_pylist())]),
         "str in, Python lists; 30% fail", "rows/s"),
        ("regex", rate({"type": "regex", "config": REGEX}, text),
         raw(lambda: pc.match_substring_regex(text["output"], "(?i)(?:capital|首都)\\s*\\S+")),
         "Arrow match_substring_regex", "rows/s"),
        ("json_schema", rate({"type": "json_schema", "config": {"schema": presets.SCHEMA}}, docs),
         _raw_json(docs, repeats), "orjson + jsonschema-rs loop", "rows/s"),
    ]
    lev_n = rows // 10  # levenshtein costs ~1,000x a comparison: a tenth of the rows
    lev = text.slice(0, lev_n)
    lo, le = out_list[:lev_n], exp_list[:lev_n]
    ours = rate({"type": "similarity"}, lev, workers=1)
    base = raw(lambda: cpdist(lo, le, scorer=Levenshtein.normalized_similarity, workers=1, score_hint=0.8,
                              dtype=np.float64), lev_n)
    results.append(("similarity/levenshtein", ours, base, f"cpdist, 1 worker ({ours / base:.2f}x)", "rows/s"))
    ours_all = rate({"type": "similarity"}, lev, time.perf_counter, workers=0)
    base_all = raw(lambda: cpdist(lo, le, scorer=Levenshtein.normalized_similarity, workers=-1, score_hint=0.8,
                                  dtype=np.float64), lev_n, time.perf_counter)
    results.append(("  levenshtein, all cores", ours_all, base_all, f"cpdist, all cores ({ours_all / base_all:.2f}x)",
                    "rows/s"))
    from assay.graders import similarity as sim

    for algo, many in (("jaccard", sim.jaccard_many), ("cosine", sim.cosine_many)):
        results.append((f"similarity/{algo}", rate({"type": "similarity", "config": {"algorithm": algo}}, lev),
                        raw(lambda many=many: many(lo, le), lev_n), f"{algo}_many (C)", "rows/s"))
    return results


def _raw_json(docs: pa.Table, repeats: int) -> float:
    import orjson

    from assay.graders.json_schema import JsonSchemaConfig

    validator = JsonSchemaConfig.model_validate({"schema": presets.SCHEMA}).validator
    texts = docs["output"].to_pylist()

    def loop() -> None:
        for t in texts:
            try:
                validator.is_valid(orjson.loads(t))
            except orjson.JSONDecodeError:
                pass

    return len(texts) / median_seconds(loop, repeats)


def report(results: list[tuple[str, float, float, str, str]]) -> None:
    print(f"{'columnar path':32} {'assay':>12} {'target':>14} {'raw library':>14}")
    for name, ours, base, label, _unit in results:
        target, unit = TARGETS.get(name, (None, ""))
        if name == "similarity/levenshtein":
            shown = f"{ours / base:.2f}x raw"
            goal = f">= {target}x raw"
            met = ours / base >= target
        else:
            shown = f"{ours:,.0f}"
            goal = f">= {target:,.0f}" if target else ""
            met = target is None or ours >= target
        flag = "" if target is None else ("  ok" if met else "  BELOW TARGET")
        print(f"{name:32} {shown:>12} {goal:>14} {base:>14,.0f}  ({label}){flag}")


if __name__ == "__main__":
    report(main())
