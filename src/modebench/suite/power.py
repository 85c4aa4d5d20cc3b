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

from modebench.validation import InputError

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
    if not 0 < alpha < 1:
        raise InputError("--alpha must be between 0 and 1")
    if not 0 < power < 1:
        raise InputError("--power must be between 0 and 1")
    if not 0 < discordant <= 1:
        raise InputError("--discordant must be in (0, 1]")
    if not 0 < delta or delta * delta >= discordant or delta > discordant:
        raise InputError("--delta must be positive and smaller than the discordant rate (and δ² < ψ)")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws <= 0:
        raise InputError("--draws must be a positive integer")


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
    if isinstance(items, bool) or not isinstance(items, int) or items <= 0:
        raise InputError("--items must be a positive integer")
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


__all__ = ["PowerResult", "detectable_delta", "items_needed"]
