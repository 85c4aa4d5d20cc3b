"""MathIR prompt templates."""

from __future__ import annotations

from modebench.domains._prompt_text import BOXED, CAREFUL, check_condition
from modebench.domains._protocol import PromptTemplate

_LEVEL1 = PromptTemplate("qwen_boxed", BOXED)
_HARDER = PromptTemplate(
    "qwen_level2_mathir",
    CAREFUL
    + " Use algebraic isolation: move the right-side x term left, remove the left constant, then divide"
    " by the combined coefficient. Match those operations to the shuffled menu IDs.",
    reference_syntax_profile="domain_legal_v1",
)


def template(level: int, condition: str) -> PromptTemplate:
    check_condition(condition)
    return _LEVEL1 if level == 1 else _HARDER
