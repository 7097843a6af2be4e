"""How far a judge agrees with people: pure functions over (judge verdict, human label) pairs.

``compare`` gives agreement, Cohen's kappa, true-positive and true-negative rates (a human
"pass" is the positive class), the ROC points of the judge's score (threshold → TPR, FPR) and
the threshold that maximises agreement. ``calibration_status`` turns that into
``calibrated`` / ``uncalibrated`` / ``stale``; ``judge_fingerprint`` names the judge's spec so
that a later change to its rubric, model or parameters makes an old calibration ``stale``.

``human_calibration`` summaries (``runner.reviews.calibration_summary``) and ``assay
calibrate`` both use these functions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from assay.core.spec import CompiledSpec
from assay.core.stats import wilson

DEFAULT_MIN_LABELS = 20
"""Fewest compared labels for a judge to count as calibrated."""
DEFAULT_MIN_KAPPA = 0.6
"""Lowest Cohen's kappa for a judge to count as calibrated ("substantial" agreement)."""

Status = Literal["calibrated", "uncalibrated", "stale"]


@dataclass(frozen=True, slots=True)
class Pair:
    """One sample both the judge and a person graded."""

    sample_id: str
    judge_passed: bool
    judge_score: float | None
    human_passed: bool
    human_score: float | None = None


@dataclass(frozen=True, slots=True)
class RocPoint:
    """The judge's verdicts had its pass mark been ``threshold`` (pass when score >= it)."""

    threshold: float
    tpr: float | None
    fpr: float | None
    agreement: float


@dataclass(slots=True)
class LabelComparison:
    """A judge against human labels. Rates are None where their denominator is 0."""

    n: int
    confusion: dict[str, int]
    """``tp`` both pass, ``fp`` judge pass / human fail, ``fn`` judge fail / human pass, ``tn`` both fail."""
    agreement: float | None
    kappa: float | None
    tpr: float | None
    tnr: float | None
    mean_abs_diff: float | None
    """Mean |judge score - human score| over pairs where the human gave a score."""
    roc: list[RocPoint] = field(default_factory=list)
    best: RocPoint | None = None
    """The ROC point of highest agreement (ties: the larger TPR - FPR, then the lower threshold)."""

    def to_dict(self) -> dict[str, Any]:
        """The fields, with the Wilson 95% intervals of agreement, TPR and TNR beside them."""
        c = self.confusion
        def ci(hits: int, total: int) -> list[float] | None:
            found = wilson(hits, total)
            return list(found) if found else None

        return {**asdict(self), "agreement_ci": ci(c["tp"] + c["tn"], self.n),
                "tpr_ci": ci(c["tp"], c["tp"] + c["fn"]), "tnr_ci": ci(c["tn"], c["tn"] + c["fp"])}


def confusion(pairs: Sequence[Pair]) -> dict[str, int]:
    """Counts of the four pass/fail combinations, human labels being the truth."""
    out = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for p in pairs:
        out[("t" if p.judge_passed == p.human_passed else "f") + ("p" if p.judge_passed else "n")] += 1
    return out


def cohen_kappa(conf: dict[str, int]) -> float | None:
    """Cohen's kappa of a 2x2 confusion, (po - pe) / (1 - pe), or None when undefined (no
    pairs, or both raters constant and equal, so chance agreement is 1). Computed in the
    equivalent integer form 2(tp·tn - fp·fn) / ((tp+fp)(fp+tn) + (tp+fn)(fn+tn)), so a kappa
    exactly at a bar (0.4) is not a rounding error below it."""
    tp, fp, fn, tn = conf["tp"], conf["fp"], conf["fn"], conf["tn"]
    denominator = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    return None if denominator == 0 else 2 * (tp * tn - fp * fn) / denominator


def _rate(hit: int, miss: int) -> float | None:
    return hit / (hit + miss) if hit + miss else None


