"""examples/rl/openrlhf_reward.py called as OpenRLHF calls a ``--remote_rm_url`` Python file.

OpenRLHF 0.11.2 cannot be installed on a CPU-only machine beside verl (it requires
``flash-attn==2.8.3``, a CUDA build, ``deepspeed`` and ``transformers==5.15.0``, which verl 0.9.1
excludes), so its caller code is followed line by line here, read from the 0.11.2 wheel and from
``OpenRLHF/OpenRLHF`` at commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7 (identical in these
lines):

* ``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor.__init__``: the file is loaded with
  ``importlib.util.spec_from_file_location("reward_func", path)`` and ``reward_module.reward_func``
  kept (:func:`load`).
* ``SingleTurnAgentExecutor.execute``: ``query = hf_tokenizer.decode(observation_tokens,
  skip_special_tokens=False)`` with ``observation_tokens = prompt_token_ids + action_token_ids``
  and ``prompt_token_ids = hf_tokenizer(text=prompt, add_special_tokens=False)["input_ids"]``;
  then ``_fetch_rewards_via_func([query], [prompt], [label])`` (``asyncio.to_thread`` per chunk of
  one sample), ``rewards_info_list[0]``, ``scores`` falling back to ``rewards``,
  ``extra_logs or {}`` (:func:`execute`); many samples run at once (one ``execute`` per sample).
* ``openrlhf/datasets/prompts_dataset.py``, ``preprocess_data``: ``prompt =
  apply_chat_template(chat, tokenize=False, add_generation_prompt=True)``, ``label =
  data[label_key]``.
* ``openrlhf/trainer/ppo_utils/samples_generator.py``, ``_process_response_into_experience``:
  ``info["reward"] = torch.tensor([reward_val])``, ``info["score"] = torch.tensor([score_val])``,
  and per ``extra_logs`` item ``value.flatten()[0].item()`` for a tensor, then
  ``torch.tensor([value])`` (:func:`experience_info`).

The tokenizer and its chat template are built here (no download).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import torch  # in CI a missing rl package is a failure, never a skip
    import transformers  # noqa: F401
else:
    torch = pytest.importorskip(
        "torch", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )
    pytest.importorskip("transformers", reason="needs the rl extra")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from modebench.api import Task, grade
from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.domains import plugin
from modebench.rl import UnscorableCompletion
from modebench.rl.openrlhf import OpenRLHFReward, openrlhf_rows, response_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl" / "openrlhf_reward.py"
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|> {{ message['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
SPECIAL = ["<|system|>", "<|user|>", "<|assistant|>"]
LONG = "9" * 160_000  # 160 KB: over the 131,072-character cap


def load(path: Path) -> Any:
    # SingleTurnAgentExecutor.__init__
    spec = importlib.util.spec_from_file_location("reward_func", str(path))
    reward_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reward_module)
    return reward_module.reward_func


async def execute(reward_func: Any, tokenizer: Any, prompt: str, label: str, action: str) -> dict[str, Any]:
    """SingleTurnAgentExecutor.execute after generation, with ``action`` as the model's text."""
    prompt_token_ids = tokenizer(text=prompt, add_special_tokens=False, return_tensors="pt")["input_ids"][
        0
    ].tolist()
    action_token_ids = tokenizer(text=action, add_special_tokens=False)["input_ids"] + [
        tokenizer.eos_token_id
    ]
    observation_token_ids = prompt_token_ids + action_token_ids
    output = {"prompt": prompt, "label": label, "reward": None, "scores": None, "extra_logs": {}}
    query = tokenizer.decode(observation_token_ids, skip_special_tokens=False)
    assert query == prompt + action + "<|im_end|>"  # the byte-level tokenizer gives the text back
    # _fetch_rewards_via_func with batch_size = 1
    rewards_info_list = await asyncio.gather(asyncio.to_thread(reward_func, [query], [prompt], [label]))
    rewards_info = rewards_info_list[0] if rewards_info_list else None
    if rewards_info:
        score_value = rewards_info.get("scores")
        if score_value is None:
            score_value = rewards_info.get("rewards")
        output.update(
            reward=rewards_info.get("rewards"),
            scores=score_value,
            extra_logs=rewards_info.get("extra_logs") or {},
        )
    return output


