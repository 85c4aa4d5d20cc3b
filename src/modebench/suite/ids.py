"""Prompt-id lists (``docs/prompt-ids.md``): the reader lives in :mod:`modebench.intake.ids`, the
input side of the core, which selects records by them; suites write them."""

from modebench.intake.ids import PromptIds, natural_key, read_ids, write_ids

__all__ = ["PromptIds", "natural_key", "read_ids", "write_ids"]