def roc_points(pairs: Sequence[Pair]) -> list[RocPoint]:
    """One point per distinct judge score, highest first: the judge's TPR, FPR and agreement
    had it passed exactly the samples scoring at least that much. Pairs without a judge
    score are left out."""
    scored = [(p, s) for p in pairs if (s := p.judge_score) is not None]
    out = []
    for t in sorted({s for _, s in scored}, reverse=True):
        conf = confusion([Pair(p.sample_id, s >= t, s, p.human_passed) for p, s in scored])
        out.append(RocPoint(t, _rate(conf["tp"], conf["fn"]), _rate(conf["fp"], conf["tn"]),
                            (conf["tp"] + conf["tn"]) / len(scored)))
    return out


def best_threshold(points: Sequence[RocPoint]) -> RocPoint | None:
    """The point of highest agreement; ties go to the larger TPR - FPR, then the lower threshold."""
    if not points:
        return None
    return max(points, key=lambda p: (p.agreement, (p.tpr or 0.0) - (p.fpr or 0.0), -p.threshold))


def compare(pairs: Sequence[Pair]) -> LabelComparison:
    """Every statistic of the judge against the labels in ``pairs``."""
    conf = confusion(pairs)
    n = len(pairs)
    diffs = [abs(p.judge_score - p.human_score) for p in pairs
             if p.judge_score is not None and p.human_score is not None]
    roc = roc_points(pairs)
    return LabelComparison(n=n, confusion=conf, agreement=(conf["tp"] + conf["tn"]) / n if n else None,
                      kappa=cohen_kappa(conf), tpr=_rate(conf["tp"], conf["fn"]), tnr=_rate(conf["tn"], conf["fp"]),
                      mean_abs_diff=sum(diffs) / len(diffs) if diffs else None, roc=roc, best=best_threshold(roc))


def calibration_status(comparison: LabelComparison, *, min_labels: int = DEFAULT_MIN_LABELS,
                       min_kappa: float = DEFAULT_MIN_KAPPA, compared_with: str | None = None,
                       current: str | None = None) -> tuple[Status, str]:
    """The status and why. ``stale`` when the judge's spec fingerprint the labels were
    compared with (``compared_with``) differs from the judge's spec now (``current``);
    otherwise ``calibrated`` when at least ``min_labels`` pairs agree with kappa at least
    ``min_kappa``, else ``uncalibrated``. An unknown fingerprint (None) never makes it stale."""
    if compared_with is not None and current is not None and compared_with != current:
        return "stale", (f"the judge's spec (rubric, model or parameters) changed since it was compared with the "
                         f"labels ({compared_with} → {current}); re-run the suite and calibrate again")
    n, kappa = comparison.n, comparison.kappa
    if n < min_labels:
        return "uncalibrated", f"{n} labels compared, fewer than {min_labels}"
    if kappa is None:
        return "uncalibrated", "kappa is undefined: the judge and the labels each say the same thing throughout"
    if kappa < min_kappa:
        return "uncalibrated", f"kappa {kappa:.3f} is below {min_kappa:g}"
    return "calibrated", f"{n} labels, kappa {kappa:.3f} ≥ {min_kappa:g}"


def judge_fingerprint(spec: CompiledSpec) -> str:
    """A short hash of what decides a judge's verdicts: its type and config (rubric, model,
    scale, threshold, sampling parameters), plus prepared text the config only names (a
    ``rubric_file``'s content) and, for graders made of children, theirs."""
    doc = _identity(spec)
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()[:16]


def _identity(spec: CompiledSpec) -> dict[str, Any]:
    config = spec.config
    doc: dict[str, Any] = {"type": spec.type, "config": config.model_dump(mode="json")}
    criteria = getattr(config, "criteria", None)  # the rubric in force, read from a file at validation
    if isinstance(criteria, str):
        doc["criteria"] = criteria
    children = getattr(config, "children", None)
    if isinstance(children, (list, tuple)) and all(isinstance(c, CompiledSpec) for c in children):
        doc["children"] = [_identity(c) for c in children]
    return doc
