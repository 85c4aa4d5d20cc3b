"""Targeted checks of spec rules not pinned by a §13 vector, and of the documented decisions."""

from __future__ import annotations

import pytest

from modebench.domains._pipeline import grade_in_process
from modebench.domains._protocol import Incorrect, Malformed
from modebench.domains.python_factors import PLUGIN, grade
from modebench.domains.python_factors.reference import FactorReference, mode_count, proper_divisors

REF = FactorReference(cases=(6, 10))
ROW = {"answer": {"verifier": "python_factor_function", "python_version": "factor-v1", "cases": [6, 10]}}


def status(text: str, row: dict = ROW) -> str:
    return grade_in_process(1, "python_factors", row, text)["status"]


def test_plugin_identity() -> None:
    assert PLUGIN.name == "python_factors"
    assert PLUGIN.verifiers == ("python_factor_function",)
    assert PLUGIN.deadline_seconds == 0.25


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lambda n: 2 if 1 < n < 9 else 3", "malformed"),  # unboxed '<'
        ("\\boxed{lambda n: 2 if 1 < n < 1000 else 3}", "correct"),
        ("\\boxed{lambda n: n % 4 and 2 or 5}", "correct"),
        ("\\boxed{lambda n: (n > 2 and n < 9)}", "incorrect"),  # bool result
        ("\\boxed{lambda n: +(n == n) + 1}", "correct"),  # +True is the int 1
        ("\\boxed{lambda n: -(-2)}", "correct"),
        ("\\boxed{lambda n: n - n // 2 * 2 + 2}", "correct"),
        ("\\boxed{lambda n: 10 % (n - 6) and 2 or 5}", "incorrect"),  # 10 % 0 on n == 6
        ("\\boxed{lambda n: 2 if n == 6 else 10 % (n - 10)}", "incorrect"),
        ("\\boxed{lambda n: 2 if n != 6 else 2 // (n - 6)}", "incorrect"),
        ("\\boxed{lambda n: 2 if n == 6 or n == 10 else n // 0}", "correct"),
        ("\\boxed{lambda n: 0b10}", "correct"),
        ("\\boxed{lambda n: 2 if n != -10001 else 3}", "malformed"),
        ("\\boxed{lambda n: 2j}", "malformed"),
        ("\\boxed{lambda n: ...}", "malformed"),
        ("\\boxed{lambda n: None}", "malformed"),
        ("\\boxed{lambda n: f'{n}'}", "malformed"),
        ("\\boxed{lambda n: n << 1}", "malformed"),
        ("\\boxed{lambda n: (2, 3)}", "malformed"),
        ("\\boxed{lambda n: [2][0]}", "malformed"),
        ("\\boxed{lambda n: n.real}", "malformed"),
        ("\\boxed{lambda n: __import__('os')}", "malformed"),
        ("\\boxed{lambda n, /: 2}", "malformed"),
        ("\\boxed{lambda *n: 2}", "malformed"),
        ("\\boxed{lambda n, *, k: 2}", "malformed"),
        ("\\boxed{lambda n, **k: 2}", "malformed"),
        ("\\boxed{lambda: 2}", "malformed"),
        ("\\boxed{ｌａｍｂｄａ n: 2}", "malformed"),  # keywords are not NFKC-normalised
        ("\\boxed{lambda n: ２}", "malformed"),  # non-ASCII digits are not numbers
        ("\\boxed{lambda n: \\\n 2}", "correct"),  # backslash line continuation
        ("\\boxed{lambda n: 2 if n else x}", "malformed"),
        ("\\boxed{lambda n: lambda m=2, *a, k=3, **kw: 2}", "incorrect"),  # nested lambda result
        ("\\boxed{lambda n: lambda m=1 // 0: 2}", "incorrect"),  # defaults run when it is built
        ("\\boxed{lambda n: 2 if (lambda: 3) else 5}", "correct"),  # functions are truthy
        ("\\boxed{lambda n: 2 if (lambda: 3) == 3 else 5}", "incorrect"),  # False: 5 for n == 6
        ("Answer:lambda n: 2", "correct"),
        ("program: lambda n: 2", "correct"),
        ("ANSWER IS lambda n: 2", "correct"),
        ("```\nlambda n: 2\n```", "correct"),
        ("```PYTHON lambda n: 2```", "correct"),
        ("\\boxed{lambda n: 2} ```python\nx\n```", "correct"),
        ("\\lambda\\, n : 2", "correct"),
        ("\\lambda\\,\\,n: 2", "malformed"),
        ("\\lambdan: 2", "malformed"),
        ("\\boxed{\\lambda x: 2}", "malformed"),
        ("\\boxedx{lambda n: 2}", "malformed"),
        ("\\boxed{lambda n: 2}\\boxed", "malformed"),
        ("lambda n: 2\r\n", "correct"),
        ("lambda n:\r2", "malformed"),
    ],
)
def test_status(text: str, expected: str) -> None:
    assert status(text) == expected


