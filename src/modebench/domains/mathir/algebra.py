"""Symbolic side of MathIR: SymPy conversion, ``cancel`` normalisation, the key printer, target.

The state is kept as SymPy expressions: converting a ``cancel`` result to the reference's
normalised tree and rebuilding it gives back the identical SymPy object, so only
the *representability* check of the tree conversion is needed, and the printer doubles as that
check. All caches here are keyed by immutable values (raw trees, SymPy expressions), so they are
shared between every reference of a family (keys are symbolic; bindings never enter the state).
Cache sizes are bounded so a long-lived worker stays far below its 1 GiB address-space cap.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy
from sympy import Add, Expr, Integer, Mul, Poly, Pow, Rational, Symbol, cancel, expand, together
from sympy.polys.polyerrors import CoercionFailed, PolynomialError

from modebench.domains.mathir import table, tabled
from modebench.domains.mathir.expr import EvalError, Tree

X = Symbol("x")


class Unsupported(Exception):
    """A normalised side is not representable (a power other than -1, ``zoo``, …)."""


class NoTarget(Exception):
    """The initial equation has no unique rational solution under the bindings."""


@lru_cache(maxsize=8192)
def to_sympy(tree: Tree) -> Expr:
    """Raw tree → SymPy with the plain operators (true division; SymPy auto-evaluation applies)."""
    if isinstance(tree, str):
        return Symbol(tree)
    op = tree[0]
    if op == "neg":
        return -to_sympy(tree[1])
    left = to_sympy(tree[1])
    right = to_sympy(tree[2])
    if op == "add":
        return left + right
    if op == "sub":
        return left - right
    if op == "mul":
        return left * right
    return left / right


def _gather(expr: Expr, kind: type, out: list[str]) -> None:
    # Same-kind children are spliced in (flattening), everything else printed.
    for arg in expr.args:
        if isinstance(arg, kind):
            _gather(arg, kind, out)
        else:
            out.append(show(arg))


@lru_cache(maxsize=32768)
def show(expr: Expr) -> str:
    """The canonical printer (flattened, text-sorted ``add``/``mul``, ``inv``, ``rat``); raises Unsupported for anything outside the tree kinds."""
    if expr.is_Symbol:
        return str(expr.name)
    if expr.is_Integer:
        return str(int(expr))
    if expr.is_Rational:
        return f"rat({expr.p},{expr.q})"
    if expr.is_Add or expr.is_Mul:
        kind = sympy.Add if expr.is_Add else sympy.Mul
        parts: list[str] = []
        _gather(expr, kind, parts)
        parts.sort()
        return ("add(" if expr.is_Add else "mul(") + ",".join(parts) + ")"
    if expr.is_Pow and expr.exp == -1:
        return "inv(" + show(expr.base) + ")"
    raise Unsupported(expr)


def normalise(expr: Expr) -> tuple[Expr, str] | None:
    """``cancel`` one side and print it; None when the result is not representable."""
    result = cancel(expr)
    try:
        return result, show(result)
    except Unsupported:
        return None


def _combine(side: Expr, op: str, arg: Expr) -> Expr:
    if op == "add":
        return side + arg
    if op == "sub":
        return side - arg
    if op == "mul":
        return side * arg
    return side / arg


@lru_cache(maxsize=32768)
def rebuild(printed: str) -> Expr:
    """The SymPy object a printed key stands for, built with SymPy's evaluating constructors from
    the tree :func:`.tabled.node` reads (one reader of the printed form for both paths)."""
    return _sympy_of(tabled.node(printed))


def _sympy_of(tree: tabled.Node) -> Expr:
    kind = tree[0]
    if kind == "n":
        value: Fraction = tree[1]
        return (
            Integer(value.numerator)
            if value.denominator == 1
            else Rational(value.numerator, value.denominator)
        )
    if kind == "s":
        return Symbol(tree[1])
    if kind == "inv":
        return Pow(_sympy_of(tree[1]), -1)
    parts = [_sympy_of(part) for part in tree[1]]
    return Add(*parts) if kind == "add" else Mul(*parts)


def _from_table(printed: str | None) -> tuple[Expr, str] | None:
    return None if printed is None else (rebuild(printed), printed)


@lru_cache(maxsize=4096)
def normalise_tree(tree: Tree) -> tuple[Expr, str] | None:
    """:func:`normalise` of a raw reference side, memoised by the tree (references of one family
    template share their sides: the tree holds symbol names, never binding values)."""
    printed = table.lookup_side(table.tree_text(tree))
    if printed is not table.MISS:
        return _from_table(printed)
    return compute_side(tree)


def compute_side(tree: Tree) -> tuple[Expr, str] | None:
    return normalise(to_sympy(tree))


@lru_cache(maxsize=32768)
def apply(side: Expr, op: str, arg: Expr) -> tuple[Expr, str] | None:
    """One side after ``cancel(side op arg)``, with its printed form; None if unrepresentable.

    Memoised in process; transitions of the released families come from the precomputed
    table (:mod:`.table`), which holds exactly what this computation returns.
    """
    try:
        printed = table.lookup_transition(show(side), op, show(arg))
    except Unsupported:
        printed = table.MISS
    if printed is not table.MISS:
        return _from_table(printed)
    return compute_transition(side, op, arg)


def compute_transition(side: Expr, op: str, arg: Expr) -> tuple[Expr, str] | None:
    return normalise(_combine(side, op, arg))


@lru_cache(maxsize=4096)
def unrepresentable_term(side: Expr, op: str, arg: Expr) -> str:
    """For a step ``apply`` rejects: the first term (in printing order) outside the tree kinds.

    The reference names that term in its diagnostic; the printer meets terms in the same order.
    A pure function of its (immutable) arguments, memoised like :func:`apply`; for a step the
    table holds as not representable, the table also holds this term (computed by this very
    code when the table was built: a printed side determines the side), so no ``cancel`` is paid.
    """
    try:
        known = table.lookup_term(show(side), op, show(arg))
    except Unsupported:
        known = None
    if known is not None:
        return known
    try:
        show(cancel(_combine(side, op, arg)))
    except Unsupported as exc:
        return repr(exc.args[0])
    raise ValueError("the step is representable")


def warm_up() -> None:
    """Load the transition table and run one ``cancel``: SymPy imports parts of itself on first
    use (the first ``Add`` alone pulls in its tensor module), which no deadline should pay for."""
    table.lookup_side("x")
    normalise(to_sympy(("div", ("add", "a", "x"), ("mul", "b", "a"))))


# A fixed generic point (distinct odd fractions) for the numeric isolation probe.
_PROBE = {name: Fraction(2 * i + 3, 7 + 2 * (i % 5)) for i, name in enumerate("abcdefghijklmnopqrstuvwxyz")}


@lru_cache(maxsize=16384)
def _probe(expr: Expr) -> Fraction | None:
    try:
        return value(expr, _PROBE)
    except EvalError:
        return None


def probe_isolates(lhs: Expr, rhs: Expr, op: str, arg: Expr) -> bool:
    """False only if neither ``cancel(lhs op arg)`` nor ``cancel(rhs op arg)`` can be ``x``.

    ``cancel`` preserves a rational function's value wherever it is defined, so a defined value
    at one point that differs from x's value there proves the side is not ``x``. Anything the
    probe cannot evaluate (other powers, a zero at the probe point) answers True (→ exact path).
    """
    a = _probe(arg)
    if a is None:
        return True
    target_x = _PROBE["x"]
    for side in (lhs, rhs):
        s = _probe(side)
        if s is None:
            return True
        if op == "add":
            combined = s + a
        elif op == "sub":
            combined = s - a
        elif op == "mul":
            combined = s * a
        elif a == 0:
            return True
        else:
            combined = s / a
        if combined == target_x:
            return True
    return False


def value(expr: Expr, bindings: dict[str, Fraction]) -> Fraction:
    """Exact value of a normalised side (x has no value; reciprocal of zero is an error)."""
    if expr.is_Symbol:
        try:
            return bindings[expr.name]
        except KeyError:
            raise EvalError(f"symbol {expr.name!r} has no value") from None
    if expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Add:
        total = Fraction(0)
        for arg in expr.args:
            total += value(arg, bindings)
        return total
    if expr.is_Mul:
        product = Fraction(1)
        for arg in expr.args:
            product *= value(arg, bindings)
        return product
    if expr.is_Pow and expr.exp == -1:
        base = value(expr.base, bindings)
        if base == 0:
            raise EvalError("division by zero")
        return 1 / base
    raise EvalError(f"cannot evaluate {expr}")


class _NotLinear(Exception):
    """The fast path cannot decide: fall back to the reference's SymPy procedure."""


