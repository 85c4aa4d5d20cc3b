"""Graph-coloring prompt template (the same at every level)."""

from __future__ import annotations

from modebench.domains._prompt_text import BOXED, check_condition
from modebench.domains._protocol import PromptTemplate

_TEMPLATE = PromptTemplate("qwen_boxed", BOXED)


def template(level: int, condition: str) -> PromptTemplate:
    check_condition(condition)
    return _TEMPLATE