def experience_info(response: dict[str, Any]) -> dict[str, Any]:
    # samples_generator._process_response_into_experience: the reward and log fields
    reward_val = response.get("reward", None)
    score_val = response.get("scores", None)
    info = {}
    if reward_val is not None:
        info["reward"] = torch.tensor([reward_val])
    if score_val is not None:
        info["score"] = torch.tensor([score_val])
    extra_logs = response.get("extra_logs", {})
    for key, value in extra_logs.items():
        if isinstance(value, torch.Tensor):
            value = value.flatten()[0].item()
        info[key] = torch.tensor([value])
    return info


@pytest.fixture(scope="module")
def samples() -> list[tuple[list[dict[str, str]], str, str]]:
    """(chat, label, action) per sample: witnesses, a repeat, failures and one over-long text."""
    out = []
    for config in ("level1_countdown", "level1_graph_coloring"):
        for row in openrlhf_rows(config, registry="bundled", limit=2):
            label = json.loads(row["label"])
            witnesses = plugin(label["domain"]).witnesses(label["level"], label["answer"])
            for text in [witnesses[0], witnesses[-1], witnesses[0], "not a solution"]:
                out.append((row["prompt"], row["label"], text))
    out.append((out[0][0], out[0][1], LONG))
    return out


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level tokenizer without merges (one token per byte, as GPT-2's alphabet): decoding
    gives back the exact text, as a real model's byte-level BPE does."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    backend = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(sorted(alphabet))}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|im_end|>")
    tok.add_special_tokens({"additional_special_tokens": SPECIAL})
    tok.chat_template = CHAT_TEMPLATE
    return tok


def expected(label: str, action: str) -> dict[str, Any]:
    fields = json.loads(label)
    return dict(
        grade(Task(fields["prompt_id"], fields["level"], fields["domain"], "p", fields["answer"]), action)
    )


def test_reward_file_as_openrlhf_calls_it(samples, tokenizer):
    reward_func = load(EXAMPLE)
    prompts = [
        tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        for chat, _, _ in samples
    ]

    async def rollout() -> list[dict[str, Any]]:  # one execute per sample, all at once
        return await asyncio.gather(
            *(
                execute(reward_func, tokenizer, prompt, label, action)
                for prompt, (_, label, action) in zip(prompts, samples)
            )
        )

    try:
        outputs = asyncio.run(rollout())
    finally:
        reward_func.close()
    infos = [experience_info(output) for output in outputs]
    want = [expected(label, action) for _, label, action in samples]
    assert [info["reward"].tolist() for info in infos] == [[1.0 if w["verified"] else 0.0] for w in want]
    assert [info["score"].tolist() for info in infos] == [info["reward"].tolist() for info in infos]
    assert [info["verified"].item() for info in infos] == [float(w["verified"]) for w in want]
    assert want[-1]["status"] == "resource_limit"  # the long text: reward 0, logged unscorable
    assert [info["unscorable"].item() for info in infos] == [0.0] * (len(samples) - 1) + [1.0]
    assert 0 < sum(info["reward"].item() for info in infos) < len(infos)
    # new_mode: 1 for the first verified completion of each (prompt, mode), whatever the order the
    # concurrent calls were graded in; the repeated witness is never new twice.
    firsts = {
        (json.loads(label)["prompt_id"], w["canonical_key"])
        for (_, label, _), w in zip(samples, want)
        if w["verified"]
    }
    assert sum(info["new_mode"].item() for info in infos) == len(firsts)


def test_response_is_the_query_after_the_prompt():
    assert (
        response_of(
            "<|user|> hi <|im_end|> <|assistant|> 42<|im_end|>", "<|user|> hi <|im_end|> <|assistant|> "
        )
        == "42"
    )
    assert response_of("system text 7</s>", "not in it") == "system text 7"
    assert response_of("P: a<|eot_id|><|end_of_text|>", "P: ") == "a"


def test_batched_call_and_policies(samples):
    rows = samples[:4] + samples[-1:]
    reward = OpenRLHFReward(workers=1)
    try:
        out = reward([action for _, _, action in rows], [""] * len(rows), [label for _, label, _ in rows])
    finally:
        reward.close()
    assert out["rewards"].tolist() == [
        1.0 if expected(label, action)["verified"] else 0.0 for _, label, action in rows
    ]
    assert out["extra_logs"]["unscorable"].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    strict = OpenRLHFReward(unscorable="raise")
    try:
        with pytest.raises(UnscorableCompletion, match="resource_limit"):
            strict([LONG], [""], [rows[0][1]])
    finally:
        strict.close()
    with pytest.raises(ValueError, match="cannot be used with OpenRLHF"):
        OpenRLHFReward(unscorable="mask")
    assert len(LONG) > MAX_RESPONSE_CHARS
