"""Counts in user-facing text: ``1 response``, ``2 responses`` (one rule for every message)."""

from __future__ import annotations

__all__ = ["counted", "were"]


def counted(number: int, word: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """``number`` and the noun, singular for exactly one (``plural`` when not just ``word + "s"``);
    ``grouped`` writes thousands separators (``1,234``)."""
    shown = f"{number:,}" if grouped else str(number)
    return f"{shown} {word if number == 1 else plural or word + 's'}"


def were(number: int) -> str:
    """The verb agreeing with a count: ``was`` for one, else ``were``."""
    return "was" if number == 1 else "were"
