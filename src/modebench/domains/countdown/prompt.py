"""Countdown prompt templates."""

from __future__ import annotations

from modebench.domains._prompt_text import BOXED, CAREFUL, check_condition
from modebench.domains._protocol import PromptTemplate

_LEVEL1 = PromptTemplate("qwen_boxed", BOXED)
_HARDER = PromptTemplate(
    "qwen_level2_countdown",
    CAREFUL + " Systematically combine every supplied number exactly once using +, -, *, /, and parentheses."
    " Check the exact target before answering. Output exactly the boxed expression.",
    reference_syntax_profile="countdown_legal_v3",
)


def template(level: int, condition: str) -> PromptTemplate:
    check_condition(condition)
    return _LEVEL1 if level == 1 else _HARDER
