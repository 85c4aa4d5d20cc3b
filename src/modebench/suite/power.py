"""Sample size for a paired accuracy comparison (McNemar test) and its inverse.

Two models are graded on the same items; an item is *discordant* when exactly one of them solves
it. With discordant rate ψ and accuracy difference δ (so the discordant split is (ψ±δ)/2), the
number of items a two-sided McNemar test at level α needs for the given power is (Connor 1987)

    n = ( z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²) )² / δ²,   rounded up.

Draws per prompt: McNemar compares one binary outcome per item (e.g. pass@k over the item's k
saved draws, or the first draw). Extra draws do not add independent pairs — they change which
outcome is compared and therefore ψ and δ, which must be measured for that same outcome. The draw
count is reported so the generation budget (items × draws) is explicit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

from modebench._words import counted
from modebench.validation import InputError, OptionError, positive_integer, unit_fraction

_NORMAL = NormalDist()


@dataclass(frozen=True)
class PowerResult:
    items: int
    delta: float
    discordant: float
    alpha: float
    power: float
    draws_per_prompt: int
    responses: int
    test: str = "McNemar (two-sided, normal approximation; Connor 1987)"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(delta: float, discordant: float, alpha: float, power: float, draws: int) -> None:
    unit_fraction(alpha, "alpha")
    unit_fraction(power, "power")
    if not 0 < discordant <= 1:
        raise OptionError("discordant_range", "discordant must be in (0, 1]")
    if not 0 < delta or delta * delta >= discordant or delta > discordant:
        raise OptionError(
            "delta_range", "delta must be positive and smaller than the discordant rate (and δ² < ψ)"
        )
    positive_integer(draws, "draws", option=True)


def items_needed(
    delta: float, discordant: float, alpha: float = 0.05, power: float = 0.8, draws: int = 1
) -> PowerResult:
    """Items needed to detect accuracy difference ``delta`` with the given power."""
    _check(delta, discordant, alpha, power, draws)
    z_alpha = _NORMAL.inv_cdf(1 - alpha / 2)
    z_power = _NORMAL.inv_cdf(power)
    root = z_alpha * math.sqrt(discordant) + z_power * math.sqrt(discordant - delta * delta)
    items = math.ceil(root * root / (delta * delta) - 1e-9)
    return PowerResult(items, delta, discordant, alpha, power, draws, items * draws)


def detectable_delta(items: int, discordant: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest accuracy difference ``items`` paired items detect with the given power."""
    positive_integer(items, "items", option=True)
    low, high = 1e-9, min(discordant, math.sqrt(discordant)) * (1 - 1e-12)
    if items_needed(high, discordant, alpha, power).items > items:
        raise InputError("no detectable difference: too few items for this discordant rate")
    for _ in range(200):  # items_needed decreases in delta: bisect on the boundary
        middle = (low + high) / 2
        if items_needed(middle, discordant, alpha, power).items <= items:
            high = middle
        else:
            low = middle
    return high


__all__ = ["PowerResult", "detectable_delta", "items_needed", "plan", "render"]


def plan(
    *,
    discordant: float,
    delta: float | None = None,
    items: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    draws: int = 1,
) -> dict[str, Any]:
    """Items needed to detect ``delta``, or (given ``items``) the difference they can detect."""
    if delta is not None and items is None:
        return items_needed(delta, discordant, alpha, power, draws).as_dict()
    if items is None or delta is not None:
        raise OptionError(
            "power_target", "give exactly one of delta (items needed) or items (detectable difference)"
        )
    detectable = detectable_delta(items, discordant, alpha, power)
    result = items_needed(detectable, discordant, alpha, power, draws).as_dict()
    result["items"] = items
    result["responses"] = items * draws
    result["detectable_delta"] = detectable
    return result


def render(result: dict[str, Any]) -> str:
    """One line: the detectable difference of a fixed item count, or the items a difference needs."""
    if "detectable_delta" in result:
        return f"minimum detectable difference with {result['items']} items: {result['detectable_delta']:.4f}"
    draws = result["draws_per_prompt"]
    if draws == 1:
        return f"items needed: {counted(result['items'], 'item')}"
    return (
        f"items needed: {counted(result['items'], 'item')} ({counted(result['responses'], 'response')} at "
        f"{draws} draws per item)"
    )
