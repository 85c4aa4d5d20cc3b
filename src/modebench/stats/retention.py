"""Mode retention between two runs of the same prompt: which of A's solution modes B still finds.

Per prompt, with M_A and M_B the sets of canonical keys each run verified: retained = |M_A ∩ M_B|,
lost = |M_A ∖ M_B|, gained = |M_B ∖ M_A|, union = |M_A ∪ M_B|, and lost draws = how many of A's
verified draws fall in modes B never produces. Higher pass@1 together with lost modes is the
signature of mode collapse. Canonical keys are prompt-local, so sets are never pooled across prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Retention", "prompt_record", "retention"]


class Retention(NamedTuple):
    modes_a: int
    modes_b: int
    retained: int
    lost: int
    gained: int
    union: int
    lost_draws_a: int


def retention(modes_a: Mapping[str, int], modes_b: Mapping[str, int]) -> Retention:
    """Retention counts of one prompt from each run's verified draws per mode."""
    a, b = set(modes_a), set(modes_b)
    lost = a - b
    return Retention(
        len(a), len(b), len(a & b), len(lost), len(b - a), len(a | b), sum(modes_a[m] for m in lost)
    )


def prompt_record(ident: str, modes_a: Mapping[str, int], modes_b: Mapping[str, int]) -> dict[str, Any]:
    """A per-prompt retention record with the mode keys themselves (``compare`` per-prompt output)."""
    a, b = set(modes_a), set(modes_b)
    verified_a = sum(modes_a.values())
    lost_draws = sum(modes_a[m] for m in a - b)
    return {
        "id": ident,
        "modes_a": sorted(a),
        "modes_b": sorted(b),
        "retained": sorted(a & b),
        "lost": sorted(a - b),
        "gained": sorted(b - a),
        "union": len(a | b),
        "lost_draw_share": lost_draws / verified_a if verified_a else None,
    }
