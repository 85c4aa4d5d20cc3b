"""verl and TRL rollout dumps written the way their writer code writes them, line by line.

Nothing here is modebench code: it is the trainers' logging path, reproduced with a real
``transformers`` tokenizer so that prompts reach the dump exactly as a training run puts them there.

* **Tokenizer** — a byte-level BPE (``tokenizers``) whose role markers are *added special tokens*,
  wrapped in ``transformers.PreTrainedTokenizerFast`` with the model family's real chat template
  (Qwen2.5-Instruct's and Meta-Llama-3-Instruct's ``chat_template``, their non-tool branch). Built
  from this config in memory: nothing is downloaded.
* **verl** — ``verl/utils/dataset/rl_dataset.py`` ``RLHFDataset.__getitem__``: the row's
  ``prompt`` messages → ``tokenizer.apply_chat_template(messages, add_generation_prompt=True,
  tokenize=False)`` → ``tokenizer(raw_prompt, add_special_tokens=False)`` → left-padded with the pad
  token (``verl_F.postprocess_data``); ``DataProto.repeat(rollout.n, interleave=True)``; then
  ``verl/trainer/ppo/ray_trainer.py`` ``RayPPOTrainer._log_rollout_data``:
  ``inputs = tokenizer.batch_decode(batch.batch["prompts"], skip_special_tokens=True)``,
  ``outputs = tokenizer.batch_decode(batch.batch["responses"], skip_special_tokens=True)``,
  ``sample_gts = [item.non_tensor_batch.get("reward_model", {}).get("ground_truth")]`` and
  ``RayPPOTrainer._dump_generations``: ``{global_steps}.jsonl`` with one JSON line per rollout,
  keys ``input``, ``output``, ``gts``, ``score``, ``step`` and each reward-extra key
  (``json.dumps(entry, ensure_ascii=False)``, lines joined by ``"\\n"`` plus a final newline).
* **TRL** — ``trl/trainer/grpo_trainer.py``: ``RepeatSampler`` yields each prompt
  ``num_generations`` times in a row; ``_generate_and_score_completions``:
  ``maybe_apply_chat_template(example, processing_class)["prompt"]`` → tokenized with
  ``add_special_tokens=False``, left-padded; ``prompts_text = processing_class.batch_decode(prompt_ids,
  skip_special_tokens=True)``, ``completions_text = processing_class.batch_decode(completion_ids,
  skip_special_tokens=True)``; ``self._logs`` collects them with the rewards and advantages; and
  ``GRPOTrainer.log``: ``pd.DataFrame({"step": [str(global_step)] * n, "prompt": …, "completion": …,
  **rewards, **extra, "advantage": …}).to_parquet(output_dir / "completions" /
  f"completions_{global_step:05d}.parquet")``.

Run as a script to write both dumps of the bundled ``level1_countdown`` split:
``python tests/ingest/writers/rollout_dumps.py OUT_DIR``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

# Meta-Llama-3-8B-Instruct, tokenizer_config.json "chat_template".
LLAMA3_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

# Qwen2.5-*-Instruct, tokenizer_config.json "chat_template": the branch without tools.
QWEN25_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    '{%- if (message.role == "user") or (message.role == "system" and not loop.first) '
    'or (message.role == "assistant" and not message.tool_calls) %}'
    "{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"
)

FAMILIES: dict[str, dict[str, Any]] = {
    "qwen2.5": {
        "template": QWEN25_TEMPLATE,
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        "tokens": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    },
    "llama3": {
        "template": LLAMA3_TEMPLATE,
        "special": [
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
        ],
        # verl's hf_tokenizer sets a missing pad token to the eos token
        "tokens": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "pad_token": "<|eot_id|>"},
    },
}


def chat_tokenizer(family: str) -> Any:
    """A byte-level BPE tokenizer with the family's role markers as special tokens and its real
    chat template (every byte is a token; decoding reproduces the text)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    spec = FAMILIES[family]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {char: index for index, char in enumerate(sorted(alphabet))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(list(spec["special"]))
    return PreTrainedTokenizerFast(tokenizer_object=backend, chat_template=spec["template"], **spec["tokens"])


def _left_pad(ids: list[int], length: int, pad: int) -> list[int]:
    return [pad] * (length - len(ids)) + ids


def _draws(request: dict[str, Any], step: int, n: int) -> list[str]:
    """n distinct model outputs for a prompt: boxed expressions, some of them the same mode."""
    user = request["messages"][-1]["content"]
    numbers = user.split("[", 1)[1].split("]", 1)[0].split(", ") if "[" in user else ["1", "2"]
    ops = ["+", "-", "*", "+"]
    out = []
    for draw in range(n):
        op = ops[(draw + step) % len(ops)]
        out.append(f"Step {step} draw {draw}: \\boxed{{{op.join(numbers)}}}")
    return out


def write_verl(requests: list[dict[str, Any]], family: str, out: Path, steps: int = 2, n: int = 4) -> Path:
    """``trainer.rollout_data_dir`` of ``steps`` training steps, each over all ``requests``."""
    tokenizer = chat_tokenizer(family)
    out.mkdir(parents=True, exist_ok=True)
    for global_steps in range(1, steps + 1):
        # RLHFDataset.__getitem__: chat template, then token ids without special tokens added
        rows = []
        for request in requests:
            raw_prompt = tokenizer.apply_chat_template(
                request["messages"], add_generation_prompt=True, tokenize=False
            )
            rows.append((request, tokenizer(raw_prompt, add_special_tokens=False)["input_ids"]))
        max_prompt_length = max(len(ids) for _, ids in rows)
        prompts, responses, gts, scores = [], [], [], []
        # DataProto.repeat(repeat_times=n, interleave=True): each prompt's n rollouts in a row
        for request, ids in rows:
            padded = _left_pad(ids, max_prompt_length, tokenizer.pad_token_id)
            for text in _draws(request, global_steps, n):
                prompts.append(padded)
                # the response ids end with eos and right padding, as the rollout returns them
                response = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                responses.append(response + [tokenizer.pad_token_id] * 3)
                gts.append({"prompt_id": request["id"], "target": None})
                scores.append(0.0)
        # RayPPOTrainer._log_rollout_data
        inputs = tokenizer.batch_decode(prompts, skip_special_tokens=True)
        outputs = tokenizer.batch_decode(responses, skip_special_tokens=True)
        reward_extra_infos_dict = {"acc": [False] * len(inputs)}
        # RayPPOTrainer._dump_generations
        filename = os.path.join(out, f"{global_steps}.jsonl")
        count = len(inputs)
        base_data: dict[str, list[Any]] = {
            "input": inputs,
            "output": outputs,
            "gts": gts,
            "score": scores,
            "step": [global_steps] * count,
        }
        for key, value in reward_extra_infos_dict.items():
            if len(value) == count:
                base_data[key] = value
        lines = []
        for i in range(count):
            entry = {key: value[i] for key, value in base_data.items()}
            lines.append(json.dumps(entry, ensure_ascii=False))
        with open(filename, "w") as handle:
            handle.write("\n".join(lines) + "\n")
    return out


def write_trl(requests: list[dict[str, Any]], family: str, out: Path, steps: int = 2, n: int = 4) -> Path:
    """A GRPO ``output_dir`` with ``completions/completions_{step:05d}.parquet`` per logged step."""
    import pandas as pd

    tokenizer = chat_tokenizer(family)
    (out / "completions").mkdir(parents=True, exist_ok=True)
    for global_step in range(1, steps + 1):
        logs: dict[str, Any] = {
            "prompt": [],
            "completion": [],
            "rewards": {"correctness": []},
            "extra": {"prompt_id": []},
            "advantages": [],
        }
        # RepeatSampler: each prompt num_generations times in a row
        inputs = [request for request in requests for _ in range(n)]
        # maybe_apply_chat_template(example, processing_class)["prompt"]
        prompts_text = [
            tokenizer.apply_chat_template(r["messages"], tokenize=False, add_generation_prompt=True)
            for r in inputs
        ]
        encoded = tokenizer(prompts_text, add_special_tokens=False)["input_ids"]
        width = max(len(ids) for ids in encoded)
        prompt_ids = [_left_pad(ids, width, tokenizer.pad_token_id) for ids in encoded]
        completions = [text for request in requests for text in _draws(request, global_step, n)]
        completion_ids = [
            tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            for text in completions
        ]
        prompts_text = tokenizer.batch_decode(prompt_ids, skip_special_tokens=True)
        completions_text = tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
        logs["prompt"].extend(prompts_text)
        logs["completion"].extend(completions_text)
        logs["rewards"]["correctness"].extend([0.0] * len(inputs))
        logs["extra"]["prompt_id"].extend(r["id"] for r in inputs)
        logs["advantages"].extend([0.0] * len(inputs))
        # GRPOTrainer.log
        table = {
            "step": [str(global_step)] * len(logs["prompt"]),
            "prompt": logs["prompt"],
            "completion": logs["completion"],
            **logs["rewards"],
            **logs["extra"],
            "advantage": logs["advantages"],
        }
        df_base = pd.DataFrame(table)
        df_base.to_parquet(os.path.join(out, "completions", f"completions_{global_step:05d}.parquet"))
    return out


def bundled_requests() -> list[dict[str, Any]]:
    import tempfile

    from modebench.cli import main

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "requests.jsonl"
        argv = ["prepare", "--registry", "bundled", "--config", "level1_countdown", "--output", str(path)]
        if main(argv) != 0:
            raise SystemExit("prepare failed")
        return [json.loads(line) for line in path.read_text().splitlines()]


if __name__ == "__main__":
    target = Path(sys.argv[1])
    requests = bundled_requests()[:6]
    for family in FAMILIES:
        write_verl(requests, family, target / f"verl-{family}")
        write_trl(requests, family, target / f"trl-{family}")
    print(target)
