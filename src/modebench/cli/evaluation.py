"""The ``evaluate`` command: grade a saved-response JSONL file into a receipt.

(The module is not called ``evaluate``: ``modebench.cli.evaluate`` is the evaluation function
itself, a name users import.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from modebench.api_types import Progress
from modebench.cli import _progress
from modebench.cli._common import (
    EXIT_FAILED,
    add_config_list,
    add_ids_option,
    add_split_options,
    configs_of,
    int_value,
    print_json,
)
from modebench.diagnostics import VerifierExecutionError
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.validation import InputError

__all__ = ["UNSCORABLE_OPTION", "add_commands", "reference_formats", "with_reference_formats"]

#: The opt-in unscorable policy as a user of the CLI spells it.
UNSCORABLE_OPTION = "--unscorable count-as-incorrect"


class _ProgressPrinter:
    """Evaluation progress on stderr (``docs/progress.md``): a bar with total and ETA for every
    phase on a terminal, the contractual JSON events — sparse by default — otherwise."""

    def __init__(self, every: int | None, source: str, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.source = source
        self.tty = self.stream.isatty() and every != 0
        self.bar = _progress.Bar(self.stream, "prompts")
        self.printed = _progress.EventFilter(every, lambda event: int(event["completed_prompts"]))
        self.estimate: int | None = None

    def __call__(self, event: Progress) -> None:
        now = time.monotonic()
        if self.tty:
            self._draw(event, now)
        elif self.printed(dict(event), now):
            _progress.write_json(self.stream, dict(event), now - self.started)

    def _draw(self, event: Progress, now: float) -> None:
        phase, done, total = event["phase"], event["completed_prompts"], event["total_prompts"]
        estimated = False
        if phase == "validating":  # the library cannot know the count yet: estimate it from the file
            if self.estimate is None:
                self.estimate = _progress.count_lines(self.source) or 0
            total, estimated = max(self.estimate, done) or None, True
        final = phase in ("validated", "complete")
        if phase == "validated":
            phase = "validating"  # the same bar, completed with the exact count
        if phase in ("finalizing", "complete"):
            phase = "publishing"  # integrity checks, receipt assembly, publication
        self.bar.update(phase, done, total, now, estimated=estimated, final=final)


class _SuiteProgress:
    """A suite's events (each names its ``config``): one printer per configuration's input file;
    on a terminal each configuration's bars follow a line with its name."""

    def __init__(self, every: int | None, directory: str) -> None:
        self.every, self.directory = every, directory
        self.printers: dict[str, _ProgressPrinter] = {}

    def __call__(self, event: Progress) -> None:
        name = str(dict(event).get("config"))
        printer = self.printers.get(name)
        if printer is None:
            printer = _ProgressPrinter(self.every, os.path.join(self.directory, f"{name}.jsonl"))
            self.printers[name] = printer
            if printer.tty:
                printer.stream.write(f"{name}\n")
        printer(event)


def _evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import EvaluationOptions, evaluate_file  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.progress_every is not None and args.progress_every < 0:
        raise InputError("--progress-every must be nonnegative")
    config, suite = configs_of(args)
    options = EvaluationOptions.from_args(args, config)
    if suite is not None:
        return _evaluate_suite(args, parser, suite, options)
    try:
        receipt = evaluate_file(
            args.input,
            args.output,
            options=options,
            work_dir=args.work_dir,
            resume=args.resume,
            workers=args.workers,
            progress=_ProgressPrinter(args.progress_every, args.input),
            backend=args.backend,
            cluster_address=args.ray_address,
            shard=args.shard,
        )
    except VerifierExecutionError as exc:  # the failure receipt is already published
        print_json({"output": args.output, "status": "failed"})
        detail = exc.diagnostic.get("detail") if isinstance(exc.diagnostic, dict) else None
        print(
            f"modebench: reference validation could not run, so nothing was graded: {detail}\n"
            f"(the failure receipt {args.output} holds this diagnostic)",
            file=sys.stderr,
        )
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
    if receipt.unscorable is not None:  # after the contractual summary line, on stderr
        print("modebench: " + receipt.unscorable.text(UNSCORABLE_OPTION), file=sys.stderr, flush=True)
    return 0 if receipt.status == "completed" else EXIT_FAILED


