"""Grading a response against a parsed reference, whatever computes the states (no SymPy here).

Extraction → program grammar (malformed) → execution (incorrect) → canonical key. The execution
itself is a ``trajectory`` function supplied by the caller: :mod:`.check` runs it with SymPy,
:mod:`.tabled` from the transition table alone. A program's outcome depends only on the reference
and the program value, so outcomes are memoised in the reference's ``memo`` (bounded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from modebench.bounded_cache import EXPANSION, OVERHEAD, REFERENCE_BUDGET
from modebench.domains._protocol import Correct, Incorrect, Malformed
from modebench.domains.mathir.expr import Tree
from modebench.domains.mathir.parse import ProgramError, candidate, parse_free_program, parse_menu_program
from modebench.domains.mathir.rules import MEMO_LIMIT


class Fail(Exception):
    """Execution failed: the response is incorrect, for the reason given."""


class Reference(Protocol):
    """What grading reads of a parsed reference (both paths' references have it)."""

    @property
    def menu(self) -> bool: ...
    @property
    def prefix(self) -> str: ...
    @property
    def bindings(self) -> Mapping[str, Fraction]: ...
    @property
    def symbols(self) -> frozenset[str]: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def actions(self) -> Mapping[str, Any]: ...
    @property
    def action_ids(self) -> frozenset[str]: ...
    @property
    def memo(self) -> dict[Any, tuple[bool, str]]: ...


#: Bytes counted over the memos of every reference this worker parsed (never decreased when a
#: reference is dropped: counting too much only stops memoising early, which costs time, never a
#: verdict). Bounded in bytes like the worker's other caches (``modebench.bounded_cache``).
MEMO_BUDGET = REFERENCE_BUDGET // 2
_memo_bytes = 0


def outcome(
    ref: Reference,
    program: tuple[Any, ...],
    commands: Callable[[], list[Any]],
    trajectory: Callable[[Any, Sequence[Any]], list[str]],
) -> tuple[bool, str]:
    """(True, canonical key) or (False, reason), memoised per program value.

    ``commands`` builds the executable steps lazily, so a memo hit costs only the lookup.
    """
    hit = ref.memo.get(program)
    if hit is not None:
        return hit
    try:
        result = (True, ref.prefix + ">".join(trajectory(ref, commands())))
    except Fail as exc:
        result = (False, str(exc))
    global _memo_bytes
    if len(ref.memo) < MEMO_LIMIT and _memo_bytes < MEMO_BUDGET:
        ref.memo[program] = result
        _memo_bytes += OVERHEAD + EXPANSION * (len(program) + len(result[1]))
    return result


def grade(
    ref: Reference,
    text: str,
    trajectory: Callable[[Any, Sequence[Any]], list[str]],
    command: Callable[[str, Tree, Mapping[str, Fraction]], Any],
) -> Correct:
    """Extraction → grammar (malformed) → execution (incorrect) → canonical key.

    ``command`` makes a free program's step (the menu's steps were made with the reference).
    """
    found = candidate(text)
    if found is None:
        raise Malformed("invalid response surface")
    try:
        if ref.menu:
            ids = parse_menu_program(found, ref.action_ids, ref.max_steps)
            ok, detail = outcome(ref, ids, lambda: [ref.actions[i] for i in ids], trajectory)
        else:
            steps = parse_free_program(found, ref.symbols, ref.max_steps)
            ok, detail = outcome(
                ref, steps, lambda: [command(op, arg, ref.bindings) for op, arg in steps], trajectory
            )
    except ProgramError as exc:
        raise Malformed(str(exc)) from None
    if not ok:
        raise Incorrect(detail)
    return Correct(detail)


__all__ = ["MEMO_BUDGET", "Fail", "Reference", "grade", "outcome"]
