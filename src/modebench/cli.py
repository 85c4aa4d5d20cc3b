"""Command-line interface: an argparse table; each handler converts arguments and calls one
public function. ``InputError``/``ValueError``/``OSError`` → exit 2, evaluator failure → exit 3.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from modebench.diagnostics import VerifierExecutionError
from modebench.evaluation import evaluate
from modebench.validation import InputError, loads

__all__ = ["evaluate", "main", "read_records"]

EXIT_FAILED = 3
#: Exit codes of a run stopped by SIGINT / SIGTERM (128 + signal number, as shells report them).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
INTERRUPTED = "interrupted; rerun the same command with --resume"


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that it unwinds like Ctrl-C."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


def read_records(raw: bytes | str) -> tuple[list[Any], list[str]]:
    """Parse JSONL text into records and ``line N`` locations (blank lines are skipped)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    records, locations = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(loads(line))
        except InputError as exc:
            raise InputError(f"line {number}: {exc}") from None
        locations.append(f"line {number}")
    return records, locations


def _print_json(value: Any) -> None:
    print(json.dumps(value), flush=True)


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
    if Path(args.output).exists() and not args.resume:  # a resumed finished run prints its summary
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
            keep_checkpoint=args.keep_work,
        )
    except VerifierExecutionError as exc:
        _failure_receipt(args.output, exc, args.input)
        _print_json({"output": args.output, "status": "failed"})
        return EXIT_FAILED
    _print_json(summary)
    return 0 if summary["status"] == "completed" else EXIT_FAILED


def _report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.reporting import read_report, summarize

    payload = read_report(args.receipt)
    print(summarize(payload))
    return 0 if payload["evaluation"]["status"] == "completed" else EXIT_FAILED


def _walkthrough(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.walkthrough import export

    _print_json(export(args.directory))
    return 0


def _positive(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modebench", description="Grade saved model responses for correctness and mode diversity."
    )
    commands = parser.add_subparsers(dest="command", required=True)

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
    evaluate_cmd.add_argument("--workers", type=_positive, default=1)
    evaluate_cmd.add_argument("--progress-every", type=int, default=100)
    evaluate_cmd.add_argument("--allow-partial", action="store_true")
    evaluate_cmd.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the checkpoint ledger after a completed run (default: only the result journal stays)",
    )
    evaluate_cmd.set_defaults(handler=_evaluate)

    from modebench import cli_data

    cli_data.add_commands(commands)  # prepare, datasets (parser order of cli.md)

    walkthrough_cmd = commands.add_parser("walkthrough", help="export the offline five-domain example")
    walkthrough_cmd.add_argument("--directory", required=True)
    walkthrough_cmd.set_defaults(handler=_walkthrough)

    report_cmd = commands.add_parser("report", help="print the text summary of a receipt")
    report_cmd.add_argument("receipt")
    report_cmd.set_defaults(handler=_report)

    from modebench import cli_suite

    cli_suite.add_commands(commands)  # build, calibrate, power: the suite-building workflow
    return parser


def _fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return handler(args, parser)
    except (ValueError, OSError) as exc:
        _fail(parser, str(exc))
    except (KeyboardInterrupt, Terminated) as exc:
        # Committed work is kept; one line says how to continue (no traceback).
        print(INTERRUPTED if args.command == "evaluate" else "interrupted", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
