"""Levels 2–5 response surface and the allocation grammar.

Every failure here is ``malformed``: the text cannot be read as an allocation.
"""

from __future__ import annotations

import re
from typing import Final

from modebench.domains._protocol import Malformed
from modebench.domains._surface import answer_prefix, has_box, last_boxed, screen_unboxed
from modebench.domains.pantry_plan.reference import MAX_GRAMS

CANDIDATE_CAP: Final = 512
_PREFIX: Final = answer_prefix("answer|plan|recipe")
_SEPARATORS: Final = re.compile(r"[;,]")
# ASCII ids and digits (``[0-9]`` never matches full-width digits); ``\s`` is Unicode, so NBSP
# around ``=`` is accepted.
_PIECE: Final = re.compile(r"([a-z][a-z0-9_]{0,31})\s*=\s*([0-9]+)")

Allocation = tuple[tuple[str, int], ...]


def candidate(text: str) -> str:
    """The allocation candidate of a response (no 512 cap or prefix stripping inside a box)."""
    if has_box(text):
        found = last_boxed(text)
    else:
        found = screen_unboxed(text, cap=CANDIDATE_CAP, prefix=_PREFIX)
    if found is None:
        raise Malformed("invalid response surface")
    return found


def parse_allocation(text: str) -> Allocation:
    """``id=grams`` pieces separated by ``;`` or ``,`` → ``(id, grams)`` pairs sorted by id."""
    s = text.strip()
    if not s or len(s) > CANDIDATE_CAP:
        raise Malformed("candidate is empty or too long")
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1].strip()
    pieces = [raw.strip() for raw in _SEPARATORS.split(s)]
    # Every piece is checked for emptiness before any is parsed, as the reference does: which
    # diagnostic wins matters, since its length counts against the worker reply cap.
    if not all(pieces):
        raise Malformed("candidate contains an empty allocation")
    pairs: dict[str, int] = {}
    for piece in pieces:
        match = _PIECE.fullmatch(piece)
        if match is None:
            raise Malformed(f"invalid allocation {piece!r}")
        ident, digits = match.groups()
        if ident in pairs:
            raise Malformed(f"duplicate allocation for {ident!r}")
        grams = int(digits)
        if not 1 <= grams <= MAX_GRAMS:
            raise Malformed(f"allocation for {ident!r} is out of range")
        pairs[ident] = grams
    return tuple(sorted(pairs.items()))


__all__ = ["Allocation", "CANDIDATE_CAP", "candidate", "parse_allocation"]
