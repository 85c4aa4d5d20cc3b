"""PantryPlan prompt templates; Level 1 asks for a six-bit support mask instead of grams."""

from __future__ import annotations

from modebench.domains._prompt_text import CAREFUL, check_condition
from modebench.domains._protocol import PromptTemplate

#: Every frozen PantryPlan problem ends with this sentence.
ALLOCATION_SUFFIX = (
    "Return only ingredient_id=grams pairs separated by semicolons inside \\boxed{}. "
    "Do not add a recipe name or preparation prose."
)
MASK_SUFFIX = (
    "Choose the ingredient support as a six-bit mask in the exact Pantry row order. "
    "Bit 1 includes that row and bit 0 excludes it."
)


def _mask_user(problem: str) -> str:
    if not problem.endswith(ALLOCATION_SUFFIX) or problem.count(ALLOCATION_SUFFIX) != 1:
        raise ValueError("qwen_pantry_support_mask requires the frozen PantryPlan answer suffix")
    return problem[: -len(ALLOCATION_SUFFIX)] + MASK_SUFFIX


_LEVEL1 = PromptTemplate(
    "qwen_pantry_support_mask",
    "Return only six binary digits and no other text. Each digit maps to the corresponding Pantry row in "
    "printed order. A trusted environment will choose exact quantities on precisely the selected rows.",
    user=_mask_user,
    response_surface="six_bit_ingredient_support",
    canonical_action_task="pantry_support_mask",
    trusted_quantity_projection=True,
    reference_fixed_action_mask=True,
)
_HARDER = PromptTemplate(
    "qwen_level2_pantry",
    CAREFUL + " Prefer allowed high-energy/protein, very-low-sodium ingredients, especially seeds or oats."
    " Choose stepped amounts, check every bound, and output 2 to 4 ingredient_id=grams pairs.",
    reference_syntax_profile="domain_legal_v1",
)


def template(level: int, condition: str) -> PromptTemplate:
    check_condition(condition)
    return _LEVEL1 if level == 1 else _HARDER
