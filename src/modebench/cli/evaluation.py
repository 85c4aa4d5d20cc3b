"""The ``evaluate`` command: grade a saved-response JSONL file into a receipt.

(The module is not called ``evaluate``: ``modebench.cli.evaluate`` is the evaluation function
itself, a name users import.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from modebench.api_types import Progress
from modebench.cli._common import EXIT_FAILED, int_value, print_json
from modebench.diagnostics import VerifierExecutionError
from modebench.validation import InputError

__all__ = ["add_commands"]


class _ProgressPrinter:
    """JSON progress events on a pipe; a live one-line bar when stderr is a terminal."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def __call__(self, event: Progress) -> None:
        if self.every == 0:
            return
        elapsed = round(time.monotonic() - self.started, 2)
        if self.tty:
            self._bar(event, elapsed)
            return
        if event["phase"] != "grading" or event["completed_prompts"] % self.every == 0:
            sys.stderr.write(json.dumps({**event, "elapsed_seconds": elapsed}) + "\n")
            sys.stderr.flush()

    def _bar(self, event: Progress, elapsed: float) -> None:
        done, total = event["completed_prompts"], event["total_prompts"]
        if total:
            filled = int(30 * done / total)
            rate = done / elapsed if elapsed > 0 else 0.0
            line = f"{event['phase']:<10} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} prompts  {rate:,.0f}/s"
        else:
            line = f"{event['phase']:<10} {done} prompts"
        end = "\n" if event["phase"] == "complete" else ""
        sys.stderr.write("\r" + line.ljust(78) + end)
        sys.stderr.flush()


def _evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import EvaluationOptions, evaluate_file

    if args.progress_every < 0:
        raise InputError("--progress-every must be nonnegative")
    options = EvaluationOptions(
        min_defined_prompts=args.min_defined_prompts,
        run_file=args.run,
        data_root=args.data_root,
        config=args.config,
        split=args.split,
        allow_partial=args.allow_partial,
        registry=args.registry,
        cache_dir=args.cache_dir,
        offline=args.offline,
        keep_checkpoint=args.keep_work,
    )
    try:
        receipt = evaluate_file(
            args.input,
            args.output,
            options=options,
            work_dir=args.work_dir,
            resume=args.resume,
            workers=args.workers,
            progress=_ProgressPrinter(args.progress_every),
            backend=args.backend,
            cluster_address=args.ray_address,
            shard=args.shard,
        )
    except VerifierExecutionError:  # the failure receipt is already published
        print_json({"output": args.output, "status": "failed"})
        return EXIT_FAILED
    print_json(
        {
            "output": str(receipt.output),
            "cells": receipt.cells,
            "prompts": receipt.prompts,
            "dataset_kind": receipt.dataset_kind,
            "status": receipt.status,
            "work_dir": str(receipt.work_dir),
        }
    )
    return 0 if receipt.status == "completed" else EXIT_FAILED


def add_commands(commands: Any) -> None:
    evaluate_cmd = commands.add_parser("evaluate", help="grade saved responses into a receipt")
    evaluate_cmd.add_argument(
        "input",
        help="JSONL file: one prompt per line with all its saved responses; '-' reads standard input",
    )
    evaluate_cmd.add_argument(
        "--output", required=True, help="where to write the receipt (never overwritten)"
    )
    evaluate_cmd.add_argument(
        "--min-defined-prompts",
        type=int,
        default=30,
        help="prompts with PCMD defined needed before PCMD is reportable",
    )
    evaluate_cmd.add_argument(
        "--run", help="run metadata JSON (model, generation settings, prompt condition)"
    )
    evaluate_cmd.add_argument(
        "--config", help="frozen dataset config (e.g. level1_countdown): references come from that split"
    )
    evaluate_cmd.add_argument(
        "--split", choices=("train", "dev", "eval"), default="eval", help="split of the frozen config"
    )
    roots = evaluate_cmd.add_mutually_exclusive_group()
    roots.add_argument("--data-root", help="directory holding the frozen splits (manifest.json)")
    roots.add_argument("--cache-dir", help="verified download cache (default: $XDG_CACHE_HOME/modebench)")
    evaluate_cmd.add_argument(
        "--offline", action="store_true", help="never download; use only the verified cache"
    )
    evaluate_cmd.add_argument("--registry", help="registry JSON (path or URL) instead of the packaged one")
    evaluate_cmd.add_argument(
        "--resume", action="store_true", help="continue an interrupted run from its checkpoint"
    )
    evaluate_cmd.add_argument("--work-dir", help="checkpoint and journal directory (default: OUTPUT.work)")
    evaluate_cmd.add_argument(
        "--workers",
        type=int_value,
        default=1,
        help="grading worker processes (1-8 locally; Ray: up to the cluster's CPUs)",
    )
    evaluate_cmd.add_argument(
        "--progress-every", type=int, default=100, help="prompts between progress events on stderr (0: none)"
    )
    evaluate_cmd.add_argument(
        "--allow-partial", action="store_true", help="frozen runs: allow covering only part of the split"
    )
    evaluate_cmd.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the checkpoint ledger after a completed run (default: only the result journal stays)",
    )
    from modebench.cli import backends

    backends.add_evaluate_options(evaluate_cmd)
    evaluate_cmd.set_defaults(handler=_evaluate)
