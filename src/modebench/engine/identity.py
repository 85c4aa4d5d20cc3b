"""The checkpoint identity of a run specification (``docs/evaluation.md``, "Resume").

The identity binds the input's hash, the options that change results, the frozen split, the
software and the input bounds; a resume under another identity is refused and a receipt names
its digest (``execution.identity_sha256``). Which options enter it is one rule
(:func:`modebench.receipt.identity.bound_options`): ModeBench 0.4.0's five always, a later
one only when it is not its default, so every 0.4.0-shaped run keeps 0.4.0's identity.
"""

from __future__ import annotations

from typing import Any

from modebench.engine.spec import RunSpec
from modebench.identity import canonical
from modebench.receipt.identity import bound_options, checkpoint_identity
from modebench.validation import loads

__all__ = ["identity", "option_values"]


def option_values(spec: RunSpec) -> dict[str, Any]:
    """Every option that can change a result, by its identity name (defaults included)."""
    options = spec.options
    return {
        "min_defined_prompts": options.min_defined_prompts,
        "run": options.run,
        "config": options.config,
        "split": options.split,
        "allow_partial": options.allow_partial,
        "prompt_ids": options.prompt_ids.ordered() if options.prompt_ids is not None else None,
        "limit": spec.limit,
        "unscorable": spec.unscorable,
    }


def identity(spec: RunSpec, input_sha: str, frozen: Any, software: dict[str, Any]) -> dict[str, Any]:
    """The identity object of ``spec`` over an input of hash ``input_sha`` (as JSON reads it back)."""
    bound = checkpoint_identity(input_sha, bound_options(option_values(spec)), frozen, software, spec.shard)
    return loads(canonical(bound))  # type: ignore[no-any-return]
