"""Countdown: combine every given number once with + - * / and parentheses to hit the target.

The scoring contract is described in ``docs/scoring/countdown.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

from modebench.domains._protocol import CardText, DomainPlugin
from modebench.domains.countdown import prompt
from modebench.domains.countdown.generate import generate
from modebench.domains.countdown.grade import grade
from modebench.domains.countdown.modes import modes
from modebench.domains.countdown.reference import validate_reference


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One fully parenthesised expression per mode of the task, in key order."""
    return list(modes(tuple(answer["numbers"]), answer["target"]).values())


CARD = CardText(
    name="Countdown",
    task="Exact integer arithmetic with a fixed multiset of operands.",
    canonical_identity=(
        "Normalized expression tree; commutative children normalize, but arbitrary algebraic equivalence or reassociation does not collapse trees."
    ),
    source="Synthetic, exactly enumerated arithmetic instances.",
)


PLUGIN = DomainPlugin(
    name="countdown",
    verifiers=("countdown",),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    card=CARD,
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["PLUGIN"]


def __getattr__(name: str) -> Any:
    # 0.4.0's per-domain modules, imported on first use (docs/compatibility.md).
    if name in ("grading", "verifier"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
