"""Response surface → candidate text: the boxed path, the unboxed path, and the
LaTeX ``\\lambda`` rewrite that both paths share.

Every failure here is the single ``Malformed("invalid response surface")`` outcome.
"""

from __future__ import annotations

import re

from modebench.domains._protocol import Malformed
from modebench.domains._surface import answer_prefix, has_box, last_boxed, screen_unboxed

#: The unboxed length cap; applied before the ``Answer:`` prefix is removed.
UNBOXED_CAP = 240
SURFACE_ERROR = "invalid response surface"

# Only "python" (any case) or no tag: "```py" leaves "py\n..." in the capture, which the newline
# screen then rejects.
_FENCE = re.compile(r"```(?:python)?\s*(.*?)\s*```", re.IGNORECASE | re.DOTALL)
_PREFIX = answer_prefix("answer|program|function")
_LATEX_LAMBDA = re.compile(r"^\\lambda(?:\s+|\\,\s*)n\s*:\s*")


def normalize_latex_lambda(candidate: str) -> str:
    """Rewrite a leading ``\\lambda n:`` / ``\\lambda\\,n:`` to ``lambda n: `` once."""
    candidate = candidate.strip()
    if candidate.startswith("\\lambda"):
        candidate = _LATEX_LAMBDA.sub("lambda n: ", candidate, count=1).strip()
    return candidate


def extract_candidate(text: str) -> str:
    """The candidate lambda text of a response, or ``Malformed`` for a surface failure."""
    if has_box(text):
        # Last ``\boxed`` only, even when an earlier box is fine; no prefix/fence/screening here.
        boxed = last_boxed(text)
        candidate = normalize_latex_lambda(boxed) if boxed is not None else ""
    else:
        candidate = text.strip()
        fenced = _FENCE.fullmatch(candidate)
        if fenced is not None:
            candidate = fenced.group(1).strip()
        screened = screen_unboxed(candidate, cap=UNBOXED_CAP, prefix=_PREFIX)
        candidate = normalize_latex_lambda(screened) if screened is not None else ""
    if not candidate:
        raise Malformed(SURFACE_ERROR)
    return candidate
