"""Exact mode enumeration: every ordering, tree shape and ``+ - * /`` assignment.

Built bottom-up over subsets of operand positions: the expressions over a subset are all
combinations of the expressions over an ordered split of it into two non-empty parts. Trees with
an exact-zero divisor anywhere are never formed. Keys come from the verifier's own
:func:`compose_key`, so a mode here is exactly a canonical key the grader would report.
"""

from __future__ import annotations

from fractions import Fraction

from modebench.domains.countdown.check import compose_key

#: value → {canonical key (without the ``countdown:`` prefix) → one fully parenthesised witness}
Table = dict[Fraction, dict[str, str]]


def _combine(left: Table, right: Table, into: Table) -> None:
    for a, left_trees in left.items():
        for b, right_trees in right.items():
            results = [(a + b, "add", "+"), (a - b, "sub", "-"), (a * b, "mul", "*")]
            if b != 0:
                results.append((a / b, "div", "/"))
            for value, name, symbol in results:
                slot = into.setdefault(value, {})
                for left_key, left_text in left_trees.items():
                    for right_key, right_text in right_trees.items():
                        key = compose_key(name, left_key, right_key)
                        if key not in slot:
                            slot[key] = f"({left_text}{symbol}{right_text})"


def expression_table(numbers: tuple[int, ...]) -> Table:
    """All values reachable with every operand used exactly once, with their modes and witnesses."""
    count = len(numbers)
    tables: dict[int, Table] = {1 << i: {Fraction(n): {str(n): str(n)}} for i, n in enumerate(numbers)}
    for mask in range(1, 1 << count):
        if mask in tables:
            continue
        into: Table = {}
        part = (mask - 1) & mask
        while part:  # every ordered split (part, rest) with both sides non-empty
            _combine(tables[part], tables[mask ^ part], into)
            part = (part - 1) & mask
        tables[mask] = into
    return tables[(1 << count) - 1]


def modes(numbers: tuple[int, ...], target: int) -> dict[str, str]:
    """Canonical keys (with the ``countdown:`` prefix) of the target's modes → a witness each."""
    found = expression_table(numbers).get(Fraction(target), {})
    return {f"countdown:{key}": text for key, text in sorted(found.items())}


__all__ = ["expression_table", "modes"]
