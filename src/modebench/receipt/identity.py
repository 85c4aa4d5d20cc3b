"""The checkpoint identity: what a run's receipt (``execution.identity_sha256``) and its resume bind.

One rule decides which options enter it (like ``datasets``' fingerprinting): the five options of
ModeBench 0.4.0 always, every later option only when it differs from its default, so a run that
uses none of them has the identity 0.4.0 computes and its checkpoints and receipts stay valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from modebench.receipt.schema import CHECKPOINT_SCHEMA, MAX_INPUT_LINE_BYTES, MAX_RESPONSES_PER_PROMPT

#: The options of ModeBench 0.4.0: always bound.
BASE_OPTIONS: Final = ("min_defined_prompts", "run", "config", "split", "allow_partial")
#: Options added since, with the default that keeps them out of the identity.
LATER_DEFAULTS: Final[Mapping[str, Any]] = {"prompt_ids": None, "limit": None, "unscorable": "fail-run"}

__all__ = ["BASE_OPTIONS", "LATER_DEFAULTS", "bound_options", "checkpoint_identity"]


def bound_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The options an identity binds: ``BASE_OPTIONS``, then each later one unless it is its default."""
    options = {name: values[name] for name in BASE_OPTIONS}
    for name, default in LATER_DEFAULTS.items():
        if values.get(name, default) != default:
            options[name] = values[name]
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
