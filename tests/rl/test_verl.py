"""verl: compute_score and compute_score_batch called exactly as verl's reward managers call them,
on rows in verl's format from the bundled release; both agree with grade().

Call sites read from volcengine/verl at commit b178a3cd56f58b2d502255daba591e92833930a7:

* ``verl/trainer/ppo/reward.py``, ``get_custom_reward_fn``: the function named by
  ``custom_reward_function.path/name`` is loaded and wrapped as
  ``partial(_call_with_kwargs, raw_fn, reward_kwargs)``; ``_call_with_kwargs`` calls
  ``raw_fn(*args, **{**kwargs, **extra_kwargs})`` (``reward_kwargs`` take precedence).
* ``verl/workers/reward_manager/naive.py``, ``NaiveRewardManager.__call__``: per item,
  ``extra_info = data_item.non_tensor_batch.get("extra_info", {})``, then
  ``extra_info["num_turns"] = num_turns`` and ``extra_info["rollout_reward_scores"] = ...``, then
  ``self.compute_score(data_source=data_source, solution_str=response_str,
  ground_truth=ground_truth, extra_info=extra_info)`` with ``ground_truth =
  data_item.non_tensor_batch["reward_model"]["ground_truth"]``; a dict result gives
  ``reward = score["score"]`` and every key is appended to ``reward_extra_info``.
* ``verl/workers/reward_manager/batch.py``, ``BatchRewardManager.verify``:
  ``data_sources = data.non_tensor_batch[self.reward_fn_key]`` (a numpy object array),
  ``ground_truths = [item.non_tensor_batch["reward_model"].get("ground_truth", None) ...]``,
  ``extras = data.non_tensor_batch.get("extra_info", ...)`` with ``rollout_reward_scores`` set,
  then ``self.compute_score(data_sources=..., solution_strs=..., ground_truths=...,
  extra_infos=extras, **self.reward_kwargs)``.
* Row format: ``examples/data_preprocess/gsm8k.py`` (``data_source``, ``prompt``, ``ability``,
  ``reward_model: {"style": "rule", "ground_truth": ...}``, ``extra_info``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import partial
from typing import Any

import numpy as np
import pytest

from modebench.api import Task, grade, load_tasks, make_prompt
from modebench.domains import plugin
from modebench.rl import RewardInputError, compute_score, compute_score_batch, verl_rows

CONFIGS = ("level1_countdown", "level2_graph_coloring", "level1_pantry_plan", "level1_python_factors")


def _call_with_kwargs(raw_fn: Any, extra_kwargs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    # verl/trainer/ppo/reward.py: extra kwargs (custom_reward_function.reward_kwargs) win.
    merged_kwargs = {**kwargs, **extra_kwargs}
    return raw_fn(*args, **merged_kwargs)


@pytest.fixture(scope="module")
def items() -> list[tuple[dict[str, Any], str]]:
    """(verl row, response) pairs: witnesses of several modes, a repeat and failures per task."""
    out = []
    for config in CONFIGS:
        for row in verl_rows(config, registry="bundled", limit=3):
            info = row["extra_info"]
            witnesses = plugin(info["domain"]).witnesses(
                info["level"], json.loads(row["reward_model"]["ground_truth"])
            )
            for text in [*witnesses[:3], witnesses[0], "not a solution", ""]:
                out.append((row, text))
    return out


def expected(row: dict[str, Any], text: str) -> dict[str, Any]:
    info = row["extra_info"]
    answer = json.loads(row["reward_model"]["ground_truth"])
    return dict(grade(Task(info["prompt_id"], info["level"], info["domain"], "p", answer), text))


def test_rows_have_verls_format():
    row = verl_rows("level1_countdown", registry="bundled", limit=1)[0]
    assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert row["data_source"] == "modebench/level1_countdown"
    assert row["reward_model"]["style"] == "rule" and isinstance(row["reward_model"]["ground_truth"], str)
    task = next(load_tasks("level1_countdown", registry="bundled"))
    assert row["prompt"] == [dict(message) for message in make_prompt(task)]
    assert json.loads(row["reward_model"]["ground_truth"]) == task.answer


def test_naive_reward_manager_call_site_agrees_with_grade(items):
    fn = partial(_call_with_kwargs, compute_score, {"workers": 1})  # get_custom_reward_fn's wrapper
    reward_extra_info: dict[str, list[Any]] = defaultdict(list)
    rewards = []
    for position, (row, text) in enumerate(items):
        non_tensor_batch = {"data_source": row["data_source"], "reward_model": row["reward_model"],
                            "extra_info": dict(row["extra_info"])}  # fmt: skip
        if position % 2:  # rows written without level/domain: read from the data source
            non_tensor_batch["extra_info"] = {"index": position}
        extra_info = non_tensor_batch.get("extra_info", {})
        extra_info["num_turns"] = None
        extra_info["rollout_reward_scores"] = {}
        score = fn(
            data_source=non_tensor_batch["data_source"],
            solution_str=text,
            ground_truth=non_tensor_batch["reward_model"]["ground_truth"],
            extra_info=extra_info,
        )
        if isinstance(score, dict):
            reward = score["score"]
            for key, value in score.items():
                reward_extra_info[key].append(value)
        rewards.append(reward)
    want = [expected(row, text) for row, text in items]
    assert rewards == [1.0 if w["verified"] else 0.0 for w in want]
    assert reward_extra_info["status"] == [w["status"] for w in want]
    assert reward_extra_info["mode_key"] == [w["canonical_key"] or "" for w in want]
    assert reward_extra_info["acc"] == [w["verified"] for w in want]
    assert 0 < sum(rewards) < len(rewards)


def test_batch_reward_manager_call_site_agrees_with_grade(items):
    reward_kwargs = {"workers": 2}
    non_tensor_batch = {
        "data_source": np.array([row["data_source"] for row, _ in items], dtype=object),
        "reward_model": np.array([row["reward_model"] for row, _ in items], dtype=object),
        "extra_info": np.array([dict(row["extra_info"]) for row, _ in items], dtype=object),
    }
    responses_str = [text for _, text in items]
    ground_truths = [item.get("ground_truth", None) for item in non_tensor_batch["reward_model"]]
    data_sources = non_tensor_batch["data_source"]
    rollout_reward_scores = [{} for _ in range(len(items))]
    extras = non_tensor_batch.get("extra_info", [{} for _ in range(len(items))])
    for i in range(len(items)):
        extras[i]["rollout_reward_scores"] = rollout_reward_scores[i]
    scores = compute_score_batch(
        data_sources=data_sources,
        solution_strs=responses_str,
        ground_truths=ground_truths,
        extra_infos=extras,
        **reward_kwargs,
    )
    want = [expected(row, text) for row, text in items]
    assert [s["score"] for s in scores] == [1.0 if w["verified"] else 0.0 for w in want]
    assert [s["mode_key"] for s in scores] == [w["canonical_key"] or "" for w in want]


def test_rows_of_unknown_sources_are_named():
    # Not modebench's (no level/domain) and unknown to verl's default_compute_score, or verl not
    # installed: either way the row and its data source are named.
    with pytest.raises(RewardInputError, match="row 0: data source 'nowhere/x' is not modebench's"):
        compute_score("nowhere/x", "x", "{}", {})
    with pytest.raises(RewardInputError, match="row 1: data source 'nowhere/x' is not modebench's"):
        row = verl_rows("level1_countdown", registry="bundled", limit=1)[0]
        truth = row["reward_model"]["ground_truth"]
        compute_score_batch([row["data_source"], "nowhere/x"], ["x", "y"], [truth, "{}"], None)
    with pytest.raises(ValueError, match="differ in length"):
        compute_score_batch(["a"], ["x", "y"], ["{}"], None)
