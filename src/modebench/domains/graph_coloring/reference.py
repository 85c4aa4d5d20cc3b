"""Graph-coloring reference validation into an immutable ``GraphRef``.

The parsed reference is cached and shared between gradings, so it holds only tuples and
precomputes everything grading needs (hidden positions, fixed colours, 0-based edges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modebench.domains._protocol import MISSING, InvalidReference, field_hint, several

#: The colour set is fixed by the benchmark, not configurable.
COLORS = (1, 2, 3)


@dataclass(frozen=True)
class GraphRef:
    """A validated graph task.

    ``partial`` is None when the reference has no fixed colours (absent or null), else a tuple of
    length ``n`` holding 0 for a hidden vertex and the fixed colour 1..3 otherwise.
    """

    n: int
    #: Distinct undirected edges as 0-based ``(u, v)`` with ``u < v`` (duplicates and orientation
    #: never change a verdict, so they are folded away once here).
    edges: tuple[tuple[int, int], ...]
    partial: tuple[int, ...] | None
    #: 0-based hidden positions, ascending (empty when ``partial`` is None).
    hidden: tuple[int, ...]
    #: ``partial`` as digit strings ("0" at hidden positions), the template a fill is written into.
    template: tuple[str, ...]


def _is_int(value: Any) -> bool:
    # JSON booleans decode to bool, a subclass of int; the contract rejects them everywhere.
    return isinstance(value, int) and not isinstance(value, bool)


def validate_reference(level: int, answer: dict[str, Any]) -> GraphRef:
    """Check the domain fields in the contract's order; raise ``InvalidReference`` on the first failure."""
    n = answer.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidReference(
            "answer.n must be a positive integer",
            field_hint("answer.n", answer.get("n", MISSING), "the number of vertices (an integer ≥ 1)"),
        )
    edges = answer.get("edges")
    if not isinstance(edges, list):
        raise InvalidReference(
            "answer.edges must be a list of vertex pairs",
            field_hint(
                "answer.edges",
                answer.get("edges", MISSING),
                "a list of pairs such as [[1, 2], [2, 3]] (may be empty)",
            ),
        )
    folded: set[tuple[int, int]] = set()
    for index, edge in enumerate(edges):
        where = f"answer.edges[{index}]"
        if not isinstance(edge, list) or len(edge) != 2:
            raise InvalidReference(
                "each graph edge must be a pair", field_hint(where, edge, "a pair [u, v] such as [1, 2]")
            )
        u, v = edge
        if not (_is_int(u) and _is_int(v) and 1 <= u <= n and 1 <= v <= n):
            raise InvalidReference(
                "graph edge endpoints must be integers in 1..n",
                field_hint(where, edge, f"two integers from 1 to n = {n}"),
            )
        if u == v:
            raise InvalidReference(
                "graph edges must not be self-loops", field_hint(where, edge, "two different vertices")
            )
        folded.add((min(u, v) - 1, max(u, v) - 1))
    raw = answer.get("partial_colors")
    partial: tuple[int, ...] | None = None
    if raw is not None:
        if not isinstance(raw, list) or len(raw) != n:
            raise InvalidReference(
                "answer.partial_colors must have n entries",
                field_hint(
                    "answer.partial_colors",
                    several(len(raw), "entry", "entries") if isinstance(raw, list) else raw,
                    f"null, or a list of n = {n} entries (each null or 1, 2, 3)",
                ),
            )
        for index, entry in enumerate(raw):
            if entry is not None and not (_is_int(entry) and entry in COLORS):
                raise InvalidReference(
                    "partial colors must be null or integers 1, 2, 3",
                    field_hint(f"answer.partial_colors[{index}]", entry, "null, 1, 2 or 3"),
                )
        partial = tuple(0 if entry is None else entry for entry in raw)
    hidden = tuple(i for i, c in enumerate(partial) if c == 0) if partial is not None else ()
    template = tuple(str(c) for c in partial) if partial is not None else ()
    return GraphRef(n=n, edges=tuple(sorted(folded)), partial=partial, hidden=hidden, template=template)


__all__ = ["COLORS", "GraphRef", "validate_reference"]
