"""The ``evaluate`` command: grade a saved-response JSONL file into a receipt.

(The module is not called ``evaluate``: ``modebench.cli.evaluate`` is the evaluation function
itself, a name users import.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from modebench.cli._common import EXIT_FAILED, int_value, print_json
from modebench.diagnostics import VerifierExecutionError
from modebench.validation import InputError, loads

__all__ = ["add_commands"]


class _ProgressPrinter:
    """JSON progress events on a pipe; a live one-line bar when stderr is a terminal."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.every == 0:
            return
        elapsed = round(time.monotonic() - self.started, 2)
        if self.tty:
            self._bar(event, elapsed)
            return
        if event["phase"] != "grading" or event["completed_prompts"] % self.every == 0:
            sys.stderr.write(json.dumps({**event, "elapsed_seconds": elapsed}) + "\n")
            sys.stderr.flush()

    def _bar(self, event: dict[str, Any], elapsed: float) -> None:
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


def _failure_receipt(output: str, error: VerifierExecutionError, input_path: str) -> None:
    from modebench.identity import file_sha256, software_identity
    from modebench.publish import atomic_output

    receipt = {
        "schema": "modebench-saved-responses-v3",
        "software": software_identity(),
        "evaluation": {"status": "failed"},
        "failure": error.diagnostic,
        "cells": [],
        "input_sha256": file_sha256(input_path),
    }
    with atomic_output(output) as handle:
        handle.write(json.dumps(receipt, indent=2) + "\n")


def _evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.streaming import evaluate_file

    if (args.cache_dir is not None or args.offline) and args.config is None:
        raise InputError("--cache-dir and --offline require --config")
    if args.registry is not None and args.config is None:
        raise InputError("--registry requires --config")
    if Path(args.output).exists():
        raise InputError(f"output already exists: {args.output}")
    if args.progress_every < 0:
        raise InputError("--progress-every must be nonnegative")
    run = loads(Path(args.run).read_bytes()) if args.run is not None else None
    data_root = args.data_root
    registry = args.registry
    if args.config is not None:
        from modebench import data, dataset_cache

        if registry is not None:  # read once; the evaluator re-checks the split against it
            registry = dataset_cache.load_registry(registry, offline=args.offline, cache_dir=args.cache_dir)

        data_root = data.resolve_data_root(
            args.config,
            args.split,
            data_root=args.data_root,
            cache_dir=args.cache_dir,
            offline=args.offline,
            registry=registry,
        )
    try:
        summary = evaluate_file(
            args.input,
            args.output,
            min_defined_prompts=args.min_defined_prompts,
            run=run,
            data_root=data_root,
            config=args.config,
            split=args.split,
            allow_partial=args.allow_partial,
            registry=registry,
            work_dir=args.work_dir,
            resume=args.resume,
            progress=_ProgressPrinter(args.progress_every),
            workers=args.workers,
        )
    except VerifierExecutionError as exc:
        _failure_receipt(args.output, exc, args.input)
        print_json({"output": args.output, "status": "failed"})
        return EXIT_FAILED
    print_json(summary)
    return 0 if summary["status"] == "completed" else EXIT_FAILED


def add_commands(commands: Any) -> None:
    evaluate_cmd = commands.add_parser("evaluate", help="grade a saved-response JSONL file into a v4 receipt")
    evaluate_cmd.add_argument("input")
    evaluate_cmd.add_argument("--output", required=True)
    evaluate_cmd.add_argument("--min-defined-prompts", type=int, default=30)
    evaluate_cmd.add_argument("--run")
    evaluate_cmd.add_argument("--config")
    evaluate_cmd.add_argument("--split", choices=("train", "dev", "eval"), default="eval")
    roots = evaluate_cmd.add_mutually_exclusive_group()
    roots.add_argument("--data-root")
    roots.add_argument("--cache-dir")
    evaluate_cmd.add_argument("--offline", action="store_true")
    evaluate_cmd.add_argument("--registry", help="registry JSON (path or URL) instead of the packaged one")
    evaluate_cmd.add_argument("--resume", action="store_true")
    evaluate_cmd.add_argument("--work-dir")
    evaluate_cmd.add_argument("--workers", type=int_value, default=1)
    evaluate_cmd.add_argument("--progress-every", type=int, default=100)
    evaluate_cmd.add_argument("--allow-partial", action="store_true")
    evaluate_cmd.set_defaults(handler=_evaluate)
