"""0.4.0's private grading helpers that a real client imports (``modebench.grading._…``).

Re:Max's ``remax/legacy_modebench.py`` does ``from modebench.grading import
_canonical_countdown_expression_key, _extract_modebench_candidate,
_graph_coloring_from_candidate, _verify_graph_coloring_colors``. These four run in the calling
process over a raw reference mapping, as in 0.4.0: they never raise for a bad reference (they
give ``None`` / ``False``), and they are *display* helpers, not the grading contract — the
Countdown key here ignores the target, and a colouring is read without the reference being
validated. The graded path (``verifier.grade_response``) is unchanged by them.

They are built from the domain plug-ins' own surface rules (``_surface``, each domain's
candidate extraction, Countdown's operand key), so a change to a domain's grammar moves them too;
``ops/surface_vs_040.py`` compares them with 0.4.0 call by call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from modebench.domains._protocol import Malformed
from modebench.domains._surface import answer_prefix, has_box, last_boxed, screen_unboxed
from modebench.domains.countdown.check import operand_key
from modebench.domains.countdown.parse import normalise as countdown_normalise
from modebench.domains.countdown.parse import sides as countdown_sides
from modebench.domains.mathir.parse import candidate as mathir_candidate
from modebench.domains.pantry_plan.parse import candidate as pantry_candidate
from modebench.domains.python_factors.surface import extract_candidate as python_candidate
from modebench.domains.python_factors.surface import normalize_latex_lambda

_VERIFIERS = frozenset(
    {
        "countdown",
        "graph_coloring",
        "mathir_algebra",
        "mathir_action_menu",
        "pantry_plan",
        "python_factor_function",
    }
)
#: Countdown and graph colouring share the general unboxed screen of 0.4.0.
_GENERAL_CAP = 160
_GENERAL_PREFIX = answer_prefix("answer|expression|coloring|program")
#: Only the ASCII colour digits count in a colouring, whatever surrounds them (graph_coloring.md).
_NOT_A_COLOUR = re.compile(r"[^123]+")


def _legacy_spec(gt_answer: Any) -> dict[str, Any] | None:
    """A reference mapping (or its JSON object text) of a benchmark verifier, else None."""
    if isinstance(gt_answer, str):
        text = gt_answer.strip()
        if not (text.startswith("{") and text.endswith("}")):
            return None
        try:
            gt_answer = json.loads(text)
        except ValueError:
            return None
    if not isinstance(gt_answer, dict):
        return None
    return gt_answer if gt_answer.get("verifier") in _VERIFIERS else None


def _pantry_unboxed(text: str) -> str | None:
    return pantry_candidate(text) or None


#: 0.4.0's unboxed-candidate reader per verifier id (the domains' own readers); any other
#: verifier reads the general screened answer.
_UNBOXED: dict[str, Callable[[str], str | None]] = {
    "mathir_algebra": mathir_candidate,
    "mathir_action_menu": mathir_candidate,
    "python_factor_function": python_candidate,
    "pantry_plan": _pantry_unboxed,
}


def _unboxed(verifier: str, text: str) -> str | None:
    reader = _UNBOXED.get(verifier)
    try:
        if reader is not None:
            return reader(text)
    except Malformed:
        return None
    return screen_unboxed(text, cap=_GENERAL_CAP, prefix=_GENERAL_PREFIX)


def _extract_modebench_candidate(model_response: str, gt_answer: Any) -> str | None:
    """The candidate a response offers for a benchmark reference (boxed or bare), else None."""
    spec = _legacy_spec(gt_answer)
    if spec is None:
        return None
    text = str(model_response)
    verifier = str(spec["verifier"])
    if not has_box(text):
        return _unboxed(verifier, text)
    found = last_boxed(text)  # 0.4.0's ``extract_answer``: the last box, by brace count
    if found is not None and verifier == "python_factor_function":
        found = normalize_latex_lambda(found)
    return found or None


def _canonical_countdown_expression_key(candidate: str, spec: dict[str, Any]) -> str | None:
    """The operand key of the first ``=``-side that uses exactly the reference's numbers, whatever
    its value (0.4.0's display key: it does not check the target), else None."""
    try:
        numbers = tuple(int(value) for value in spec["numbers"])
    except Exception:  # any unreadable reference gives no key, as in 0.4.0
        return None
    text = countdown_normalise(str(candidate))
    if not text:
        return None
    return operand_key(numbers, countdown_sides(text) or [text])


def _colour_digits(candidate: Any) -> list[int]:
    return [int(digit) for digit in _NOT_A_COLOUR.sub("", str(candidate))]


def _graph_coloring_from_candidate(candidate: str, spec: dict[str, Any]) -> list[int] | None:
    """The colouring of vertices 1..n a candidate states: n colour digits, or one digit per
    hidden vertex of a partial colouring (filled in); None when neither form fits."""
    try:
        n = int(spec["n"])
    except Exception:  # an unreadable reference reads no colouring
        return None
    digits = _colour_digits(candidate)
    if len(digits) == n:
        return digits
    shown = spec.get("partial_colors")
    if shown is None:
        return None
    try:
        colours = [0 if colour is None else int(colour) for colour in shown]
        hidden = [index for index, colour in enumerate(shown) if colour is None]
    except Exception:  # a partial colouring that is not one reads nothing
        return None
    if len(hidden) != len(digits):
        return None
    for index, digit in zip(hidden, digits):
        colours[index] = digit
    return colours if len(colours) == n else None


def _edges(edges: Any, n: int) -> Iterator[tuple[int, int] | None]:
    """Each edge as 0-based vertex indices, or None for an edge that names no two vertices."""
    for edge in edges:
        try:
            u, v = int(edge[0]), int(edge[1])
        except Exception:
            yield None
            return
        yield (u - 1, v - 1) if 1 <= u <= n and 1 <= v <= n else None


def _verify_graph_coloring_colors(colors: list[int] | None, spec: dict[str, Any]) -> bool:
    """Whether a parsed colouring keeps every shown colour and leaves no edge monochrome."""
    try:
        n = int(spec["n"])
        edges = spec["edges"]
    except Exception:  # an unreadable reference verifies nothing
        return False
    if colors is None or len(colors) != n:
        return False
    shown = spec.get("partial_colors")
    if shown is not None:
        try:
            if len(shown) != n:
                return False
            if any(colour is not None and colors[i] != int(colour) for i, colour in enumerate(shown)):
                return False
        except Exception:
            return False
    for pair in _edges(edges, n):
        if pair is None or colors[pair[0]] == colors[pair[1]]:
            return False
    return True


__all__ = [
    "_canonical_countdown_expression_key",
    "_extract_modebench_candidate",
    "_graph_coloring_from_candidate",
    "_verify_graph_coloring_colors",
]
