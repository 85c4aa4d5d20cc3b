"""The installed verl's own reward managers grading with modebench as the custom reward function.

A real ``DataProto`` is built with a tokenizer made here (no download); the batch mixes modebench
rows, gsm8k rows (``openai/gsm8k``, which verl's ``default_compute_score`` scores) and a 200 KB
completion (over the 131,072-character cap: ``resource_limit``). The reward function is loaded
the way verl loads it: ``verl.trainer.ppo.reward.get_custom_reward_fn`` reading
``reward.custom_reward_function.path/name/reward_kwargs`` and importing
``examples/rl/verl_reward.py`` with ``verl.utils.import_utils.load_extern_object``. Driven:

* ``verl.workers.reward_manager.naive.NaiveRewardManager`` and
  ``verl.workers.reward_manager.batch.BatchRewardManager``;
* the asynchronous reward loop: ``verl.experimental.reward_loop.reward_loop.RewardLoopWorker``
  (the class Ray runs as an actor, used here in-process) with its naive manager, its batch
  gathered by ``RewardLoopWorker.compute_score_batch`` and assembled as
  ``RewardLoopManager.compute_rm_score`` does (followed line by line below: that method needs a
  Ray cluster);
* verl's validation metrics (``verl.trainer.ppo.metric_utils.process_validation_metrics``): the
  numeric per-response fields become metrics, the strings are left out;
* verl up to 0.8's retry (``verl/trainer/ppo/reward.py``, ``compute_reward`` at verl commit
  b178a3cd56f58b2d502255daba591e92833930a7, followed line by line below): it calls the reward
  manager again outside its ``try``.

Needs verl (``pip install -e '.[rl,verl]'`` after torch's CPU build). Skipped when it is missing,
except in CI (``CI=true``), where a missing package fails.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if os.environ.get("CI") == "true":
    import verl  # noqa: F401  # in CI a missing verl is a failure, never a skip
else:
    pytest.importorskip("verl", reason="needs verl: pip install torch==2.13.0 && pip install -e '.[rl,verl]'")

import torch
from omegaconf import OmegaConf
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
from verl.trainer.ppo.metric_utils import process_validation_metrics
from verl.trainer.ppo.reward import get_custom_reward_fn
from verl.utils.ray_utils import get_event_loop
from verl.utils.reward_score import default_compute_score
from verl.workers.reward_manager.batch import BatchRewardManager
from verl.workers.reward_manager.naive import NaiveRewardManager

from modebench.api import Task, grade
from modebench.domains import plugin
from modebench.rl import UnscorableCompletion, verl_rows
from modebench.rl import verl as mb_verl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl" / "verl_reward.py"
SPECIAL = ["[UNK]", "[PAD]", "<|end|>", "<|user|>"]
PIECE = "x" * 1999
LONG = " ".join([PIECE] * 100)  # a 200 KB completion (100 tokens): over the 131,072-character cap
GSM8K = [("openai/gsm8k", "#### 42", "42"), ("openai/gsm8k", "#### 41", "42")]


@pytest.fixture(autouse=True)
def fresh_verl_state():
    mb_verl.reset()  # pools, seen modes, memo: each test starts as a new verl process would
    yield
    mb_verl.reset()


@pytest.fixture(scope="module")
def batch() -> list[tuple[str, str, str, dict[str, Any], str]]:
    """(data_source, ground_truth, response, extra_info, kind) rows of the mixed batch."""
    out = []
    for config in ("level1_countdown", "level1_graph_coloring"):
        for row in verl_rows(config, registry="bundled", limit=2):
            info = row["extra_info"]
            truth = row["reward_model"]["ground_truth"]
            witnesses = plugin(info["domain"]).witnesses(info["level"], json.loads(truth))
            for text in [witnesses[0], witnesses[-1], "not a solution"]:
                out.append((row["data_source"], truth, text, dict(info), "modebench"))
    first = verl_rows("level1_countdown", registry="bundled", limit=1)[0]
    out.insert(
        3,
        (
            first["data_source"],
            first["reward_model"]["ground_truth"],
            LONG,
            dict(first["extra_info"]),
            "long",
        ),
    )
    for position, (source, text, truth) in zip((1, 7), GSM8K):
        out.insert(position, (source, truth, text, {"split": "test", "index": position}, "gsm8k"))
    return out


def build_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(SPECIAL)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|end|>"
    )
    # Each whole response is one token, decoded exactly (the long one is 100 tokens of PIECE).
    tokenizer.add_tokens(sorted({text for text in texts if text != LONG} | {PIECE}))
    return tokenizer


@pytest.fixture(scope="module")
def tokenizer(batch) -> PreTrainedTokenizerFast:
    return build_tokenizer([text for _, _, text, _, _ in batch])


def data_proto(batch, tokenizer) -> DataProto:
    """A rollout batch as verl's trainer hands it to the reward managers: left-padded prompts,
    right-padded responses, one attention mask over both, and the dataset's non-tensor columns."""
    user = tokenizer.convert_tokens_to_ids("<|user|>")
    responses = [tokenizer(text, add_special_tokens=False)["input_ids"] for _, _, text, _, _ in batch]
    assert sorted({len(ids) for ids in responses}) == [1, 100]
    width = max(len(ids) for ids in responses)
    pad = tokenizer.pad_token_id
    prompts = torch.tensor([[pad, user] for _ in batch])
    response = torch.tensor([ids + [pad] * (width - len(ids)) for ids in responses])
    attention = torch.tensor([[0, 1] + [1] * len(ids) + [0] * (width - len(ids)) for ids in responses])
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": response,
            "input_ids": torch.cat([prompts, response], dim=1),
            "attention_mask": attention,
        },
        non_tensors={
            "data_source": np.array([source for source, *_ in batch], dtype=object),
            "reward_model": np.array(
                [{"style": "rule", "ground_truth": truth} for _, truth, *_ in batch], dtype=object
            ),
            "extra_info": np.array([dict(info) for *_, info, _ in batch], dtype=object),
            "uid": np.array(
                [f"{source}/{info.get('prompt_id', info['index'])}" for source, _, _, info, _ in batch],
                dtype=object,
            ),
        },
    )