Linear = tuple[Fraction, Fraction]  # (slope, offset): slope·x + offset


def _linear(expr: Expr, bindings: dict[str, Fraction]) -> Linear:
    """Exact value of a normalised side under the bindings as slope·x + offset.

    Raises _NotLinear for anything the SymPy procedure might treat differently: a reciprocal of
    zero (SymPy's ``zoo``), x inside a reciprocal, a term of degree 2 or more, other powers.
    """
    if expr.is_Symbol:
        if expr.name == "x":
            return Fraction(1), Fraction(0)
        try:
            return Fraction(0), bindings[expr.name]
        except KeyError:
            raise _NotLinear from None
    if expr.is_Rational:
        return Fraction(0), Fraction(int(expr.p), int(expr.q))
    if expr.is_Add:
        slope, offset = Fraction(0), Fraction(0)
        for arg in expr.args:
            s, o = _linear(arg, bindings)
            slope += s
            offset += o
        return slope, offset
    if expr.is_Mul:
        slope, offset = Fraction(0), Fraction(1)
        for arg in expr.args:
            s, o = _linear(arg, bindings)
            if s and slope:
                raise _NotLinear
            slope, offset = slope * o + s * offset, offset * o
        return slope, offset
    if expr.is_Pow and expr.exp == -1:
        s, o = _linear(expr.base, bindings)
        if s or o == 0:
            raise _NotLinear
        return Fraction(0), 1 / o
    raise _NotLinear


