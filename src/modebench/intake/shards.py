"""Shard selection: shard I of N is the prompts at input positions p with p mod N = I − 1.

Round robin keeps every cell spread over all shards. The engine grades one shard's prompts;
``modebench.backends.shard.merge`` joins the shard receipts into the unsharded run's receipt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from modebench.validation import InputError

_SHARD_TEXT = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")

__all__ = ["WHOLE", "Shard", "parse_shard"]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise InputError(f"shard index must be between 1 and {self.count}, not {self.index}")

    def contains(self, seq: int) -> bool:
        return seq % self.count == self.index - 1

    def seq_at(self, position: int) -> int:
        """Input position of this shard's ``position``-th prompt."""
        return self.index - 1 + position * self.count

    def size(self, total: int) -> int:
        return len(range(self.index - 1, total, self.count))

    def where(self) -> str:
        """The same selection as an SQL condition on ``seq``."""
        return f"seq % {self.count} = {self.index - 1}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


WHOLE = Shard(1, 1)


def parse_shard(text: str) -> Shard:
    """``"I/N"`` → ``Shard(I, N)``."""
    match = _SHARD_TEXT.fullmatch(text.strip())
    if match is None:
        raise InputError(f"shard must look like I/N (for example 2/7), not {text!r}")
    return Shard(int(match.group(1)), int(match.group(2)))
