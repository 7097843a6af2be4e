"""Throughput of each preset grader next to the raw library call it wraps, on the same data.

Data: generated pairs (output, expected) of 20-2000 characters (log-uniform, as answer
lengths are: many short, a few long; mean ~430), mixed ASCII and CJK, with the expected
text an edited copy of the output in 70% of pairs and equal in the rest. Figures are samples per second on one core
(median of several runs).

``dict_batch`` measures ``assay.grade_batch`` on plain dicts (the Samples built from them
included) beside the bare comparison on the same dicts, in CPU seconds of this process.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from collections.abc import Callable

import orjson

import assay
from assay.core.sample import Sample

ASCII_WORDS = ("the model answer is correct because capital city population river mountain "
               "deploy resource group error success output value json schema").split()
CJK = "北京是中国的首都上海人口东京日本の首都はです大阪河流山脉部署资源错误成功输出值"

SCHEMA = {"type": "object", "required": ["id", "name", "tags"],
          "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string"},
                         "tags": {"type": "array", "items": {"type": "string"}}, "score": {"type": "number"}}}


def make_text(rng: random.Random, length: int) -> str:
    parts: list[str] = []
    size = 0
    while size < length:
        if rng.random() < 0.4:
            chunk = "".join(rng.choice(CJK) for _ in range(rng.randint(2, 12)))
        else:
            chunk = " ".join(rng.choice(ASCII_WORDS) for _ in range(rng.randint(1, 6))) + " "
        parts.append(chunk)
        size += len(chunk)
    return "".join(parts)[:length]


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(max(1, len(chars) // 10)):
        i = rng.randrange(len(chars))
        chars[i] = rng.choice(CJK + "abcdefghij ")
    return "".join(chars)


def make_samples(n: int, seed: int = 7) -> list[Sample]:
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        out = make_text(rng, round(math.exp(rng.uniform(math.log(20), math.log(2000)))))
        exp = out if rng.random() < 0.3 else mutate(rng, out)
        samples.append(Sample(id=str(i), output=out, expected=exp))
    return samples


def make_json_samples(n: int, seed: int = 11) -> list[Sample]:
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        doc = {"id": rng.randint(-3, 10_000), "name": make_text(rng, rng.randint(5, 60)),
               "tags": [make_text(rng, 8) for _ in range(rng.randint(0, 5))], "score": rng.random()}
        if rng.random() < 0.1:
            doc.pop("name")
        text = orjson.dumps(doc).decode()
        if rng.random() < 0.05:
            text = text[:-1]
        samples.append(Sample(id=str(i), output=text))
    return samples


def rate(fn: Callable[[], object], n: int, repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Median items/s over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return n / statistics.median(times)


def main(n: int = 20_000, repeats: int = 5) -> list[tuple[str, float, float, str]]:
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    from assay.graders import similarity as sim
    from assay.graders._patterns import CompiledPattern
    from assay.graders.json_schema import JsonSchemaConfig

    samples = make_samples(n)
    outs = [s.output for s in samples]
    exps = [s.expected for s in samples]
    jsamples = make_json_samples(n)
    jtexts = [s.output for s in jsamples]
    validator = JsonSchemaConfig.model_validate({"schema": SCHEMA}).validator
    pattern = CompiledPattern(r"(?:capital|首都)\s*\S+", "i")

    def raw_json() -> None:
        for t in jtexts:
            try:
                validator.is_valid(orjson.loads(t))
            except orjson.JSONDecodeError:
                pass

    cases = [
        ("exact_match", {"type": "exact_match"}, samples, lambda: [o == e for o, e in zip(outs, exps)], "str =="),
        ("contains", {"type": "contains"}, samples, lambda: [e in o for o, e in zip(outs, exps)], "str in"),
        ("regex", {"type": "regex", "config": {"pattern": r"(?:capital|首都)\s*\S+", "flags": "i"}}, samples,
         lambda: [pattern.test(o) for o in outs], "RE2 match"),
        ("json_schema", {"type": "json_schema", "config": {"schema": SCHEMA}}, jsamples, raw_json,
         "orjson + jsonschema-rs"),
        ("similarity/levenshtein", {"type": "similarity"}, samples,
         lambda: cpdist(outs, exps, scorer=Levenshtein.normalized_similarity, workers=1),
         "rapidfuzz cpdist, no score_hint"),
        ("similarity/jaccard", {"type": "similarity", "config": {"algorithm": "jaccard"}}, samples,
         lambda: sim.jaccard_many(outs, exps), "tokenizer + jaccard_many (C)"),
        ("similarity/cosine", {"type": "similarity", "config": {"algorithm": "cosine"}}, samples,
         lambda: sim.cosine_many(outs, exps), "tokenizer + cosine_many (C)"),
    ]
    rows = []
    for name, spec, data, raw, raw_label in cases:
        graded = rate(lambda: assay.grade_batch(spec, data), len(data), repeats)
        base = rate(raw, len(data), repeats)
        rows.append((name, graded, base, raw_label))
    return rows


DICT_TARGET = 200_000  # issue 11: grade_batch on dicts, exact_match, samples/s


def dict_batch(n: int = 100_000, repeats: int = 5) -> list[tuple[str, float, float, str]]:
    """``assay.grade_batch({"type": "exact_match"}, dicts)``, samples per CPU-second (median of
    ``repeats`` runs), beside ``output == expected`` over the same dicts: on ``n`` dicts
    ``{"output": str(i), "expected": str(i)}`` (all pass: the cost of the objects alone), and
    on the generated pairs above repeated to ``n`` (70% fail, each with its reason)."""
    pairs = make_samples(20_000, seed=7)
    cases = [("ids as text, all equal", [{"output": str(i), "expected": str(i)} for i in range(n)]),
             ("generated pairs, 70% fail", [{"output": pairs[i % len(pairs)].output,
                                             "expected": pairs[i % len(pairs)].expected} for i in range(n)])]
    rows = []
    for name, dicts in cases:
        graded = rate(lambda dicts=dicts: assay.grade_batch({"type": "exact_match"}, dicts), n, repeats,
                      time.process_time)
        base = rate(lambda dicts=dicts: [d["output"] == d["expected"] for d in dicts], n, repeats, time.process_time)
        rows.append((name, graded, base, "output == expected on the dicts"))
    return rows


def report_dict_batch(rows: list[tuple[str, float, float, str]]) -> None:
    print(f"{'grade_batch on dicts, exact_match':34} {'assay':>10} {'target':>10} {'floor':>12}")
    for name, graded, base, label in rows:
        flag = "ok" if graded >= DICT_TARGET else "BELOW TARGET"
        print(f"  {name:32} {graded:>10,.0f} {DICT_TARGET:>10,} {base:>12,.0f}  ({label})  {flag}")


if __name__ == "__main__":  # --dicts: the grade_batch-on-dicts figures alone
    if "--dicts" not in sys.argv:
        for name, graded, base, label in main():
            print(f"{name:24} {graded:>12,.0f}/s   raw {base:>12,.0f}/s  ({label})")
        print()
    report_dict_batch(dict_batch())
