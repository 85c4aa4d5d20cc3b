"""The checkpoint identity: what a run's receipt (``execution.identity_sha256``) and its resume bind.

One rule, derived from the options' own fields (as ``datasets``' fingerprinting derives the hashed
arguments from a signature and drops those equal to their defaults): each field of
:class:`modebench.api_types.EvaluationOptions` marked ``"always"`` (ModeBench 0.4.0's five) is
bound; each marked ``"unless-default"`` only when it differs from its default; an unmarked field
never. Adding an option is adding a field with its mark, and a run that leaves every later option
at its default has the identity 0.4.0 computes, so its checkpoints and receipts stay valid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.receipt.schema import CHECKPOINT_SCHEMA, MAX_INPUT_LINE_BYTES, MAX_RESPONSES_PER_PROMPT

__all__ = ["bound_options", "checkpoint_identity", "identity_fields"]


def identity_fields() -> tuple[tuple[str, str, bool, Any], ...]:
    """``(field, identity name, always, default)`` for each marked option, in field order."""
    return tuple(
        (
            item.name,
            item.metadata["identity_name"] or item.name,
            item.metadata["identity"] == "always",
            item.default,
        )
        for item in dataclasses.fields(EvaluationOptions)
        if "identity" in item.metadata
    )


def bound_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The options an identity binds, by identity name, from ``values`` keyed by field name.

    A value is the option as it enters the run (the validated run metadata; the listed prompt
    ids, in order); a field missing from ``values`` is at its default.
    """
    options: dict[str, Any] = {}
    for name, key, always, default in identity_fields():
        value = values.get(name, default)
        if always or value != default:
            options[key] = value
    return options


def checkpoint_identity(
    input_sha: str, options: dict[str, Any], frozen: Any, software: dict[str, Any], shard: Any = None
) -> dict[str, Any]:
    """The identity object of a run (``shard``: an object with ``index`` and ``count``, or None)."""
    identity = {
        "schema": CHECKPOINT_SCHEMA,
        "input_sha256": input_sha,
        "options": options,
        "frozen_split": frozen.record if frozen is not None else None,
        "manifest_sha256": frozen.manifest_sha256 if frozen is not None else None,
        "software": {key: value for key, value in software.items() if key != "git"},
        "input_line_limit": MAX_INPUT_LINE_BYTES,
        "responses_per_prompt_limit": MAX_RESPONSES_PER_PROMPT,
    }
    if shard is not None:
        # A shard's checkpoint resumes only as the same shard; the merged receipt names the
        # identity without this key, which is the unsharded run's.
        identity["shard"] = [shard.index, shard.count]
    return identity
