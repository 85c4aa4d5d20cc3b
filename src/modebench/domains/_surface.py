"""Response-surface helpers shared by several domains (the ``\\boxed{}`` scan, unboxed screening)."""

from __future__ import annotations

import re

_BOX = "\\boxed"
_BOX_OPEN = "\\boxed{"


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` by raw brace counting, or None.

    The scan starts at the last ``\\boxed`` occurrence even if that one is broken; an unclosed,
    empty or spaced (``\\boxed {``) last box yields None. Inner braces are kept verbatim.
    """
    start = text.rfind(_BOX)
    # The rule counts braces from that ``\\boxed`` and then requires it to be followed by ``{``:
    # without it the answer is None whatever the count, so that is tested first, and the count
    # starts at depth 1 after that brace. The braces are then found with ``str.find`` (a whole
    # answer without inner braces costs two searches); each stretch is searched once, so a
    # long or deeply nested box stays linear.
    if start < 0 or not text.startswith(_BOX_OPEN, start):
        return None
    begin = position = start + len(_BOX_OPEN)
    depth = 1
    closing = -1
    while True:
        if closing < position:
            closing = text.find("}", position)
            if closing < 0:
                return None  # unclosed
        opening = text.find("{", position, closing)
        if opening >= 0:
            depth += 1
            position = opening + 1
            continue
        depth -= 1
        if depth == 0:
            return text[begin:closing] or None
        position = closing + 1


def has_box(text: str) -> bool:
    return _BOX in text


def answer_prefix(words: str) -> re.Pattern[str]:
    """The case-insensitive ``the final answer is`` prefix pattern for the given noun alternation."""
    return re.compile(rf"^\s*(?:the\s+)?(?:final\s+)?(?:{words})\s*(?:is|=|:)\s*", re.IGNORECASE)


def screen_unboxed(text: str, *, cap: int, prefix: re.Pattern[str]) -> str | None:
    """Unboxed candidate: strip, reject empty / newline / ``<`` ``>`` / over ``cap``, drop one prefix."""
    candidate = text.strip()
    if not candidate or len(candidate) > cap:
        return None
    if "\n" in candidate or "\r" in candidate or "<" in candidate or ">" in candidate:
        return None
    candidate = prefix.sub("", candidate, count=1).strip()
    return candidate or None


def fence_opener(tag: str) -> re.Pattern[str]:
    """The opening of a whole-response code fence with an optional ``tag`` (any case)."""
    return re.compile("```(?:" + re.escape(tag) + ")?", re.IGNORECASE)


def fence_body(text: str, opener: re.Pattern[str]) -> str | None:
    r"""The body of a whole-text code fence, in linear time, or None if ``text`` is not fenced.

    Exactly the capture of ``re.fullmatch(r"```(?:TAG)?\s*(.*?)\s*```", text, IGNORECASE |
    DOTALL)`` (the contract's pattern; ``docs/code-fences.md``), whose backtracking is
    super-linear on a long unclosed fence. Why the two agree: the fence must open and close the
    text; the tag is taken whenever the closing fence still fits after it (only then can the
    pattern's first choice fail); and with the leading ``\s*`` greedy and the capture lazy, the
    capture is what lies between, less surrounding whitespace (``\s`` is ``str.isspace``).
    """
    size = len(text)
    if size < 6 or not text.startswith("```") or not text.endswith("```"):
        return None
    opened = opener.match(text)
    start = opened.end() if opened is not None and opened.end() <= size - 3 else 3
    return text[start : size - 3].strip()


__all__ = ["answer_prefix", "fence_body", "fence_opener", "has_box", "last_boxed", "screen_unboxed"]
