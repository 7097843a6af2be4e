"""How a rate or a mean is written beside its 95% interval, in every report."""

from __future__ import annotations

from collections.abc import Sequence


def rate(value: float | None, ci: Sequence[float] | None) -> str:
    """``68.3% [61.2, 74.6]``; ``-`` when nothing was scored."""
    if value is None:
        return "-"
    return f"{value:.1%}" + (f" [{ci[0] * 100:.1f}, {ci[1] * 100:.1f}]" if ci else "")


def mean(value: float | None, ci: Sequence[float] | None) -> str:
    """``0.712 [0.650, 0.771]``; ``-`` when nothing was scored."""
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def delta(value: float | None, ci: Sequence[float] | None, percent: bool = True) -> str:
    """A signed difference with its interval: ``+4.9 [-1.2, +11.0]`` (in percentage points
    when ``percent``, else as is)."""
    if value is None:
        return "-"
    if not percent:
        return f"{value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
    return f"{value * 100:+.1f}" + (f" [{ci[0] * 100:+.1f}, {ci[1] * 100:+.1f}]" if ci else "")


def p_value(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"
