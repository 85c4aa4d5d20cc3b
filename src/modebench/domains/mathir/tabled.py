"""MathIR from the transition table alone: reference checks and grading without SymPy.

The SymPy path (:mod:`.reference`, :mod:`.check`) keeps each state as a SymPy object, but every
decision it takes reads only the state's printed key: a transition is looked up by
``(printed side, operator, printed argument)`` (:mod:`.table`), and a printed key determines the
side (spec §3.4 d, checked for every table entry when it is built). So wherever the table holds
everything a reference needs, the same decisions can be taken on the printed keys themselves:

* the initial sides: the table's printed ``cancel`` of the family's side trees;
* the target (§3.5): the exact-arithmetic shortcut of :func:`.algebra.target`, evaluated on the
  printed tree; it decides only where that shortcut provably agrees with SymPy whatever order
  SymPy keeps a product's factors in (at most one factor holds x), and a slope of zero is the
  same "not linear" failure;
* each menu action's argument: the table's printed form of the argument's SymPy tree;
* every transition and unrepresentable term a program can meet: a menu reference is taken here
  only if *every* state reachable within ``max_steps`` legal actions has all its transitions in
  the table (checked once per family shape and legal menu, then memoised), so no program
  graded against it can need SymPy;
* the end-state checks (§3.4 f–h) on the printed tree: ``x`` alone, no ``x`` on the other side,
  the exact value under the bindings.

Anything else — a free-program (``mathir_algebra``) reference, a side or argument outside the
table, a product with two factors in x, a zero in a reciprocal, a table built under another
SymPy — is not decided here: :func:`validate` answers None and the caller runs the SymPy path,
which is exactly the code every reference took before. ``ops/fidelity/differential_mathir_table.py``
compares both paths on every kind of reference and program.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from modebench.domains._protocol import Correct
from modebench.domains.mathir import table
from modebench.domains.mathir.expr import EvalError, Tree, legality_error
from modebench.domains.mathir.program import Fail
from modebench.domains.mathir.program import grade as grade_program
from modebench.domains.mathir.rules import no_target, parse_actions, read_header

#: A printed side as a tree: ("s", name) | ("n", value) | ("add", parts) | ("mul", parts) | ("inv", base).
Node = tuple[Any, ...]
Linear = tuple[Fraction, Fraction]  # (slope, offset): slope·x + offset


class Undecided(Exception):
    """The table does not decide this: take the SymPy path."""


class NoSlope(Exception):
    """The x coefficient is zero under the bindings: SymPy's "equation is not linear in x"."""


@dataclass(frozen=True)
class TableCommand:
    """One menu action: operator, raw argument, the printed form of its SymPy tree, legality."""

    op: str
    arg: Tree
    arg_text: str | None  # None: not in the table (a program using it would need SymPy)
    illegal: str | None


@dataclass(frozen=True)
class TableRef:
    """A menu reference the table decides completely: same attributes as ``ParsedRef`` except
    that the sides are printed keys, plus what the SymPy path needs to rebuild it on request."""

    menu: bool
    prefix: str
    bindings: Mapping[str, Fraction]
    symbols: frozenset[str]
    max_steps: int
    lhs: str
    rhs: str
    start_key: str
    target: Fraction
    actions: Mapping[str, TableCommand]
    action_ids: frozenset[str]
    level: int
    answer: Mapping[str, Any] = field(compare=False, hash=False, repr=False)
    memo: dict[Any, tuple[bool, str]] = field(default_factory=dict, compare=False, hash=False, repr=False)
    #: The SymPy path's ParsedRef of the same answer, once asked for (:func:`as_sympy`).
    sympy: list[Any] = field(default_factory=list, compare=False, hash=False, repr=False)


# -- printed trees -----------------------------------------------------------------------------
@lru_cache(maxsize=32768)
def node(printed: str) -> Node:
    """The tree a printed key writes down (:func:`.algebra.show`'s output read back)."""
    tokens = table.tokens(printed)
    position = 0

    def parse() -> Node:
        nonlocal position
        token = tokens[position]
        position += 1
        if position < len(tokens) and tokens[position] == "(":
            position += 1
            parts = [parse()]
            while tokens[position] == ",":
                position += 1
                parts.append(parse())
            position += 1  # ")"
            if token in ("add", "mul"):
                return (token, tuple(parts))
            if token == "inv" and len(parts) == 1:
                return ("inv", parts[0])
            if token == "rat" and len(parts) == 2 and parts[0][0] == parts[1][0] == "n":
                return ("n", parts[0][1] / parts[1][1])
            raise ValueError(f"unknown node {token!r}")
        if token.lstrip("-").isdigit():
            return ("n", Fraction(int(token)))
        return ("s", token)

    tree = parse()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in {printed!r}")
    return tree


