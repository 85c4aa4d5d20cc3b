"""Hypothesis properties of the python_factors verifier (spec §4, §5, §6, §7, §8).

The restricted-language oracle here is independent of the implementation: expressions are
generated as small trees, rendered to text, evaluated by a test-side interpreter with Python
semantics, and their AST size is computed with the per-construct table of spec §6.3.
"""

from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from modebench.diagnostics import STATUSES
from modebench.domains._pipeline import grade_in_process
from modebench.domains.python_factors.language import _walk

DOMAIN = "python_factors"
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ref(cases: list[int]) -> dict[str, Any]:
    return {"answer": {"verifier": "python_factor_function", "python_version": "factor-v1", "cases": cases}}


def divisors(value: int) -> list[int]:
    return [d for d in range(2, value) if value % d == 0]


def grade(cases: list[int], text: Any, level: int = 1) -> dict[str, Any]:
    return grade_in_process(level, DOMAIN, ref(cases), text)


# --- valid references: 2..8 distinct inputs in 4..1000 with at least two modes -----------------

composites = st.integers(4, 1000).filter(lambda v: len(divisors(v)) >= 1)


@st.composite
def valid_cases(draw: st.DrawFn) -> list[int]:
    cases = draw(st.lists(composites, min_size=2, max_size=8, unique=True))
    assume(math.prod(len(divisors(v)) for v in cases) >= 2)
    return cases


# --- the restricted expression language as trees ------------------------------------------------

BIN = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod}
CMP = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

UNARY: dict[str, Callable[[Any], Any]] = {"-": operator.neg, "+": operator.pos, "not": operator.not_}

leaves = st.one_of(st.just(("n",)), st.tuples(st.just("c"), st.integers(0, 10000)))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(sorted(BIN)), children, children),
        st.tuples(st.just("un"), st.sampled_from(["-", "+", "not"]), children),
        st.tuples(
            st.just("cmp"),
            children,
            st.lists(st.tuples(st.sampled_from(sorted(CMP)), children), min_size=1, max_size=3),
        ),
        st.tuples(
            st.just("bool"), st.sampled_from(["and", "or"]), st.lists(children, min_size=2, max_size=3)
        ),
        st.tuples(st.just("if"), children, children, children),
    )


exprs = st.recursive(leaves, _extend, max_leaves=24)


def render(e: Any) -> str:
    kind = e[0]
    if kind == "n":
        return "n"
    if kind == "c":
        return str(e[1])
    if kind == "bin":
        return f"({render(e[2])} {e[1]} {render(e[3])})"
    if kind == "un":
        return f"({e[1]} {render(e[2])})" if e[1] == "not" else f"({e[1]}{render(e[2])})"
    if kind == "cmp":
        return "(" + render(e[1]) + "".join(f" {op} {render(x)}" for op, x in e[2]) + ")"
    if kind == "bool":
        return "(" + f" {e[1]} ".join(render(x) for x in e[2]) + ")"
    return f"({render(e[2])} if {render(e[1])} else {render(e[3])})"


def size(e: Any) -> int:
    """Nodes of spec §6.3: literal 1, n 2, unary/binary/bool op 2, compare 1+k, if 1 (+children)."""
    kind = e[0]
    if kind == "n":
        return 2
    if kind == "c":
        return 1
    if kind == "bin":
        return 2 + size(e[2]) + size(e[3])
    if kind == "un":
        return 2 + size(e[2])
    if kind == "cmp":
        return 1 + len(e[2]) + size(e[1]) + sum(size(x) for _, x in e[2])
    if kind == "bool":
        return 2 + sum(size(x) for x in e[2])
    return 1 + size(e[1]) + size(e[2]) + size(e[3])


def evaluate(e: Any, n: int) -> Any:
    """Python semantics: short-circuit and/or/if and chained comparisons, operands evaluated once."""
    kind = e[0]
    if kind == "n":
        return n
    if kind == "c":
        return e[1]
    if kind == "bin":
        return BIN[e[1]](evaluate(e[2], n), evaluate(e[3], n))
    if kind == "un":
        value = evaluate(e[2], n)
        return UNARY[e[1]](value)
    if kind == "cmp":
        left = evaluate(e[1], n)
        result: Any = True
        for op, x in e[2]:
            right = evaluate(x, n)
            result = CMP[op](left, right)
            if not result:
                return result
            left = right
        return result
    if kind == "bool":
        value = None
        for x in e[2]:
            value = evaluate(x, n)
            if (e[1] == "and") != bool(value):
                return value
        return value
    return evaluate(e[2], n) if evaluate(e[1], n) else evaluate(e[3], n)


