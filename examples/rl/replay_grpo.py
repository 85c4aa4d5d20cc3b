"""GRPO, GRPO + Re:Max verified replay, and GRPO + the compute-only control, side by side, offline.

Three arms of the same experiment with the same seeds, each a ``trl`` GRPO run on CPU:

* ``grpo`` — ``trl.GRPOTrainer``;
* ``replay`` — ``modebench.rl.ReplayGRPOTrainer``: at each optimizer step, Re:Max's replay loss
  (alpha × mean token NLL of one banked prompt group's verified exemplars) from a ``ReMaxBank``;
* ``control`` — the same trainer with ``mode="compute_only"``: the same replay forward and
  backward passes with zero gradient.

The training prompts are a **training split drawn with the project's own generators** (each
domain's ``generate(level, rng)``, as ``modebench.suite.build`` draws a release), kept disjoint
from the bundled evaluation split. Every optimizer step writes a step receipt (``RolloutRecorder(receipts_dir=…)``)
and the three arms' receipts become one ``modebench trajectory`` page (accuracy, pass@n,
E[distinct@n] and PCMD over steps, one line per arm): ``OUT/trajectory.html``.

Without ``--model`` the policy is a tiny randomly initialised Llama built from a config with a
word-level tokenizer whose vocabulary holds a few whole answers (the tasks' witnesses and wrong
ones) as single tokens, so completions are a mix of verified modes, wrong and malformed answers;
a small bias on the end-of-sequence token (``sequence_bias``) makes most completions end inside
the generation budget, which Re:Max's bank requires. Nothing is downloaded. With ``--model NAME``
(a Hugging Face checkpoint name or directory) the arms train that model with its own tokenizer.

**What it does not claim.** Nothing about the effect of replay: on a tiny random model a few dozen
steps show that the experiment runs end to end and what a researcher will look at with a real
model, not whether replay helps. Read the page as the three arms' curves, not as evidence.

    python examples/rl/replay_grpo.py --steps 30 --output runs/replay
    python examples/rl/replay_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --steps 200 --output runs/qwen

Needs the ``rl`` extra (``pip install torch==2.13.0`` first on CPU, then ``pip install -e '.[rl]'``)
and the ``plot`` extra for the page.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

ARMS = ("grpo", "replay", "control")
CONFIGS = ("level1_countdown", "level1_graph_coloring")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|> {{ message['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
SPECIAL = ["[UNK]", "[PAD]", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
WRONG = ["not a solution", "\\boxed{}", "\\boxed{0}"]


def training_rows(prompts_per_config: int, seed: int) -> list[dict[str, Any]]:
    """Trainer rows (``modebench.rl.trainer_rows``' columns) of a freshly generated training split:
    each configuration's domain generator (``plugin(domain).generate(level, rng)``, as
    ``modebench.suite.build.generate_rows`` draws a release) with ``Random(f"{seed}:{config}:train")``,
    keeping distinct problems absent from the bundled evaluation split."""
    from modebench.api import Task, load_tasks, make_prompt
    from modebench.domains import plugin
    from modebench.rl._engine import canonical_json
    from modebench.suite.build import parse_config

    rows = []
    for config in CONFIGS:
        level, domain = parse_config(config)
        evaluation = {task.problem for task in load_tasks(config, "eval", registry="bundled")}
        rng = random.Random(f"{seed}:{config}:train")
        seen: set[str] = set()
        for _ in range(1000 * prompts_per_config):
            if len(seen) == prompts_per_config:
                break
            generate = plugin(domain).generate
            if generate is None:  # every built-in domain has a generator; a plug-in may not
                raise RuntimeError(f"{config}: its domain has no generator")
            row = generate(level, rng)
            if row["problem"] in evaluation or row["problem"] in seen:
                continue  # never train on the evaluation split
            seen.add(row["problem"])
            answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
            task = Task(f"train/{config}/{len(seen) - 1}", level, cast(Any, domain), row["problem"], answer)
            rows.append({"prompt": [dict(m) for m in make_prompt(task)], "prompt_id": task.id, "level": level,
                         "domain": domain, "answer": canonical_json(answer)})  # fmt: skip
        if len(seen) < prompts_per_config:
            raise RuntimeError(
                f"{config}: fewer than {prompts_per_config} training problems outside the evaluation split"
            )
    return rows


def tiny_tokenizer(answers: Sequence[str]) -> Any:
    """A word-level tokenizer with a chat template; each answer in ``answers`` is one token."""
    from tokenizers import Tokenizer, models, pre_tokenizers  # type: ignore[import-untyped]
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(SPECIAL)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]  # untyped in transformers
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|end|>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL[3:]})
    tokenizer.add_tokens(sorted(set(answers)))  # whole answers, matched before splitting
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(tokenizer: Any, seed: int) -> Any:
    """A one-layer Llama with 16 hidden units, randomly initialised from ``seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    return LlamaForCausalLM(config)  # type: ignore[no-untyped-call]  # untyped in transformers


