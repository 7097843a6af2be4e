"""Token prices for ``JudgeReply.cost_usd``: a JSON file of dollars per million tokens,
``{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}`` (``ASSAY_JUDGE_PRICES``)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million input (prompt) and output (completion) tokens."""

    input: float
    output: float


def load_prices(path: str | None) -> dict[str, Price]:
    """The price table in ``path``; a missing or malformed file is warned about once and gives
    an empty table (costs are then None): a price list must never stop a run."""
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError) as exc:
        log.warning("judge prices %s cannot be read (%s); costs will be left out", path, exc)
        return {}
    if not isinstance(raw, dict):
        log.warning("judge prices %s: expected an object {model: {input, output}}; costs will be left out", path)
        return {}
    table: dict[str, Price] = {}
    for model, entry in raw.items():
        price = _price(entry)
        if price is None:
            log.warning("judge prices %s: %r needs numbers {\"input\": ..., \"output\": ...} "
                        "(dollars per million tokens); skipped", path, model)
            continue
        table[str(model)] = price
    return table


def _price(entry: object) -> Price | None:
    if not isinstance(entry, dict):
        return None
    given, made = _amount(entry.get("input")), _amount(entry.get("output"))
    return None if given is None or made is None else Price(given, made)


def _amount(value: object) -> float | None:
    """A price as a float: a finite number, at least 0 (a bool is not one); else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def cost_usd(prices: Mapping[str, Price], models: tuple[str | None, ...], usage: Mapping[str, int]) -> float | None:
    """The cost of ``usage`` at the first of ``models`` with a price (the endpoint's reported
    model, then the requested one), or None when none has a price or the usage is unknown."""
    price = next((prices[m] for m in models if m and m in prices), None)
    if price is None or "prompt_tokens" not in usage or "completion_tokens" not in usage:
        return None
    return (usage["prompt_tokens"] * price.input + usage["completion_tokens"] * price.output) / 1_000_000
