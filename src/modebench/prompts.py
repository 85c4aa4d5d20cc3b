"""Registered prompt rendering, prompt profiles and prompt hashes (``docs/datasets.md``, "Prompts")."""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
from collections.abc import Mapping
from typing import Any

from modebench.contracts import normalize_task_identity
from modebench.domains import plugin
from modebench.domains._prompt_text import CONDITIONS, NEUTRAL, REGISTERED, check_condition
from modebench.domains._protocol import PromptTemplate

HISTORICAL = REGISTERED
CURRENT = NEUTRAL
DEFAULT_CONDITION = REGISTERED
PROFILE_SCHEMA = "modebench-current-prompt-contract-v2"
_ROLE_MARKERS = ("<|im_start|>", "<|im_end|>")


def _template(level: Any, domain: Any, condition: str) -> tuple[int, str, PromptTemplate]:
    check_condition(condition)  # first, as 0.4.0 does: an unknown condition is named before the task
    number, name = normalize_task_identity(level, domain)
    return number, name, plugin(name).prompt(number, condition)


def make_messages(
    level: Any, domain: Any, row: Mapping[str, Any], condition: str = DEFAULT_CONDITION
) -> list[dict[str, str]]:
    """The two chat messages (system, user) a model sees for this row; never the answer."""
    _, _, template = _template(level, domain, condition)
    problem = row.get("problem") if isinstance(row, Mapping) else None
    if not isinstance(problem, str) or not problem.strip():
        raise ValueError("ModeBench row requires a nonempty problem string")
    if any(marker in problem for marker in _ROLE_MARKERS):
        raise ValueError("unexpected chat role marker in benchmark problem")
    return [
        {"role": "system", "content": template.system},
        {"role": "user", "content": template.user(problem)},
    ]


def messages_sha256(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(
        json.dumps(messages, sort_keys=True, separators=(",", ":")).encode("utf-8")
    ).hexdigest()


def prompt_sha256(level: Any, domain: Any, row: Mapping[str, Any], condition: str = DEFAULT_CONDITION) -> str:
    """SHA-256 of the canonical JSON of the rendered messages."""
    return messages_sha256(make_messages(level, domain, row, condition))


def profile_metadata(level: Any, domain: Any, condition: str = DEFAULT_CONDITION) -> dict[str, Any]:
    """The ``prompt_profile`` recorded with each result."""
    number, name, template = _template(level, domain, condition)
    neutral = template.template_name.endswith("_neutral_v1")
    return {
        "schema": PROFILE_SCHEMA,
        "level": number,
        "domain": name,
        "template_name": template.template_name,
        "prompt_source": "src/oat_drgrpo/templates.py:TEMPLATE_FACTORY",
        "reference_recipe": "ops/exp_scaling/e124_qwen7b_recipes.py:interface",
        "chat_transport": "structured_system_and_user_messages",
        "response_surface": template.response_surface,
        "canonical_action_task": template.canonical_action_task,
        "trusted_quantity_projection": template.trusted_quantity_projection,
        "hosted_syntax_constraints": "none",
        "reference_syntax_profile": template.reference_syntax_profile,
        "reference_fixed_action_mask": template.reference_fixed_action_mask,
        "verifier": "modebench.grading.validated_modebench_outcome_key",
        "prompt_condition": condition,
        "system_wording": "neutral" if neutral else "registered_original",
        "choice_informed_by_existing_evaluation": neutral,
        "original_difficulty_calibration_applies_to_prompt": not neutral,
    }


__all__ = [
    "CONDITIONS",
    "CURRENT",
    "DEFAULT_CONDITION",
    "HISTORICAL",
    "make_messages",
    "messages_sha256",
    "profile_metadata",
    "prompt_sha256",
]


def training_environment(
    level: Any, domain: Any, environment: Any, condition: str = DEFAULT_CONDITION
) -> dict[str, Any]:
    """A trainer's environment variables switched to ``condition``'s template for this task.

    The environment must already name the task's registered template or the condition's own
    (``OAT_ZERO_PROMPT_TEMPLATE``), so a foreign template is never silently replaced.
    """
    number = normalize_task_identity(level, domain)[0]
    wanted = profile_metadata(level, domain, condition)["template_name"]
    updated = copy.deepcopy(environment)
    registered = profile_metadata(level, domain, HISTORICAL)["template_name"]
    if environment.get("OAT_ZERO_PROMPT_TEMPLATE") not in (registered, wanted):
        raise ValueError("unexpected source template; require a native registered interface")
    updated["OAT_ZERO_PROMPT_TEMPLATE"] = wanted
    updated["OAT_ZERO_MODEBENCH_PROMPT_CONDITION"] = condition
    updated["OAT_ZERO_MODEBENCH_LEVEL"] = str(number)
    return dict(updated)


# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.compat.templates import CHAT_SURFACES, TEMPLATE_FACTORY  # noqa: E402

__all__ += ["CHAT_SURFACES", "TEMPLATE_FACTORY", "registered"]  # noqa: F822 - registered: __getattr__ below


def __getattr__(name: str) -> Any:
    # 0.4.0's ``prompts.registered`` is the registered_prompts module, which is built on this one:
    # resolved by name on first use, so that neither module imports the other at import time.
    if name == "registered":
        return importlib.import_module("modebench.registered_prompts")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