def config(name: str, tmp_path: Path | None = None, **reward_kwargs: Any) -> Any:
    reward = {
        "custom_reward_function": {"path": str(EXAMPLE), "name": name, "reward_kwargs": reward_kwargs},
        "reward_manager": {"source": "register", "name": "naive"},
        "reward_model": {"enable": False},
    }
    tokenizer_path = None if tmp_path is None else str(tmp_path)
    return OmegaConf.create(
        {
            "reward": reward,
            "actor_rollout_ref": {"model": {"tokenizer_path": tokenizer_path, "path": tokenizer_path}},
        }
    )


def expected(batch) -> list[tuple[float, str]]:
    """(reward, status) per row: grade() for modebench rows, verl's default for gsm8k rows."""
    out = []
    for source, truth, text, info, kind in batch:
        if kind == "gsm8k":
            out.append((float(default_compute_score(source, text, truth)), ""))
            continue
        result = grade(Task(info["prompt_id"], info["level"], info["domain"], "p", json.loads(truth)), text)
        out.append((1.0 if result["verified"] else 0.0, result["status"]))
    return out


def check(batch, rewards: list[float], extra: dict[str, list[Any]]) -> None:
    want = expected(batch)
    assert rewards == [reward for reward, _ in want]
    assert set(extra) == set(mb_verl.SCORE_KEYS)
    assert all(len(values) == len(batch) for values in extra.values())
    assert list(extra["status"]) == [status for _, status in want]
    kinds = [kind for *_, kind in batch]
    long_row = kinds.index("long")
    # The long completion: score 0, counted unscorable, its status kept.
    assert extra["status"][long_row] == "resource_limit" and rewards[long_row] == 0.0
    assert [extra["unscorable"][row] for row, kind in enumerate(kinds) if kind != "gsm8k"] == [
        1.0 if kind == "long" else 0.0 for kind in kinds if kind != "gsm8k"
    ]
    # The gsm8k rows were scored by verl's default_compute_score: 1.0 for "#### 42", 0.0 for 41.
    assert [rewards[row] for row, kind in enumerate(kinds) if kind == "gsm8k"] == [1.0, 0.0]
    assert [extra["unscorable"][row] for row, kind in enumerate(kinds) if kind == "gsm8k"] == [None, None]
    assert 0 < sum(rewards) < len(rewards)