def tiny_answers(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The tiny tokenizer's answer tokens: up to three witnesses of each row, and wrong answers."""
    from modebench.domains import plugin

    answers = list(WRONG)
    for row in rows:
        witnesses = plugin(row["domain"]).witnesses
        if witnesses is not None:  # the built-in domains all certify witnesses
            answers += witnesses(row["level"], json.loads(row["answer"]))[:3]
    return answers


def build_arm(
    arm: str, rows: list[dict[str, Any]], options: argparse.Namespace, grader: Any
) -> tuple[Any, Any, Any]:
    """One arm's trainer, recorder and bank (None for ``grpo``), ready to train; every arm is built
    from the same seed, data and settings."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.trainer.grpo_config import GRPOConfig
    from trl.trainer.grpo_trainer import GRPOTrainer

    from modebench.rl import (
        ModebenchCallback,
        ReMaxBank,
        ReplayConfig,
        ReplayGRPOTrainer,
        RolloutRecorder,
        TRLReward,
    )

    folder = options.output / arm
    generation: dict[str, Any] = {}
    if options.model is None:
        tokenizer = tiny_tokenizer(tiny_answers(rows))
        model = tiny_model(tokenizer, options.seed)
        # End-of-sequence bias: most one-token answers then end inside the budget (see the docstring).
        generation = {"sequence_bias": [[[tokenizer.eos_token_id], options.eos_bias]]}
    else:
        tokenizer = AutoTokenizer.from_pretrained(options.model)
        model = AutoModelForCausalLM.from_pretrained(options.model)
    # The standard path: the recorder offers every graded training row — every rank's, with its
    # token ids and TRL's truncation flag — to the Re:Max bank, once; the replay trainer reads it.
    bank = None if arm == "grpo" else ReMaxBank(options.capacity)
    recorder = RolloutRecorder(
        bank=bank, receipts_dir=folder / "receipts", grader=grader, min_defined_prompts=1
    )
    args = GRPOConfig(
        output_dir=str(folder / "trainer"), per_device_train_batch_size=len(rows) * options.generations // 2,
        gradient_accumulation_steps=2, num_generations=options.generations,
        max_completion_length=options.max_completion_length, max_steps=options.steps, logging_steps=1,
        learning_rate=options.learning_rate, beta=0.0, report_to=[], save_strategy="no",
        use_cpu=options.model is None, bf16=False,
        seed=options.seed, data_seed=options.seed, temperature=1.0, dataloader_num_workers=0, disable_tqdm=True,
        generation_kwargs=generation or None,
    )  # fmt: skip
    common: dict[str, Any] = {
        "model": model, "args": args, "train_dataset": Dataset.from_list(rows), "processing_class": tokenizer,
    }  # fmt: skip
    reward = TRLReward(grader, recorder=recorder)
    if arm == "grpo":
        trainer = GRPOTrainer(reward_funcs=[reward], **common)
    else:
        mode = "replay" if arm == "replay" else "compute_only"
        replay = ReplayConfig(mode=mode, alpha=options.alpha, scaling=options.scaling)
        trainer = ReplayGRPOTrainer(reward_funcs=[reward], replay=replay, **common)  # the recorder's bank
    # Ahead of the reporters; hands the reward function TRL's end of a completion (the trainer's
    # eos ids and the pad token), from which each row's `truncated` flag follows.
    ModebenchCallback(recorder).attach(trainer)
    return trainer, recorder, bank


def run_arm(arm: str, rows: list[dict[str, Any]], options: argparse.Namespace, grader: Any) -> dict[str, Any]:
    """Train one arm; returns its trajectory runs (``STEP=RECEIPT``), replay counters and bank."""
    trainer, recorder, bank = build_arm(arm, rows, options, grader)
    folder = options.output / arm
    trainer.train()
    (folder / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1) + "\n")
    return {
        "runs": recorder.trajectory_runs(),
        "steps": trainer.state.global_step,
        "replay_forward_passes": getattr(trainer, "replay_forward_passes", 0),
        "replay_forward_tokens": getattr(trainer, "replay_forward_tokens", 0),
        "bank": None if bank is None else {**bank.diagnostics(), "offered": float(bank.offered)},
    }


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, required=True, help="a new directory for the three arms")
    parser.add_argument("--steps", type=int, default=30, help="optimizer steps per arm (default 30)")
    parser.add_argument("--model", help="a real checkpoint name or directory (default: a tiny random Llama)")
    parser.add_argument(
        "--prompts", type=int, default=2, help="training prompts per configuration (default 2)"
    )
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt (default 8)")
    parser.add_argument("--max-completion-length", type=int, default=None, help="default 3 (tiny) or 256")
    parser.add_argument("--alpha", type=float, default=0.1, help="replay coefficient (Re:Max's 0.1)")
    parser.add_argument("--scaling", choices=("per_rollout", "estimator", "none"), default="per_rollout")
    parser.add_argument("--capacity", type=int, default=16, help="exemplars per prompt (Re:Max's 16)")
    parser.add_argument("--learning-rate", type=float, default=None, help="default 1e-2 (tiny) or 1e-6")
    parser.add_argument(
        "--eos-bias", type=float, default=2.0, help="tiny model only: end-of-sequence logit bias"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--arms", default=",".join(ARMS), help="comma-separated subset of grpo,replay,control"
    )
    options = parser.parse_args(argv)
    if options.max_completion_length is None:
        options.max_completion_length = 3 if options.model is None else 256
    if options.learning_rate is None:
        options.learning_rate = 1e-2 if options.model is None else 1e-6
    options.arms = [arm for arm in options.arms.split(",") if arm]
    if not options.arms or set(options.arms) - set(ARMS):
        parser.error(f"--arms takes names among {', '.join(ARMS)}")
    return options


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    from modebench.api import trajectory_arms_html
    from modebench.rl import BatchGrader

    options.output.mkdir(parents=True)  # a new directory: receipts are written once
    random.seed(options.seed)
    rows = training_rows(options.prompts, options.seed)
    summary: dict[str, Any] = {"model": options.model or "tiny random Llama", "seed": options.seed,
                               "steps": options.steps, "prompts": [row["prompt_id"] for row in rows], "arms": {}}  # fmt: skip
    with BatchGrader(1) as grader:
        for arm in options.arms:
            summary["arms"][arm] = run_arm(arm, rows, options, grader)
            print(f"{arm}: {summary['arms'][arm]['steps']} steps", file=sys.stderr, flush=True)
    page = trajectory_arms_html(
        {arm: entry["runs"] for arm, entry in summary["arms"].items()},
        options.output / "trajectory.html",
        grading_cache=options.output / "grading-cache",
    )
    summary["page"] = page
    (options.output / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({"page": page["output"], "arms": list(summary["arms"])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