def test_unboxed_cap_counts_the_prefix() -> None:
    body = "lambda n:" + " " * 221 + "2"  # 231 characters
    assert status("Answer: " + body) == "correct"  # 239
    assert status("Answer:  " + body) == "correct"  # 240
    assert status("Answer:   " + body) == "malformed"  # 241 before the prefix is removed


def test_outputs_and_key_follow_case_order() -> None:
    got = grade(1, FactorReference(cases=(15, 6, 10)), "lambda n: 2 if n % 2 == 0 else 3")
    assert got.key == "python_factor:3,2,2"
    assert got.extra == {"outputs": [3, 2, 2]}
    assert got.graded_text is None


def test_same_candidate_with_other_references() -> None:
    text = "lambda n: n // 2"
    assert grade(1, FactorReference(cases=(6, 10)), text).key == "python_factor:3,5"
    assert grade(1, FactorReference(cases=(10, 6)), text).key == "python_factor:5,3"
    with pytest.raises(Incorrect):
        grade(1, FactorReference(cases=(6, 9)), text)


def test_cached_malformed_is_raised_each_time() -> None:
    for _ in range(3):
        with pytest.raises(Malformed, match="unknown name: y"):
            grade(1, REF, "lambda n: y")


# Spec §7: only ArithmeticError is a wrong answer; any other exception in the worker is an
# evaluator failure (`worker_failure`, "unexpected <Type>"), produced by the shared worker guard.
# Spec §6.1 makes only ast.parse failures malformed, so compile-time errors of nested lambdas that
# the parser accepts are left to propagate as well (see the report: spec ambiguity).
@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("lambda n: (lambda: 2) + 1", TypeError),
        ("\\boxed{lambda n: 2 if (lambda: 2) < 3 else 3}", TypeError),
        ("lambda n: -(lambda: 2)", TypeError),
        ("lambda n: lambda m=(lambda: 1) * 2: 2", TypeError),
        ("lambda n: lambda n, n: 2", SyntaxError),
        ("lambda n: lambda __debug__: 2", SyntaxError),
    ],
)
def test_non_arithmetic_errors_propagate(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        grade(1, REF, text)


def test_divisor_helpers() -> None:
    assert proper_divisors(18) == (2, 3, 6, 9)
    assert proper_divisors(7) == ()
    assert mode_count([18, 82, 91, 93]) == 32
    assert mode_count([68, 81, 96, 130]) == 720
    assert mode_count([25, 49, 150, 221, 668, 914]) == 160


def test_lone_surrogate_is_malformed() -> None:
    # CPython cannot encode the source (UnicodeEncodeError, a ValueError): malformed, not a crash.
    assert status("lambda n: 2 \ud800") == "malformed"
    assert status("\\boxed{lambda n: 2 # \ud800}") == "malformed"


class _FakeDeadline(BaseException):
    pass


def test_deadline_signal_is_never_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's SIGALRM deadline is a BaseException; grading must let it through."""
    import ast

    def interrupted(*args: object, **kwargs: object) -> None:
        raise _FakeDeadline

    monkeypatch.setattr(ast, "parse", interrupted)
    with pytest.raises(_FakeDeadline):
        grade(1, REF, "lambda n: 2 if n != 9999 else 3  # unique, never cached")
    monkeypatch.undo()
    # The interrupted parse was not cached: the same candidate now grades normally.
    assert grade(1, REF, "lambda n: 2 if n != 9999 else 3  # unique, never cached").key == "python_factor:2,2"
