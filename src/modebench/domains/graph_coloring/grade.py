"""Graph-coloring grading: candidate extraction, colouring grammar, checks, key.

The grammar is deliberately digit-count based: only the ASCII digits 1, 2, 3 in the candidate
matter, and their count alone decides between the full form (n digits), the fill form (one digit
per hidden vertex) and ``malformed``. The reference also strips prefixes and lower-cases before
the scan, but those steps never change which digits 1-3 remain, so they are not reproduced.
"""

from __future__ import annotations

import re

from modebench.domains._protocol import Correct, Incorrect, Malformed
from modebench.domains._surface import answer_prefix, has_box, last_boxed, screen_unboxed
from modebench.domains.graph_coloring.reference import GraphRef

KEY_PREFIX = "graph_coloring:"
_UNBOXED_CAP = 160
_PREFIX = answer_prefix("answer|expression|coloring|program")
# Everything that is not an ASCII colour digit is noise (other digits, full-width digits, ...).
_NOISE = re.compile(r"[^123]+")


def extract_candidate(text: str) -> str | None:
    """The shared surface rules: the last ``\\boxed{}`` if ``\\boxed`` occurs, else the screened text."""
    if has_box(text):
        return last_boxed(text)
    return screen_unboxed(text, cap=_UNBOXED_CAP, prefix=_PREFIX)


def read_coloring(ref: GraphRef, candidate: str) -> tuple[str, bool]:
    """Return ``(colouring digits for vertices 1..n, was_full_form)`` or raise ``Malformed``.

    Full form wins whenever the digit count equals n, even if it also equals the hidden count.
    """
    digits = _NOISE.sub("", candidate)
    if len(digits) == ref.n:
        return digits, True
    if ref.partial is not None and len(digits) == len(ref.hidden):
        filled = list(ref.template)
        for position, digit in zip(ref.hidden, digits):
            filled[position] = digit
        return "".join(filled), False
    raise Malformed("invalid coloring surface")


def is_proper(ref: GraphRef, coloring: str, check_fixed: bool) -> bool:
    """Every shown colour kept (only a full-form answer can change one) and no monochrome edge."""
    if check_fixed and ref.partial is not None:
        for shown, digit in zip(ref.template, coloring):
            if shown != "0" and shown != digit:
                return False
    return all(coloring[u] != coloring[v] for u, v in ref.edges)


def grade(level: int, ref: GraphRef, text: str) -> Correct:
    """Grade one response; the key is the complete colouring, fixed vertices included."""
    candidate = extract_candidate(text)
    if candidate is None:
        raise Malformed("invalid response surface")
    coloring, full = read_coloring(ref, candidate)
    if not is_proper(ref, coloring, full):
        raise Incorrect("edge or fixed-color violation")
    return Correct(KEY_PREFIX + coloring)


__all__ = ["KEY_PREFIX", "extract_candidate", "grade", "is_proper", "read_coloring"]
