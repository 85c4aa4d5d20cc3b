"""Run metadata (model, generation settings, prompt condition) validation (``docs/evaluation.md``, "Input")."""

from __future__ import annotations

from typing import Any

from modebench.prompts import CONDITIONS
from modebench.validation import InputError, json_copy, positive_integer

_FIELDS = ("generation", "model", "prompt_condition")


def validate_run(run: Any) -> dict[str, Any]:
    """Return a deep JSON copy of valid run metadata or raise ``InputError``."""
    if not isinstance(run, dict):
        raise InputError("run metadata must be an object")
    copy: dict[str, Any] = json_copy(run, "run")
    missing = [name for name in _FIELDS if name not in copy]
    if missing:
        raise InputError(f"run metadata missing fields: {', '.join(sorted(missing))}")
    model = copy["model"]
    if not isinstance(model, dict):
        raise InputError("run.model must be an object with id and revision")
    for name in ("id", "revision"):
        value = model.get(name)
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"run.model.{name} must be a nonempty string")
    generation = copy["generation"]
    if not isinstance(generation, dict) or not generation:
        raise InputError("run.generation must be a nonempty object of generation settings")
    if "draws_per_prompt" in generation:
        positive_integer(generation["draws_per_prompt"], "run.generation.draws_per_prompt")
    if copy["prompt_condition"] not in CONDITIONS:
        raise InputError("run.prompt_condition is not a supported prompt condition")
    return copy


__all__ = ["validate_run"]