def has_x(printed: str) -> bool:
    """Whether ``x`` is a free symbol of the side (every symbol of a side is printed)."""
    return "x" in table.tokens(printed)


def value(tree: Node, bindings: Mapping[str, Fraction]) -> Fraction:
    """Exact value of a printed side, as :func:`.algebra.value` computes it for the SymPy side."""
    kind = tree[0]
    if kind == "s":
        try:
            return bindings[tree[1]]
        except KeyError:
            raise EvalError(f"symbol {tree[1]!r} has no value") from None
    if kind == "n":
        return Fraction(tree[1])
    if kind == "add":
        total = Fraction(0)
        for part in tree[1]:
            total += value(part, bindings)
        return total
    if kind == "mul":
        product = Fraction(1)
        for part in tree[1]:
            product *= value(part, bindings)
        return product
    base = value(tree[1], bindings)
    if base == 0:
        raise EvalError("division by zero")
    return 1 / base


def linear(tree: Node, bindings: Mapping[str, Fraction]) -> Linear:
    """The side under the bindings as slope·x + offset, or Undecided.

    :func:`.algebra._linear` on the SymPy side, restricted to where its answer cannot depend on
    the order of a product's factors: it walks them in SymPy's order and gives up at the second
    factor with a nonzero slope *so far*, which a zero factor in between can reset; with at most
    one factor in x (counted here after flattening) it never gives up and the product is exact.
    Everything it gives up on (a reciprocal of x or of zero, a second factor in x) is Undecided.
    """
    kind = tree[0]
    if kind == "s":
        name = tree[1]
        if name == "x":
            return Fraction(1), Fraction(0)
        if name not in bindings:
            raise Undecided
        return Fraction(0), bindings[name]
    if kind == "n":
        return Fraction(0), Fraction(tree[1])
    if kind == "add":
        slope, offset = Fraction(0), Fraction(0)
        for part in tree[1]:
            s, o = linear(part, bindings)
            slope += s
            offset += o
        return slope, offset
    if kind == "mul":
        factors = [linear(part, bindings) for part in tree[1]]
        if sum(1 for s, _ in factors if s) > 1:
            raise Undecided
        slope, offset = Fraction(0), Fraction(1)
        for s, o in factors:
            slope, offset = slope * o + s * offset, offset * o
        return slope, offset
    s, o = linear(tree[1], bindings)
    if s or o == 0:
        raise Undecided
    return Fraction(0), 1 / o


def target(lhs: str, rhs: str, bindings: Mapping[str, Fraction]) -> Fraction:
    """The solution; NoSlope for a zero x coefficient; Undecided where SymPy has to decide."""
    left, right = linear(node(lhs), bindings), linear(node(rhs), bindings)
    slope, offset = left[0] - right[0], left[1] - right[1]
    if slope == 0:  # SymPy: a numerator of degree 0 (or the zero polynomial, degree -oo)
        raise NoSlope("equation is not linear in x")
    return -offset / slope


# -- references --------------------------------------------------------------------------------
def command(op: str, arg: Tree, bindings: Mapping[str, Fraction]) -> TableCommand:
    printed = table.lookup_argument(table.tree_text(arg))
    return TableCommand(
        op, arg, printed if isinstance(printed, str) else None, legality_error(op, arg, dict(bindings))
    )


@lru_cache(maxsize=4096)
def covered(lhs: str, rhs: str, steps: frozenset[tuple[str, str]], max_steps: int) -> bool:
    """Whether every transition a program of up to ``max_steps`` of these (legal) steps can meet
    from ``(lhs, rhs)`` is in the table, with the unrepresentable term wherever one is named.

    Breadth first over states, ignoring the repeated-state rule (a program's states are a subset
    of what this reaches); a state's transitions do not depend on how it was reached.
    """
    frontier = {(lhs, rhs)}
    seen = set(frontier)
    for depth in range(max_steps):
        reached: set[tuple[str, str]] = set()
        for left, right in frontier:
            for op, arg in steps:
                new_left = table.lookup_transition(left, op, arg)
                new_right = table.lookup_transition(right, op, arg)
                if new_left is table.MISS or new_right is table.MISS:
                    return False
                if new_left is None or new_right is None:
                    side = left if new_left is None else right
                    if table.lookup_term(side, op, arg) is None:
                        return False
                    continue
                state = (new_left, new_right)
                if depth + 1 < max_steps and state not in seen:
                    seen.add(state)
                    reached.add(state)
        frontier = reached
    return True


