"""GRPO with TRL on a frozen modebench split: rewards, a verified-mode bank, live collapse metrics.

    pip install -e '.[rl]'          # after installing the torch build you want
    python examples/rl/trl_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --config level1_countdown \\
        --registry bundled --output grpo-run

The trainer's logs get ``modebench/<cell>/<metric>`` each step; every step's rollouts are written
as a receipt under ``<output>/modebench``, so ``modebench trajectory`` draws the collapse curve of
the run (the command is printed at the end). The bank is saved with each checkpoint. docs/rl.md.
"""

from __future__ import annotations

import argparse
import shlex

from trl.trainer.grpo_config import GRPOConfig
from trl.trainer.grpo_trainer import GRPOTrainer

from modebench.rl import (
    BatchGrader,
    ModeBank,
    ModebenchCallback,
    NoveltyBonus,
    RolloutRecorder,
    TRLReward,
    trainer_dataset,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a causal LM with a chat template")
    parser.add_argument("--config", required=True, help="a frozen configuration, e.g. level1_countdown")
    parser.add_argument("--registry", default=None, help="'bundled' for the release shipped with modebench")
    parser.add_argument("--output", required=True)
    parser.add_argument("--workers", type=int, default=2, help="verifier worker processes")
    parser.add_argument("--novelty-bonus", type=float, default=0.0, help="research option; 0 = off")
    parser.add_argument("--max-steps", type=int, default=100)
    args = parser.parse_args()

    dataset = trainer_dataset(args.config, registry=args.registry)
    with BatchGrader(args.workers) as grader:
        bank = ModeBank(capacity=16)
        recorder = RolloutRecorder(bank=bank, receipts_dir=f"{args.output}/modebench", grader=grader)
        shaping = NoveltyBonus(args.novelty_bonus) if args.novelty_bonus else None
        reward = TRLReward(grader, recorder=recorder, shaping=shaping)
        config = GRPOConfig(
            output_dir=args.output, max_steps=args.max_steps, logging_steps=1, num_generations=8
        )
        trainer = GRPOTrainer(model=args.model, reward_funcs=[reward], args=config, train_dataset=dataset)
        ModebenchCallback(recorder).attach(trainer)
        trainer.train()
    print("modebench trajectory " + " ".join(shlex.quote(run) for run in recorder.trajectory_runs()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
