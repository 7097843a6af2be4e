"""The CI gate of a comparison (``assay compare --fail-on-regression``), on its JSON shape
(``Comparison.to_dict()``, or the service's answer read back), so a comparison of files and
one fetched from a service are gated by the same rule.

Two rules. Without a margin: a grader (or the samples' verdicts) fails the gate when its pass
rate fell and the p-value adjusted for the number of comparisons is below alpha. With a margin
M (a share, 0.02 for 2 points): non-inferiority, every compared grader must show that the new
run is not worse by M or more: the lower end of its paired 95% interval must lie above -M
(each interval one-sided at 97.5%; all must hold, so no adjustment is needed). A grader found
in one run only is not compared, so it neither fails nor passes the gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gate_failures(doc: Mapping[str, Any], alpha: float, margin: float | None = None) -> list[tuple[str, str]]:
    """``(grader, why)`` for each comparison that fails the gate (see the module's docstring)."""
    failed = []
    for g in [*doc["graders"], doc["overall"]]:
        if g.get("present", "both") != "both":
            continue
        if margin is not None:
            ci = g["delta_ci"]
            if ci is None:
                failed.append((g["grader"], "no pairs"))
            elif ci[0] <= -margin:
                failed.append((g["grader"], f"its interval reaches {ci[0] * 100:+.1f} pts"))
            continue
        p = g.get("p_value_adjusted", g["p_value"])
        if g["delta"] is not None and g["delta"] < 0 and p is not None and p < alpha:
            failed.append((g["grader"], f"p adj = {p:.3g}"))
    return failed
