"""Candidate extraction and normalisation into ``=``-separated sides.

Extraction is the shared front end (``_surface``); what follows is Countdown's own rewriting:
operator aliases, a narrower prefix strip, and the split on ``=``.
"""

from __future__ import annotations

import re

from modebench.domains._surface import answer_prefix, has_box, last_boxed, screen_unboxed

UNBOXED_CAP = 160
_UNBOXED_PREFIX = answer_prefix("answer|expression|coloring|program")
# The prefix of the notation step: no ``the``/``final`` here, so ``\boxed{The answer is …}`` keeps its words.
_EXPRESSION_PREFIX = re.compile(r"^\s*(?:expression|answer)\s*(?:is|=|:)\s*", re.IGNORECASE)
# Plain substring replacements, applied in exactly this order.
_ALIASES = (("\\times", "*"), ("\\cdot", "*"), ("\\div", "/"), ("\u00f7", "/"), ("\u00d7", "*"), ("^", "**"))


def candidate(text: str) -> str | None:
    """The boxed candidate if ``\\boxed`` occurs anywhere, else the screened unboxed text."""
    if has_box(text):
        return last_boxed(text)
    return screen_unboxed(text, cap=UNBOXED_CAP, prefix=_UNBOXED_PREFIX)


def normalise(candidate_text: str) -> str:
    """Strip, rewrite operator aliases, drop one ``expression|answer`` prefix, strip again."""
    text = candidate_text.strip()
    for alias, operator in _ALIASES:
        if alias in text:
            text = text.replace(alias, operator)
    return _EXPRESSION_PREFIX.sub("", text, count=1).strip()


def sides(normalised: str) -> list[str]:
    """Non-empty stripped pieces of the text split on every ``=``, left to right."""
    return [piece for piece in (part.strip() for part in normalised.split("=")) if piece]


__all__ = ["UNBOXED_CAP", "candidate", "normalise", "sides"]