def expected_outcome(e: Any, cases: list[int]) -> tuple[str, list[int] | None]:
    if size(e) + 4 > 64:
        return "malformed", None
    outputs = []
    for n in cases:
        try:
            d = evaluate(e, n)
        except ZeroDivisionError:
            return "incorrect", None
        if isinstance(d, bool) or not isinstance(d, int) or not 1 < d < n or n % d:
            return "incorrect", None
        outputs.append(d)
    return "correct", outputs


@SETTINGS
@given(e=exprs, cases=valid_cases())
def test_restricted_language_matches_independent_oracle(e: Any, cases: list[int]) -> None:
    body = render(e)
    text = "\\boxed{lambda n: " + body + "}"
    assume(len(body) + 10 <= 240)
    got = grade(cases, text)
    status, outputs = expected_outcome(e, cases)
    assert got["status"] == status, (text, got)
    assert got["graded_text"] == text
    if status == "correct":
        assert outputs is not None
        assert got["outputs"] == outputs
        assert got["canonical_key"] == "python_factor:" + ",".join(map(str, outputs))


@SETTINGS
@given(e=exprs)
def test_node_count_matches_spec_table_and_ast_walk(e: Any) -> None:
    tree = ast.parse("lambda n: " + render(e), mode="eval")
    total = len(list(ast.walk(tree)))
    assert total == size(e) + 4
    walked = _walk(tree)
    if total <= 64:
        assert walked is not None and [type(x) for x in walked] == [type(x) for x in ast.walk(tree)]
    else:
        assert walked is None


@st.composite
def any_python_expression(draw: st.DrawFn) -> str:
    """Expressions mixing allowed and forbidden constructs, for the walk-order equivalence."""
    atoms = [
        "n",
        "x",
        "2",
        "2.0",
        "'s'",
        "True",
        "None",
        "(1, 2)",
        "[n]",
        "{n: 1}",
        "f(n)",
        "n.a",
        "n[0]",
        "(lambda m, *a, k=1, **kw: m)",
        "(y := 3)",
        "f'{n}'",
        "(n for n in n)",
    ]
    ops = [" + ", " ** ", " / ", " & ", " if n else ", " in ", " is not ", " < ", " and ", " == "]
    parts = draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=12))
    joins = draw(st.lists(st.sampled_from(ops), min_size=len(parts) - 1, max_size=len(parts) - 1))
    out = parts[0]
    for op, part in zip(joins, parts[1:]):
        out += op + part
    return "lambda n: " + out


@SETTINGS
@given(text=any_python_expression())
def test_fast_walk_is_ast_walk(text: str) -> None:
    tree = ast.parse(text, mode="eval")
    reference = list(ast.walk(tree))
    walked = _walk(tree)
    if len(reference) > 64:
        assert walked is None
    else:
        assert walked is not None and [type(x) for x in walked] == [type(x) for x in reference]
    got = grade([6, 10], text)
    if any(isinstance(x, (ast.Call, ast.Tuple, ast.Pow, ast.Attribute, ast.NamedExpr)) for x in reference):
        assert got["status"] == "malformed"


# --- surface invariants and modes --------------------------------------------------------------


