"""Execution of a parsed program with SymPy and the canonical key; grade entry point.

Every execution failure is ``incorrect``. A program's outcome depends only on the reference and
the program value, so outcomes are memoised in ``ParsedRef.memo`` (bounded, :mod:`.program`);
the symbolic transitions themselves are memoised in :mod:`.algebra` across references.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sympy import Expr

from modebench.domains._protocol import Correct
from modebench.domains.mathir.algebra import X, apply, probe_isolates, unrepresentable_term
from modebench.domains.mathir.algebra import value as side_value
from modebench.domains.mathir.expr import EvalError
from modebench.domains.mathir.program import Fail as _Fail
from modebench.domains.mathir.program import grade as grade_program
from modebench.domains.mathir.program import outcome as program_outcome
from modebench.domains.mathir.reference import Command, ParsedRef, command, validate_reference
from modebench.domains.mathir.tabled import TableRef


def terminal_error(ref: ParsedRef, lhs: Expr, rhs: Expr) -> str | None:
    """The end-state checks (isolated ``x``, no ``x`` on the answer side, the right value): why it is not an accepted end state, or None."""
    if lhs == X:
        answer = rhs
    elif rhs == X:
        answer = lhs
    else:
        return "program does not finish with x isolated"
    if X in answer.free_symbols:
        return "final expression still contains x"
    try:
        found = side_value(answer, ref.bindings)  # type: ignore[arg-type]
    except EvalError as exc:
        return str(exc)
    return None if found == ref.target else "executed program has the wrong solution"


def trajectory(ref: ParsedRef, commands: Sequence[Command]) -> list[str]:
    """State key-strings after each step; raises _Fail on any illegal step or repeated state."""
    lhs, rhs = ref.lhs, ref.rhs
    visited = {ref.start_key}
    keys: list[str] = []
    for step in commands:
        if step.illegal is not None:
            raise _Fail(step.illegal)
        new_lhs = apply(lhs, step.op, step.arg_expr)
        new_rhs = apply(rhs, step.op, step.arg_expr)
        if new_lhs is None or new_rhs is None:
            side = lhs if new_lhs is None else rhs
            term = unrepresentable_term(side, step.op, step.arg_expr)
            raise _Fail(f"normalizer produced unsupported expression {term}")
        key = f"eq({new_lhs[1]},{new_rhs[1]})"
        if key in visited:
            raise _Fail("program revisits a previous equation state")
        visited.add(key)
        keys.append(key)
        lhs, rhs = new_lhs[0], new_rhs[0]
    reason = terminal_error(ref, lhs, rhs)
    if reason is not None:
        raise _Fail(reason)
    return keys


def outcome(
    ref: ParsedRef, program: tuple[Any, ...], commands: Callable[[], list[Command]]
) -> tuple[bool, str]:
    """(True, canonical key) or (False, reason), memoised per program value (:func:`.program.outcome`)."""
    return program_outcome(ref, program, commands, trajectory)


def grade(level: int, ref: ParsedRef, text: str) -> Correct:
    """Extraction → grammar (malformed) → execution (incorrect) → canonical key."""
    return grade_program(ref, text, trajectory, command)


def sympy_twin(ref: Any) -> Any:
    """The SymPy path's parsed reference for ``ref`` (itself if it is one), built once and kept on
    the table's reference. Callers outside the SymPy layer use the package's ``as_sympy``, which
    loads this layer off the item's deadline first."""
    if not isinstance(ref, TableRef):
        return ref
    if not ref.sympy:
        ref.sympy.append(validate_reference(ref.level, dict(ref.answer)))
    return ref.sympy[0]


def support(ref: Any) -> dict[str, tuple[str, ...]]:
    """Every admitted canonical key of a menu reference with one witness ID sequence.

    Depth-first over action IDs in menu order with a per-path visited set seeded with the
    initial state; failing transitions and repeated states are skipped; terminal states are
    recorded and the search always continues below them (paths may pass an isolated state).
    A last step can only be recorded if one side becomes exactly ``x``; :func:`probe_isolates`
    rules most of those out numerically before any ``cancel`` is paid for.
    """
    ref = sympy_twin(ref)  # a table-decided reference: its SymPy twin
    found: dict[str, tuple[str, ...]] = {}

    def walk(
        lhs: Expr, rhs: Expr, keys: tuple[str, ...], ids: tuple[str, ...], visited: frozenset[str]
    ) -> None:
        last = len(ids) + 1 == ref.max_steps
        for action_id, step in ref.actions.items():
            if step.illegal is not None:
                continue
            if last and not probe_isolates(lhs, rhs, step.op, step.arg_expr):
                continue
            new_lhs = apply(lhs, step.op, step.arg_expr)
            new_rhs = apply(rhs, step.op, step.arg_expr)
            if new_lhs is None or new_rhs is None:
                continue
            key = f"eq({new_lhs[1]},{new_rhs[1]})"
            if key in visited:
                continue
            path = (*keys, key)
            if terminal_error(ref, new_lhs[0], new_rhs[0]) is None:
                found.setdefault(ref.prefix + ">".join(path), (*ids, action_id))
            if not last:
                walk(new_lhs[0], new_rhs[0], path, (*ids, action_id), visited | {key})

    walk(ref.lhs, ref.rhs, (), (), frozenset((ref.start_key,)))
    return found