def validate(level: int, answer: dict[str, Any]) -> TableRef | None:
    """The reference from the table alone, None where the table does not decide it.

    Raises exactly the SymPy path's InvalidReference for what it decides: every check before
    normalisation and the menu's parsing are the shared :mod:`.rules`, and the one failure
    after them decided here is a zero x coefficient under the bindings.
    """
    header = read_header(answer)
    if not header.menu:
        return None  # free programs: any argument a model writes can need SymPy
    lhs = table.lookup_side(table.tree_text(header.lhs))
    rhs = table.lookup_side(table.tree_text(header.rhs))
    if not (isinstance(lhs, str) and isinstance(rhs, str)):
        return None
    try:
        solution = target(lhs, rhs, header.bindings)
    except Undecided:
        return None
    except NoSlope as exc:
        no_target(answer, str(exc))
    actions = parse_actions(answer.get("actions"), header.symbols, header.bindings, command)
    steps = set()
    for step in actions.values():
        if step.illegal is None:
            if step.arg_text is None:
                return None
            steps.add((step.op, step.arg_text))
    if not covered(lhs, rhs, frozenset(steps), header.max_steps):
        return None
    return TableRef(
        menu=True,
        prefix=f"mathir:{header.version}:",
        bindings=MappingProxyType(header.bindings),
        symbols=header.symbols,
        max_steps=header.max_steps,
        lhs=lhs,
        rhs=rhs,
        start_key=f"eq({lhs},{rhs})",
        target=solution,
        actions=MappingProxyType(actions),
        action_ids=frozenset(actions),
        level=level,
        answer=answer,
    )


# -- grading -----------------------------------------------------------------------------------
def terminal_error(ref: TableRef, lhs: str, rhs: str) -> str | None:
    """:func:`.check.terminal_error` on printed sides."""
    if lhs == "x":
        answer = rhs
    elif rhs == "x":
        answer = lhs
    else:
        return "program does not finish with x isolated"
    if has_x(answer):
        return "final expression still contains x"
    try:
        found = value(node(answer), ref.bindings)
    except EvalError as exc:
        return str(exc)
    return None if found == ref.target else "executed program has the wrong solution"


def trajectory(ref: TableRef, commands: Sequence[TableCommand]) -> list[str]:
    """:func:`.check.trajectory` on printed sides; Undecided if a step is not in the table."""
    lhs, rhs = ref.lhs, ref.rhs
    visited = {ref.start_key}
    keys: list[str] = []
    for step in commands:
        if step.illegal is not None:
            raise Fail(step.illegal)
        if step.arg_text is None:
            raise Undecided
        new_lhs = table.lookup_transition(lhs, step.op, step.arg_text)
        new_rhs = table.lookup_transition(rhs, step.op, step.arg_text)
        if new_lhs is table.MISS or new_rhs is table.MISS:
            raise Undecided
        if new_lhs is None or new_rhs is None:
            side = lhs if new_lhs is None else rhs
            term = table.lookup_term(side, step.op, step.arg_text)
            if term is None:
                raise Undecided
            raise Fail(f"normalizer produced unsupported expression {term}")
        key = f"eq({new_lhs},{new_rhs})"
        if key in visited:
            raise Fail("program revisits a previous equation state")
        visited.add(key)
        keys.append(key)
        lhs, rhs = new_lhs, new_rhs
    reason = terminal_error(ref, lhs, rhs)
    if reason is not None:
        raise Fail(reason)
    return keys


def _no_free_program(op: str, arg: Tree, bindings: Mapping[str, Fraction]) -> TableCommand:
    raise AssertionError("a table-decided reference is a menu")  # pragma: no cover - menus only


def grade(ref: TableRef, text: str) -> Correct:
    """Grade on the table; Undecided (never expected: :func:`covered`) if a step is missing."""
    return grade_program(ref, text, trajectory, _no_free_program)


__all__ = [
    "NoSlope",
    "TableCommand",
    "TableRef",
    "Undecided",
    "command",
    "covered",
    "grade",
    "linear",
    "node",
    "target",
    "terminal_error",
    "trajectory",
    "validate",
    "value",
]