def target(lhs: Expr, rhs: Expr, bindings: dict[str, Fraction]) -> Fraction:
    """The true solution, by exactly the reference's SymPy procedure, quirks included.

    When both sides evaluate under the bindings, by exact arithmetic without a reciprocal of
    zero, to slope·x + offset, the SymPy procedure provably reduces to that same polynomial
    (no ``zoo`` can arise, so the substituted equation is exact and its numerator is linear or
    constant), so its answer is computed directly; anything else takes the SymPy path.
    """
    try:
        left, right = _linear(lhs, bindings), _linear(rhs, bindings)
    except _NotLinear:
        return _sympy_target(lhs, rhs, bindings)
    slope, offset = left[0] - right[0], left[1] - right[1]
    if slope == 0:  # SymPy: a numerator of degree 0 (or the zero polynomial, degree -oo)
        raise NoTarget("equation is not linear in x")
    return -offset / slope


def _sympy_target(lhs: Expr, rhs: Expr, bindings: dict[str, Fraction]) -> Fraction:
    """The reference's procedure itself. Substituting a zero binding into a denominator yields
    ``zoo`` terms that SymPy still turns into a "solution"; that is the reference's behaviour
    and is kept on purpose (vector v87)."""
    values = {Symbol(name): Rational(v.numerator, v.denominator) for name, v in bindings.items()}
    try:
        reduced = cancel((lhs - rhs).subs(values))
        numerator, denominator = together(reduced).as_numer_denom()
        if X in denominator.free_symbols:
            raise NoTarget("x in a denominator")
        poly = Poly(expand(numerator), X)
        if poly.degree() != 1:
            raise NoTarget("equation is not linear in x")
        slope = poly.coeff_monomial(X)
        offset = poly.coeff_monomial(1)
        if slope == 0:
            raise NoTarget("x coefficient is zero")
        solution = cancel(-offset / slope)
    except (PolynomialError, CoercionFailed, ZeroDivisionError, TypeError, ValueError) as exc:
        raise NoTarget(f"cannot solve the initial equation: {type(exc).__name__}") from None
    if not isinstance(solution, Rational):
        raise NoTarget("solution is not rational")
    return Fraction(int(solution.p), int(solution.q))


__all__ = [
    "NoTarget",
    "Unsupported",
    "unrepresentable_term",
    "X",
    "apply",
    "compute_side",
    "compute_transition",
    "probe_isolates",
    "normalise",
    "rebuild",
    "normalise_tree",
    "show",
    "target",
    "to_sympy",
    "value",
    "warm_up",
]
