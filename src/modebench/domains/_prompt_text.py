"""Prompt wording shared by several domains (registered condition ``registered_hints_v1``)."""

from __future__ import annotations

from typing import Final

REGISTERED: Final = "registered_hints_v1"
NEUTRAL: Final = "python_level3_neutral_v1"
CONDITIONS: Final[tuple[str, ...]] = (NEUTRAL, REGISTERED)

#: Level 1 system text of every domain but Pantry.
BOXED: Final = "Return only the final answer inside \\boxed{}. Do not explain."
#: Opening shared by every Level 2–5 system text.
CAREFUL: Final = (
    "Solve the executable constraint problem carefully. You may reason briefly, "
    "but end with exactly one final answer inside \\boxed{}."
)


def check_condition(condition: str) -> None:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown prompt condition: {condition}")


__all__ = ["BOXED", "CAREFUL", "CONDITIONS", "NEUTRAL", "REGISTERED", "check_condition"]