def _evaluate_suite(
    args: argparse.Namespace, parser: argparse.ArgumentParser, suite: list[str], options: Any
) -> int:
    from modebench.api import evaluate_suite  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.work_dir is not None or args.shard is not None or args.ids is not None:
        parser.error("--work-dir, --shard and --ids apply to a single --config")
    result = evaluate_suite(
        args.input,
        args.output,
        suite,
        options=options,
        resume=args.resume,
        workers=args.workers,
        progress=_SuiteProgress(args.progress_every, args.input),
        backend=args.backend,
        cluster_address=args.ray_address,
    )
    print_json(result)
    return 0 if result["status"] == "completed" else EXIT_FAILED


def reference_formats() -> str:
    """The custom input format and each domain's reference (``answer``) in a few lines of help.

    Built from the installed plug-ins when help is asked for (no domain is imported otherwise).
    """
    from modebench import domains  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    names = domains.names()
    lines = [
        "custom input (without --config): one JSON object per line, all saved responses of one prompt:",
        f'  {{"id": "p1", "level": 1, "domain": "{names[0]}", "answer": {{...}}, '
        '"responses": ["...", "..."]}',
        "answer is the task's reference object; its verifier field names the domain's verifier:",
    ]
    for name in names:
        verifiers = " or ".join(f'"{verifier}"' for verifier in domains.plugin(name).verifiers)
        where = f"docs/scoring/{name}.md" if domains.origin(name) is None else "the plug-in's documentation"
        lines.append(f"  {name}: {verifiers} (every field, with a complete example: {where})")
    lines.append(
        "a real reference of a built-in domain, offline: modebench datasets inspect "
        "--config level1_<domain> --registry bundled --show-reference"
    )
    return "\n".join(lines) + "\n"


def with_reference_formats(parser: argparse.ArgumentParser) -> None:
    """Append :func:`reference_formats` to ``parser``'s help (computed only when shown)."""
    plain = parser.format_help

    def format_help() -> str:
        return plain() + "\n" + reference_formats()

    parser.format_help = format_help  # type: ignore[method-assign]


def add_commands(commands: Any) -> None:
    evaluate_cmd = commands.add_parser("evaluate", help="grade saved responses into a receipt")
    with_reference_formats(evaluate_cmd)
    evaluate_cmd.add_argument(
        "input",
        help="JSONL file: one prompt per line with all its saved responses; '-' reads standard "
        "input (several configs: a directory of <config>.jsonl files)",
    )
    evaluate_cmd.add_argument(
        "--output",
        required=True,
        help="where to write the receipt, or the directory of receipts and suite.json for several "
        "configs (never overwritten)",
    )
    evaluate_cmd.add_argument(
        "--min-defined-prompts",
        type=int,
        default=DEFAULT_MIN_DEFINED_PROMPTS,
        help="prompts with PCMD defined needed before PCMD is reportable",
    )
    evaluate_cmd.add_argument(
        "--run", help="run metadata JSON (model, generation settings, prompt condition)"
    )
    add_config_list(
        evaluate_cmd,
        required=False,
        suite="INPUT is then a directory of <config>.jsonl files and --output a new directory of "
        "<config>.json receipts plus suite.json",
    )
    add_split_options(evaluate_cmd, config=None)
    add_ids_option(evaluate_cmd, "grade only these prompts of the input (the others are skipped)")
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
        "--progress-every",
        type=int,
        metavar="N",
        help="JSON progress event on stderr whenever the count of validated or graded prompts reaches a "
        "multiple of N (0: no progress at all). Default: a bar with ETA on a terminal; otherwise an event "
        f"at the start of each phase and at most one every {_progress.QUIET_SECONDS:g} seconds",
    )
    evaluate_cmd.add_argument(
        "--allow-partial", action="store_true", help="frozen runs: allow covering only part of the split"
    )
    evaluate_cmd.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the checkpoint ledger after a completed run (default: only the result journal stays)",
    )
    evaluate_cmd.add_argument(
        "--unscorable",
        choices=("fail-run", "count-as-incorrect"),
        default="fail-run",
        help=(
            "responses that cannot be scored: fail-run voids every score (ModeBench 0.4.0); "
            "count-as-incorrect scores timeouts and resource limits as incorrect draws and records "
            "that in the receipt"
        ),
    )
    from modebench.cli import backends  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    backends.add_evaluate_options(evaluate_cmd)
    evaluate_cmd.set_defaults(handler=_evaluate)
