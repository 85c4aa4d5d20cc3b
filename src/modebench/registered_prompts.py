"""The registered prompt condition of 0.4.0 (alias ``modebench.historical_prompts``).

Same messages as ``prompts.make_messages(..., "registered_hints_v1")``; the profile is the
registered contract's (schema ``frontier-modebench-e124-prompt-contract-v1``), i.e. the current
profile without the condition fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modebench import prompts as _prompts
from modebench.contracts import normalize_task_identity
from modebench.isolation import client as verifier  # 0.4.0's modebench.verifier: the same module

SCHEMA = "frontier-modebench-e124-prompt-contract-v1"
#: The order in which 0.4.0's registered contract lists its domains.
DOMAINS = ("graph_coloring", "countdown", "python_factors", "mathir", "pantry_plan")
# Fields the current profile adds on top of the registered one.
_CONDITION_FIELDS = (
    "prompt_condition",
    "system_wording",
    "choice_informed_by_existing_evaluation",
    "original_difficulty_calibration_applies_to_prompt",
)


def make_messages(level: int | str, domain: str, row: Mapping[str, Any]) -> list[dict[str, str]]:
    """The (system, user) messages of the registered condition."""
    return _prompts.make_messages(level, domain, row, _prompts.HISTORICAL)


def profile_metadata(level: int | str, domain: str) -> dict[str, Any]:
    """The registered prompt profile of a (level, domain)."""
    profile = _prompts.profile_metadata(level, domain, _prompts.HISTORICAL)
    profile["schema"] = SCHEMA
    for name in _CONDITION_FIELDS:
        profile.pop(name)
    return profile


def grade_response(level: int | str, domain: str, row: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Grade through the bounded verifier (looked up at call time, so callers may replace it)."""
    return verifier.grade_response(level, domain, row, text)  # an attribute of the module, per call


__all__ = [
    "DOMAINS",
    "SCHEMA",
    "grade_response",
    "make_messages",
    "normalize_task_identity",
    "profile_metadata",
]
