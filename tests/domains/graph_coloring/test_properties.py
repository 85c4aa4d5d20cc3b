"""Hypothesis properties of the graph-coloring verifier (spec sections 4-6 and 10)."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modebench.domains._pipeline import grade_in_process

STATUSES = {
    "correct",
    "incorrect",
    "malformed",
    "invalid_reference",
    "resource_limit",
    "worker_failure",
    "timeout",
}
# Characters that are pure noise inside a box: no colour digit, no brace, no backslash.
NOISE = st.text(
    alphabet=st.characters(blacklist_characters="123{}\\", blacklist_categories=("Cs",)), max_size=4
)


@st.composite
def graphs(draw: st.DrawFn, with_partial: bool | None = None) -> dict[str, Any]:
    n = draw(st.integers(1, 6))
    pairs = [[u, v] for u in range(1, n + 1) for v in range(1, n + 1) if u != v]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=8)) if pairs else []
    answer: dict[str, Any] = {"verifier": "graph_coloring", "n": n, "edges": edges}
    if with_partial is None:
        with_partial = draw(st.booleans())
    if with_partial:
        answer["partial_colors"] = draw(st.lists(st.sampled_from([None, 1, 2, 3]), min_size=n, max_size=n))
    return answer


def _proper(answer: dict[str, Any], coloring: str) -> bool:
    """Independent restatement of spec section 5."""
    partial = answer.get("partial_colors") or [None] * answer["n"]
    if any(p is not None and str(p) != c for p, c in zip(partial, coloring)):
        return False
    return all(coloring[u - 1] != coloring[v - 1] for u, v in answer["edges"])


def _grade(answer: dict[str, Any], text: str) -> dict[str, Any]:
    return grade_in_process(1, "graph_coloring", {"answer": answer}, text)


@given(graphs(), st.text(max_size=300))
@settings(max_examples=300)
def test_arbitrary_text_is_structured(answer: dict[str, Any], text: str) -> None:
    got = _grade(answer, text)
    assert got["status"] in {"correct", "incorrect", "malformed"}
    assert got["graded_text"] == text
    assert got["verified"] is (got["status"] == "correct")
    if got["verified"]:
        coloring = got["canonical_key"].removeprefix("graph_coloring:")
        assert len(coloring) == answer["n"] and set(coloring) <= set("123")
        assert _proper(answer, coloring)
    else:
        assert got["canonical_key"] is None


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(
    st.fixed_dictionaries(
        {"verifier": st.just("graph_coloring")},
        optional={"n": json_values, "edges": json_values, "partial_colors": json_values},
    ),
    st.text(max_size=40),
)
@settings(max_examples=300)
def test_arbitrary_reference_is_structured(answer: dict[str, Any], text: str) -> None:
    got = _grade(answer, text)
    assert got["status"] in {"correct", "incorrect", "malformed", "invalid_reference"}
    assert got["graded_text"] == text
    if got["status"] == "invalid_reference":
        assert got["detail"].startswith("invalid graph_coloring reference: ")


@given(graphs(), st.data())
@settings(max_examples=200)
def test_any_coloring_judged_exactly_by_constraints(answer: dict[str, Any], data: st.DataObject) -> None:
    n = answer["n"]
    coloring = data.draw(st.text(alphabet="123", min_size=n, max_size=n))
    seps = data.draw(st.lists(NOISE, min_size=n + 1, max_size=n + 1))
    noisy = "".join(s + c for s, c in zip(seps, coloring)) + seps[-1]
    got = _grade(answer, "\\boxed{" + noisy + "}")
    if _proper(answer, coloring):
        assert got["status"] == "correct" and got["canonical_key"] == f"graph_coloring:{coloring}"
    else:
        assert got["status"] == "incorrect"


@given(graphs(with_partial=True), st.sampled_from(["{}", "\\boxed{{{}}}", "The coloring is {}", "{}\n"]))
@settings(max_examples=150)
def test_accepted_keys_are_exactly_the_completions(answer: dict[str, Any], surface: str) -> None:
    """Over every fill and every full string, the accepted keys are the brute-force completions."""
    n, partial = answer["n"], answer["partial_colors"]
    hidden = [i for i, p in enumerate(partial) if p is None]
    completions = {"".join(c) for c in itertools.product("123", repeat=n) if _proper(answer, "".join(c))}
    accepted_full = set()
    for full in itertools.product("123", repeat=n):
        got = _grade(answer, surface.format("".join(full)))
        if got["verified"]:
            accepted_full.add(got["canonical_key"].removeprefix("graph_coloring:"))
    assert accepted_full == completions
    if len(hidden) in (0, n):
        return  # fill form coincides with the full form, or is empty (prose cases in test_vectors)
    accepted_fill = set()
    for fill in itertools.product("123", repeat=len(hidden)):
        got = _grade(answer, surface.format(" ".join(fill)))
        if got["verified"]:
            accepted_fill.add(got["canonical_key"].removeprefix("graph_coloring:"))
        else:
            assert got["status"] == "incorrect"  # a fill never changes a shown digit, only edges fail
    assert accepted_fill == completions


@given(graphs(), st.integers(0, 8))
def test_wrong_digit_count_is_malformed(answer: dict[str, Any], count: int) -> None:
    n = answer["n"]
    partial = answer.get("partial_colors")
    allowed = {n} | ({sum(p is None for p in partial)} if partial is not None else set())
    got = _grade(answer, "4" + "1" * count + "0")
    if count in allowed:
        assert got["status"] in {"correct", "incorrect"}
    else:
        assert got["status"] == "malformed" and got["detail"] == "invalid coloring surface"


@given(graphs(), st.permutations([1, 2, 3]))
def test_color_permutations_are_distinct_modes(answer: dict[str, Any], perm: list[int]) -> None:
    """Renaming colours of a proper colouring (no fixed colours) is proper but keeps no key."""
    answer = {k: v for k, v in answer.items() if k != "partial_colors"}
    n = answer["n"]
    for raw in itertools.product("123", repeat=n):
        coloring = "".join(raw)
        if _proper(answer, coloring):
            renamed = "".join(str(perm[int(c) - 1]) for c in coloring)
            first, second = _grade(answer, coloring), _grade(answer, renamed)
            assert first["verified"] and second["verified"]
            assert (first["canonical_key"] == second["canonical_key"]) is (coloring == renamed)
            return