def last_token_rewards(reward_tensor: torch.Tensor, data: DataProto) -> list[float]:
    prompt_length = data.batch["prompts"].shape[-1]
    lengths = data.batch["attention_mask"][:, prompt_length:].sum(dim=-1)
    assert float(reward_tensor.sum()) == pytest.approx(
        sum(float(reward_tensor[i, lengths[i] - 1]) for i in range(len(data)))
    )
    return [float(reward_tensor[i, lengths[i] - 1]) for i in range(len(data))]


def test_naive_reward_manager_mixed_batch(batch, tokenizer):
    data = data_proto(batch, tokenizer)
    manager = NaiveRewardManager(
        tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score"))
    )
    out = manager(data, return_dict=True)
    check(batch, last_token_rewards(out["reward_tensor"], data), out["reward_extra_info"])


def test_batch_reward_manager_mixed_batch(batch, tokenizer):
    data = data_proto(batch, tokenizer)
    fn = get_custom_reward_fn(config("compute_score_batch", workers=2))
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=fn)
    out = manager(data, return_dict=True)
    rewards = last_token_rewards(out["reward_tensor"], data)
    check(batch, rewards, out["reward_extra_info"])
    assert data.batch["acc"].tolist() == rewards  # BatchRewardManager keeps the scores as "acc"


@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_async_reward_loop_mixed_batch(batch, tokenizer, tmp_path, name):
    tokenizer.save_pretrained(tmp_path)  # the worker loads its tokenizer from the model path
    data = data_proto(batch, tokenizer)
    worker = RewardLoopWorker(config(name, tmp_path))
    outputs = get_event_loop().run_until_complete(worker.compute_score_batch(data))
    # RewardLoopManager.compute_rm_score, after ray.get of the workers' outputs:
    scores = [item["reward_score"] for item in outputs]
    rm_scores = worker.reward_manager.assemble_rm_scores(data, scores)
    reward_extra_infos = [output.get("reward_extra_info", {}) for output in outputs]
    reward_extra_keys = list(reward_extra_infos[0].keys())
    non_tensor_batch = {}
    for key in reward_extra_keys:
        non_tensor_batch[key] = np.array([info[key] for info in reward_extra_infos])
    check(batch, last_token_rewards(rm_scores, data), {k: list(v) for k, v in non_tensor_batch.items()})
    coalescer = mb_verl._pool(1)[1]
    modebench_rows = sum(1 for *_, kind in batch if kind != "gsm8k")
    assert coalescer.graded == modebench_rows
    if name == "compute_score_async":  # awaited on the loop: the burst is coalesced
        assert coalescer.batches < modebench_rows


def test_numeric_fields_reach_verls_metrics(batch, tokenizer):
    data = data_proto(batch, tokenizer)
    manager = NaiveRewardManager(
        tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score"))
    )
    out = manager(data, return_dict=True)
    infos = dict(out["reward_extra_info"])
    metrics = process_validation_metrics(
        data.non_tensor_batch["data_source"], data.non_tensor_batch["uid"], infos
    )
    source = "modebench/level1_countdown"
    assert {"score", "acc", "verified", "new_mode", "unscorable"} <= set(metrics[source])
    assert "status" not in metrics[source] and "mode_key" not in metrics[source]
    # verl's mean@n: per prompt (uid) the mean of its n values, averaged over the prompts with n
    # completions. The long row is one of the 4 completions of the first countdown prompt.
    per_prompt: dict[str, list[float]] = {}
    for row, item in enumerate(batch):
        if item[0] == source:
            per_prompt.setdefault(item[3]["prompt_id"], []).append(infos["unscorable"][row])
    by_n: dict[int, list[float]] = {}
    for values in per_prompt.values():
        by_n.setdefault(len(values), []).append(float(np.mean(values)))
    assert {f"mean@{n}": float(np.mean(means)) for n, means in by_n.items()} == {
        name: value for name, value in metrics[source]["unscorable"].items() if name.startswith("mean@")
    }
    assert metrics[source]["unscorable"]["mean@4"] == 0.25
    # gsm8k rows carry None in modebench's fields: verl leaves them out of those metrics.
    assert "unscorable" not in metrics["openai/gsm8k"] and "acc" in metrics["openai/gsm8k"]


