"""Optional mode-aware reward shaping: a novelty bonus for verified completions (off by default).

A research option, not part of the verdict: the verdict, the canonical key and every metric and
receipt stay exactly what grading gave. Only the *reward* handed to the trainer changes, and only
for verified completions: a verified completion whose mode is new for its prompt gets ``bonus``
added to its reward. "New" means:

* ``scope="group"``: the first completion of that mode among the prompt's completions in this
  batch, in row order (so exactly one completion per verified mode in the group is rewarded).
  :class:`~modebench.rl.rewards.TRLReward` applies it to every rank's rows gathered together, so
  a group split over ranks is shaped as in one process;
* ``scope="bank"``: its mode is not in the bank for that prompt *before* this batch is admitted
  (every completion of such a mode gets the bonus).

It claims nothing about learning dynamics; whether it counters mode collapse is the experiment.
Unverified and unscorable completions are never shaped (an unscorable one stays ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from modebench.rl.batch import Graded
from modebench.rl.protocols import RolloutBank

__all__ = ["NoveltyBonus", "SCOPES"]

SCOPES: Final = ("group", "bank")


@dataclass(frozen=True)
class NoveltyBonus:
    """Add ``bonus`` to the reward of a verified completion whose mode is new (module docstring)."""

    bonus: float = 0.1
    scope: Literal["group", "bank"] = "group"

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
        if not isinstance(self.bonus, (int, float)) or isinstance(self.bonus, bool) or not self.bonus >= 0:
            raise ValueError("bonus must be a nonnegative number")

    def apply(
        self,
        rewards: Sequence[float | None],
        graded: Sequence[Graded],
        prompt_ids: Sequence[str],
        bank: RolloutBank | None = None,
    ) -> list[float | None]:
        """The shaped rewards (a new list); call before the batch is admitted to ``bank``."""
        if self.scope == "bank" and bank is None:
            raise ValueError("scope='bank' needs the mode bank")
        out = list(rewards)
        seen: set[tuple[str, str]] = set()
        for row, (result, pid) in enumerate(zip(graded, prompt_ids, strict=True)):
            reward = out[row]
            if not result.verified or result.canonical_key is None or reward is None:
                continue
            key = (pid, result.canonical_key)
            if self.scope == "group":
                new = key not in seen
                seen.add(key)
            else:
                assert bank is not None
                new = result.canonical_key not in bank.modes(pid)
            if new:
                out[row] = reward + self.bonus
        return out