@st.composite
def case_choice(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    cases = draw(valid_cases())
    chosen = [draw(st.sampled_from(divisors(v))) for v in cases]
    return cases, chosen


WRAPPERS = [
    "{}",
    "\\boxed{{{}}}",
    "Reasoning first.\n\\boxed{{{}}}\n",
    "Answer: {}",
    "The final answer is {}",
    "```python\n{}\n```",
    "  {}\n",
]


@SETTINGS
@given(
    data=case_choice(),
    wrapper=st.sampled_from(WRAPPERS),
    style=st.sampled_from(["dispatch", "latex"]),
    order=st.randoms(use_true_random=False),
)
def test_key_is_the_chosen_vector_whatever_the_program(
    data: Any, wrapper: str, style: str, order: Any
) -> None:
    cases, chosen = data
    pairs = list(zip(cases, chosen))
    order.shuffle(pairs)  # program text order must not matter; only the outputs do
    body = " else ".join(f"{d} if n == {v}" for v, d in pairs[:-1]) + f" else {pairs[-1][1]}"
    head = "\\lambda n: " if style == "latex" else "lambda n: "
    text = wrapper.format(head + body)
    assume(len(head + body) <= 200)
    got = grade(cases, text)
    assert got["status"] == "correct", got
    assert got["canonical_key"] == "python_factor:" + ",".join(map(str, chosen))
    assert got["outputs"] == chosen
    assert all(1 < d < v and v % d == 0 for v, d in zip(cases, got["outputs"]))
    # The key follows the reference's case order.
    reversed_cases = list(reversed(cases))
    assert grade(reversed_cases, text)["canonical_key"] == "python_factor:" + ",".join(
        map(str, reversed(chosen))
    )


@SETTINGS
@given(cases=valid_cases(), level=st.sampled_from([1, 2, 3, 4, 5, "level2", "5"]))
def test_level_does_not_change_grading(cases: list[int], level: Any) -> None:
    text = "lambda n: 2 if n % 2 == 0 else 3 if n % 3 == 0 else 5 if n % 5 == 0 else n // 7"
    assert grade(cases, text, level) == grade(cases, text, 1)


@SETTINGS
@given(text=st.text(max_size=300))
def test_arbitrary_text_gets_a_structured_status(text: str) -> None:
    got = grade([6, 10, 15], text)
    assert got["status"] in STATUSES and got["status"] != "invalid_reference"
    assert got["verified"] is (got["status"] == "correct")
    assert (got["canonical_key"] is not None) is got["verified"]
    assert got["graded_text"] == text
    # Any '<' or '>' makes an unboxed response malformed (spec §5.2 step 3).
    if "\\boxed" not in text and ("<" in text or ">" in text):
        assert got["status"] == "malformed"


@SETTINGS
@given(prefix=st.text(max_size=40), text=st.text(max_size=40))
def test_only_the_last_box_counts(prefix: str, text: str) -> None:
    assume("\\boxed" not in prefix + text)
    got = grade([6, 10], prefix + "\\boxed{lambda n: 2}" + text + "\\boxed{lambda n: 1}")
    assert got["status"] == "incorrect"


# --- references --------------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 1200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
json_values = st.recursive(
    json_scalars,
    lambda c: st.lists(c, max_size=9) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=12,
)


def reference_is_valid(answer: dict[str, Any]) -> bool:
    cases = answer.get("cases")
    return (
        answer.get("python_version") == "factor-v1"
        and isinstance(cases, list)
        and 2 <= len(cases) <= 8
        and all(type(v) is int for v in cases)
        and len(set(cases)) == len(cases)
        and all(4 <= v <= 1000 for v in cases)
        and math.prod(len(divisors(v)) for v in cases) >= 2
    )


@SETTINGS
@given(
    cases=st.one_of(
        json_values, st.lists(st.one_of(st.integers(0, 1001), st.booleans(), st.floats(4, 10)), max_size=9)
    ),
    version=st.sampled_from(["factor-v1", "factor-v2", None, 1]),
    extra=st.dictionaries(
        st.sampled_from(["num_modes", "source", "instance_id", "x"]), json_values, max_size=2
    ),
    as_string=st.booleans(),
)
def test_reference_validation_follows_the_rules(
    cases: Any, version: Any, extra: dict[str, Any], as_string: bool
) -> None:
    answer: dict[str, Any] = {**extra, "verifier": "python_factor_function", "cases": cases}
    if version is not None:
        answer["python_version"] = version
    row = {"answer": json.dumps(answer) if as_string else answer}
    got = grade_in_process(3, DOMAIN, row, "lambda n: 2")
    assert got["status"] in STATUSES
    assert (got["status"] != "invalid_reference") is reference_is_valid(answer), (answer, got)
    if got["status"] == "invalid_reference":
        assert got["graded_text"] == "lambda n: 2"
        assert got["detail"].startswith("invalid python_factors reference: ")
