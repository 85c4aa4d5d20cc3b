"""Python-factors prompt templates, including the neutral Level 3 condition."""

from __future__ import annotations

from modebench.domains._prompt_text import BOXED, CAREFUL, NEUTRAL, check_condition
from modebench.domains._protocol import PromptTemplate

_LEVEL1 = PromptTemplate("qwen_boxed", BOXED)
_HARDER = PromptTemplate(
    "qwen_level2_python_factors",
    CAREFUL
    + " Construct one allowed lambda expression. Test small divisors with nested conditional expressions,"
    " for example 2 if n % 2 == 0 else 3 if n % 3 == 0 else 5, but adapt the tests to every listed case."
    " You may instead dispatch on each listed value. Output exactly the boxed lambda.",
    reference_syntax_profile="domain_legal_v1",
)
#: Only Level 3 under ``python_level3_neutral_v1`` uses this wording.
NEUTRAL_LEVEL3 = PromptTemplate(
    "qwen_level3_python_factors_neutral_v1",
    CAREFUL + " Construct one allowed lambda expression. Output exactly the boxed lambda.",
    reference_syntax_profile="domain_legal_v1",
)


def template(level: int, condition: str) -> PromptTemplate:
    check_condition(condition)
    if level == 1:
        return _LEVEL1
    if level == 3 and condition == NEUTRAL:
        return NEUTRAL_LEVEL3
    return _HARDER
