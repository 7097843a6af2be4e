"""The batched sandbox path gives, sample by sample, the results of one sandbox call per sample,
over the generated dataset (text and non-text values, unicode, long strings, nulls)."""

from __future__ import annotations

import shutil

import pytest
from generated import mixed_rows

import assay

FIELDS = ("status", "passed", "score", "reason", "error", "details")
PYTHON = '''
import json
def evaluate(input, output, expected, metadata):
    if isinstance(output, str) and output.startswith("ab" * 40):
        raise ValueError("too repetitive")
    if isinstance(output, str) and "😀" in output:
        print("emoji in", len(output), "characters")
    same = output == expected
    text = json.dumps(output, ensure_ascii=False)
    return {"passed": same, "score": min(1.0, len(text) / 500), "reason": text[:80],
            "details": {"kind": type(output).__name__}}
'''
NODE = '''
module.exports = async function evaluate(input, output, expected, metadata) {
  if (typeof output === 'string' && output.startsWith('ab'.repeat(40))) throw new Error('too repetitive');
  if (typeof output === 'string' && output.includes('😀')) console.log('emoji in', output.length, 'characters');
  const text = JSON.stringify(output);
  return { passed: JSON.stringify(output) === JSON.stringify(expected), score: Math.min(1, (text || '').length / 500),
           reason: String(text).slice(0, 80), details: { kind: typeof output } };
};
'''


def _fields(result):
    return {k: getattr(result, k) for k in FIELDS}


@pytest.mark.parametrize("language", ["python", "nodejs"])
def test_batched_sandbox_as_one_call_per_sample(language):
    if language == "nodejs" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    rows = mixed_rows(120, seed=21)
    spec = {"type": "code", "config": {"language": language, "code": PYTHON if language == "python" else NODE}}
    batched = assay.grade_batch(spec, rows)
    single = [assay.grade(spec, row) for row in rows]
    for row, b, s in zip(rows, batched, single):
        assert _fields(b) == _fields(s), (str(row)[:200], _fields(b), _fields(s))
    statuses = {r.status.value for r in batched}
    assert {"passed", "failed", "error"} <= statuses
    assert any("output" in r.details for r in batched)
