"""0.4.0's ``modebench.domains.countdown.verifier``: reference validation and the expression step.

``_countdown_eval_and_numbers`` is the step 0.4.0's worker looked up at call time (its tests
replace it to inject a fault); ``_canonical_countdown_expression_key`` is 0.4.0's display key.
"""

from __future__ import annotations

import ast
from fractions import Fraction

from modebench.compat.backends import backend
from modebench.compat.domain_modules import reference_validator
from modebench.compat.legacy import _canonical_countdown_expression_key
from modebench.domains.countdown import check

validate_reference = reference_validator("countdown")


@backend("countdown")  # looked up at call time by ``verifier_worker.guarded_handle``
def _countdown_eval_and_numbers(node: ast.AST) -> tuple[Fraction, list[int]]:
    """The exact value of a parsed Countdown expression and its integer literals, left to right.

    Raises ``ValueError`` for anything outside Countdown arithmetic and ``ZeroDivisionError``
    for an exact-zero divisor.
    """
    body = node.body if isinstance(node, ast.Expression) else node
    if not isinstance(body, ast.expr):
        raise ValueError("Unsupported Countdown expression.")
    literals: list[int] = []
    try:
        value = check._evaluate(body, literals)
    except check._NotCountdown:
        raise ValueError("Unsupported Countdown expression.") from None
    except check._DivisionByZero:
        raise ZeroDivisionError("division by zero") from None
    return Fraction(value), literals


__all__ = ["_canonical_countdown_expression_key", "_countdown_eval_and_numbers", "validate_reference"]
