"""A reward function for RL training written against ModeBench 0.4.0's ``modebench.grading``.

This is how a trainer such as Re:Max grades its rollouts: the reward comes from the in-process
grading API (no level or domain argument; the reference's ``verifier`` field picks the domain),
an exploration bonus from the verified route identity, and evaluation-time grading from
``modebench.api.grade``. The same file runs unchanged on ModeBench 0.4.0 and on this project.

Run: ``python examples/remax_reward.py`` (rollouts are the packaged walkthrough's responses).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import modebench.api
from modebench.grading import (
    VerifiedExplorationIdentity,
    boxed_reward_fn,
    extract_answer,
    validated_modebench_exploration_identity,
)
from modebench.templates import TEMPLATE_FACTORY


@dataclass
class ExplorationReward:
    """1 for a verified answer, plus ``bonus`` the first time a prompt sees a new route."""

    bonus: float = 0.5
    seen: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def __call__(self, prompt_id: str, response: str, gt_answer: Any) -> tuple[float, dict[str, Any]]:
        info, correct = boxed_reward_fn(response, gt_answer)
        identity: VerifiedExplorationIdentity | None = validated_modebench_exploration_identity(
            response, gt_answer
        )
        reward = correct
        if identity is not None:
            route = identity.route_signature or identity.endpoint_key
            if route not in self.seen[prompt_id]:
                self.seen[prompt_id].add(route)
                reward += self.bonus
        info = {
            **info,
            "boxed": extract_answer(response),
            "endpoint": identity.endpoint_key if identity else None,
        }
        return reward, info


def rollouts() -> list[dict[str, Any]]:
    """Saved responses of the packaged walkthrough (one record per domain)."""
    bundle = json.loads(resources.files("modebench").joinpath("walkthrough.json").read_text(encoding="utf-8"))
    records: list[dict[str, Any]] = bundle["records"]
    return records


def main() -> list[dict[str, Any]]:
    reward_fn = ExplorationReward()
    rows = []
    for record in rollouts():
        prompt = TEMPLATE_FACTORY["qwen_boxed"](record["problem"])  # what the policy was shown
        task = modebench.api.Task(
            id=record["id"], level=record["level"], domain=record["domain"], problem=record["problem"],
            answer=record["answer"], dataset_sha256=None,
        )  # fmt: skip
        for response in record["responses"]:
            reward, info = reward_fn(record["id"], response, record["answer"])
            graded = modebench.api.grade(task, response)
            rows.append(
                {"id": record["id"], "prompt_chars": len(prompt), "response": response, "reward": reward, **info,
                 "status": graded["status"], "canonical_key": graded["canonical_key"]}
            )  # fmt: skip
            print(f"{record['id']:40} reward={reward:.1f} status={graded['status']:10} {info['endpoint']}")
    return rows


if __name__ == "__main__":
    main()
