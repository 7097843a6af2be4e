"""The paths that spare a small run numpy (issue 32, start-up) give what the numpy paths give."""

from __future__ import annotations

import math
import random
from array import array
from statistics import NormalDist

import numpy as np
import pytest

from assay.core import stats, summary
from assay.core.intervals import of_arrays, of_sums
from assay.core.summary import Outcomes


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99, 0.5])
def test_the_normal_quantile_is_the_reference_one(confidence):
    assert stats.z_value(confidence) == pytest.approx(NormalDist().inv_cdf(0.5 + confidence / 2), abs=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_intervals_from_sums_equal_intervals_from_arrays(seed, monkeypatch):
    rng = random.Random(seed)
    n = rng.choice([1, 2, 3, 10, 257, 4000])
    passed = bytearray(rng.random() < rng.random() for _ in range(n))
    scores = array("d", (math.nan if rng.random() < 0.1 else rng.choice([0.0, 1.0, rng.random()]) for _ in range(n)))
    light = Outcomes(passed, scores).intervals()
    monkeypatch.setattr(summary, "_SUMS_IN_PYTHON", -1)
    heavy = Outcomes(passed, scores).intervals()
    reference = of_arrays(np.frombuffer(passed, dtype=np.uint8), np.frombuffer(scores, dtype=np.float64))
    for got in (light, heavy):
        assert got.pass_rate == pytest.approx(reference.pass_rate, abs=1e-12)
        assert got.mean_score == pytest.approx(reference.mean_score, abs=1e-12) or got.mean_score == reference.mean_score
    assert of_sums(0, 0, 0, 0, 0).pass_rate is None
