"""0.4.0's private grading helpers that Re:Max's ``remax/legacy_modebench.py`` imports.

Its import line, verbatim in substance: ``from modebench.grading import
_canonical_countdown_expression_key, _extract_modebench_candidate, _graph_coloring_from_candidate,
_verify_graph_coloring_colors``. ``ops/surface_vs_040.py`` compares them with 0.4.0 call by call
(thousands of inputs); these tests pin the behaviour a reader should know.
"""

from __future__ import annotations

from modebench.grading import (
    _canonical_countdown_expression_key,
    _extract_modebench_candidate,
    _graph_coloring_from_candidate,
    _verify_graph_coloring_colors,
)

COUNTDOWN = {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}
GRAPH = {"verifier": "graph_coloring", "n": 3, "edges": [[1, 2], [2, 3]], "partial_colors": [1, None, None]}


def test_the_countdown_display_key_ignores_the_target() -> None:
    assert _canonical_countdown_expression_key("3+6+9", COUNTDOWN) == "countdown:add(9,add(3,6))"
    # a wrong value still keys (a display helper, not the grading contract) ...
    assert _canonical_countdown_expression_key("3*6-9", COUNTDOWN) is not None
    # ... but not other numbers, and a bad reference gives no key instead of raising
    assert _canonical_countdown_expression_key("3+6", COUNTDOWN) is None
    assert _canonical_countdown_expression_key("3+6+9", {"numbers": None}) is None
    assert _canonical_countdown_expression_key("18 = 3+6+9", COUNTDOWN) == "countdown:add(9,add(3,6))"


def test_the_candidate_of_a_response() -> None:
    assert _extract_modebench_candidate("so \\boxed{3+6+9}", COUNTDOWN) == "3+6+9"
    assert _extract_modebench_candidate("The answer is 3+6+9", COUNTDOWN) == "3+6+9"
    assert _extract_modebench_candidate("3+6+9", {"verifier": "nope"}) is None
    assert _extract_modebench_candidate(
        "\\boxed{\\lambda n: 2}", '{"verifier": "python_factor_function"}'
    ) == ("lambda n: 2")


def test_a_colouring_full_or_filled_in_and_its_check() -> None:
    assert _graph_coloring_from_candidate("1 2 1", GRAPH) == [1, 2, 1]
    assert _graph_coloring_from_candidate("2, 1", GRAPH) == [1, 2, 1]  # the hidden vertices only
    assert _graph_coloring_from_candidate("12", {"n": "x"}) is None
    assert _verify_graph_coloring_colors([1, 2, 1], GRAPH) is True
    assert _verify_graph_coloring_colors([2, 1, 2], GRAPH) is False  # changes a shown colour
    assert _verify_graph_coloring_colors([1, 1, 2], GRAPH) is False  # a monochrome edge
    assert _verify_graph_coloring_colors(None, GRAPH) is False