def compute_reward(data: DataProto, reward_fn: Any) -> tuple[torch.Tensor, dict[str, Any]]:
    # verl/trainer/ppo/reward.py, compute_reward (verl <= 0.8), line by line.
    try:
        reward_result = reward_fn(data, return_dict=True)
        reward_tensor = reward_result["reward_tensor"]
        reward_extra_infos_dict = reward_result.get("reward_extra_info", {})
    except Exception as e:
        print(f"Error in reward_fn: {e}")
        reward_tensor = reward_fn(data)
        reward_extra_infos_dict = {}
    return reward_tensor, reward_extra_infos_dict


class Counting:
    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.calls = 0

    def __call__(self, data: DataProto, return_dict: bool = False) -> Any:
        self.calls += 1
        return self.manager(data, return_dict=return_dict)


def test_default_policy_never_raises_into_verls_retry(batch, tokenizer):
    data = data_proto(batch, tokenizer)
    manager = Counting(
        NaiveRewardManager(
            tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score"))
        )
    )
    reward_tensor, extra = compute_reward(data, manager)
    assert manager.calls == 1 and extra["unscorable"].count(1.0) == 1


@pytest.mark.parametrize("name", ["compute_score", "compute_score_batch"])
def test_retry_after_raise_grades_nothing_again(batch, tokenizer, name):
    data = data_proto(batch, tokenizer)
    fn = get_custom_reward_fn(config(name, unscorable="raise"))
    cls = NaiveRewardManager if name == "compute_score" else BatchRewardManager
    manager = Counting(cls(tokenizer, num_examine=0, compute_score=fn))
    grader, coalescer = mb_verl._pool(1)
    sent: list[int] = []
    original = grader.grade

    def spy(completions, **options):
        sent.append(len(completions))
        return original(completions, **options)

    grader.grade = spy  # type: ignore[method-assign]
    with pytest.raises(UnscorableCompletion, match="resource_limit"):
        compute_reward(data, manager)
    assert manager.calls == 2  # verl called the manager again outside its try: and it raised again
    first = sum(1 for *_, kind in batch[: [k for *_, k in batch].index("long") + 1] if kind != "gsm8k")
    # Everything sent to the pool was sent by the first call: the retry was answered from the
    # memo (rows before the failure) and the recorded failure.
    assert sum(sent) == (first if name == "compute_score" else sum(1 for *_, k in batch if k != "gsm8k"))


def test_mask_is_refused_for_verl():
    with pytest.raises(ValueError, match="cannot be used with verl"):
        mb_verl.compute_score("modebench/level1_countdown", "x", "{}", {}, unscorable="mask")


def test_async_burst_is_coalesced(batch):
    rows = [item for item in batch if item[4] == "modebench"]

    async def burst() -> list[dict[str, Any]]:
        calls = []
        for copy in range(256):  # distinct texts: nothing answered from the memo
            for source, truth, text, info, _ in rows:
                calls.append(
                    mb_verl.compute_score_async(source, f"{text}{' ' * (copy % 3)}", truth, dict(info))
                )
        return await asyncio.gather(*calls)

    results = asyncio.run(burst())
    coalescer = mb_verl._pool(1)[1]
    assert len(results) == 256 * len(rows) and coalescer.graded == len(results)
    assert coalescer.batches <= 3  # the first call alone, then everything queued meanwhile
