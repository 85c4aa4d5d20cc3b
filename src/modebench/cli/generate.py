"""The ``generate`` command: sample k responses per task from an OpenAI-compatible endpoint.

The handler converts flags into a source and :class:`GenerationSettings`, calls
``modebench.api.generate_responses`` once, and prints its summary (``docs/generate.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from modebench._words import counted
from modebench.cli import _progress
from modebench.cli._common import EXIT_FAILED, add_split_options, int_value, print_json
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS

__all__ = ["add_commands"]

EXIT_INTERRUPTED = 130


class _Progress:
    """A live bar with ETA (draws/s, tokens/s, retries, failures) on a terminal; sparse JSON events
    otherwise (``docs/progress.md``)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.tty = sys.stderr.isatty()
        self.next_event = 0
        self.bar = _progress.Bar(sys.stderr, "draws")

    def __call__(self, event: dict[str, Any]) -> None:
        if self.every == 0:
            return
        if self.tty:
            self._bar(event)
        elif event["phase"] != "generating" or event["draws"] >= self.next_event:
            self.next_event = (event["draws"] // self.every + 1) * self.every
            sys.stderr.write(json.dumps(event) + "\n")
            sys.stderr.flush()

    def _bar(self, event: dict[str, Any]) -> None:
        phase = "publishing" if event["phase"] == "complete" else event["phase"]
        extra = (
            f"{event['tokens_per_second']:,.0f} tok/s  retries {event['retries']}  "
            f"failed {event['failed_draws']}"
        )
        if "graded" in event:  # --evaluate: prompts graded while draws arrive
            extra += f"  graded {counted(event['graded'], 'prompt')}"
        self.bar.update(
            phase,
            event["draws"],
            event["total_draws"],
            time.monotonic(),
            extra=extra,
            final=event["phase"] == "complete",
        )


def _source(args: argparse.Namespace) -> Any:
    from modebench.generate import FrozenSplitSource, RequestFileSource, TaskFileSource  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast
    from modebench.validation import InputError  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.config is None:
        if (
            args.registry is not None
            or args.data_root is not None
            or args.cache_dir is not None
            or args.offline
        ):
            raise InputError("--registry, --data-root, --cache-dir and --offline require --config")
        if args.requests is not None:
            return RequestFileSource(args.requests)
        return TaskFileSource(args.tasks)
    return FrozenSplitSource(
        args.config,
        args.split,
        data_root=args.data_root,
        cache_dir=args.cache_dir,
        offline=args.offline,
        registry=args.registry,
    )


def _generate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import generate_responses  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast
    from modebench.generate import GenerationSettings  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast
    from modebench.validation import InputError  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.progress_every < 0:
        raise InputError("--progress-every must be nonnegative")
    if args.evaluate is None and args.min_defined_prompts is not None:
        raise InputError("--min-defined-prompts requires --evaluate")
    settings = GenerationSettings(
        model=args.model,
        base_url=args.base_url,
        k=args.k,
        api="completions" if args.completions else "chat",
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        choices_per_request=args.choices_per_request,
        prompt_condition=args.prompt_condition,
        model_revision=args.model_revision,
        concurrency=args.concurrency,
        processes=args.processes,
        timeout=args.timeout,
        max_retries=args.retries,
        api_key_env=args.api_key_env,
    )
    try:
        result = generate_responses(
            _source(args),
            args.output,
            settings,
            run_output=args.run_output,
            retry_failed=args.retry_failed,
            progress=_Progress(args.progress_every),
            receipt=args.evaluate,
            min_defined_prompts=args.min_defined_prompts
            if args.min_defined_prompts is not None
            else DEFAULT_MIN_DEFINED_PROMPTS,
            copy_to=sys.stdout.buffer if args.stdout else None,
        )
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: finished draws are kept; rerun the same command to resume\n")
        return EXIT_INTERRUPTED
    if result.failed:
        sys.stderr.write(
            f"WARNING: {result.failed} of {counted(result.draws, 'draw')} FAILED after all retries. They are kept in "
            f"{args.output} as empty responses (graded malformed) and listed in {result.run_output} and "
            f"{result.draws_output}; rerun with --retry-failed to resend only them.\n"
        )
        sys.stderr.flush()
    if args.stdout:  # stdout carries the responses: the summary goes beside the progress
        sys.stderr.write(json.dumps(result.summary()) + "\n")
        sys.stderr.flush()
    else:
        print_json(result.summary())
    if result.receipt is not None and result.receipt.status != "completed":
        return EXIT_FAILED
    return 0


def add_commands(subparsers: Any) -> None:
    """Add ``generate`` to the top-level subparsers."""
    from modebench.prompts import CONDITIONS, DEFAULT_CONDITION  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    command = subparsers.add_parser(
        "generate", help="sample k responses per task from an OpenAI-compatible endpoint into evaluate input"
    )
    sources = command.add_mutually_exclusive_group(required=True)
    sources.add_argument("--requests", help="request JSONL written by 'modebench prepare'")
    sources.add_argument("--tasks", help="custom task JSONL (evaluate input records without responses)")
    add_split_options(
        command, config="frozen configuration to sample (see 'datasets list')", config_group=sources
    )
    command.add_argument(
        "--base-url", required=True, help="OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1"
    )
    command.add_argument("--model", required=True, help="model name sent with every request")
    command.add_argument(
        "--model-revision", help="revision recorded in run metadata (default: what the server reports)"
    )
    command.add_argument("-k", "--k", type=int_value, required=True, help="draws per prompt")
    command.add_argument("--output", required=True, help="evaluate-input JSONL to write")
    command.add_argument("--run-output", help="run metadata JSON (default: OUTPUT with suffix .run.json)")
    command.add_argument(
        "--stdout",
        action="store_true",
        help="also write OUTPUT to stdout once published, for '| modebench evaluate -' "
        "(the summary then goes to stderr; default: off)",
    )
    command.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    command.add_argument("--top-p", type=float, help="nucleus sampling mass (default: the server's)")
    command.add_argument("--max-tokens", type=int_value, help="token cap per draw (default: the server's)")
    command.add_argument(
        "--seed", type=int_value, help="run seed; each draw is sent its own seed derived from it"
    )
    command.add_argument(
        "--choices-per-request",
        type=int_value,
        default=1,
        help="ask for this many choices per request (n); only where the server samples them independently",
    )
    command.add_argument(
        "--prompt-condition",
        choices=CONDITIONS,
        default=DEFAULT_CONDITION,
        help="registered prompt condition",
    )
    command.add_argument("--concurrency", type=int_value, default=16, help="requests in flight (default 16)")
    command.add_argument(
        "--processes",
        type=int_value,
        default=1,
        help="processes sending requests, sharing --concurrency (for very fast servers; default 1)",
    )
    command.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per request attempt (default 600)"
    )
    command.add_argument(
        "--retries", type=int_value, default=5, help="client retries on 429/5xx/connection errors"
    )
    command.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key"
    )
    apis = command.add_mutually_exclusive_group()
    apis.add_argument("--chat", action="store_true", help="use /chat/completions (default)")
    apis.add_argument("--completions", action="store_true", help="use /completions with a ChatML prompt")
    command.add_argument(
        "--retry-failed", action="store_true", help="resend draws that failed after all retries"
    )
    command.add_argument("--evaluate", metavar="RECEIPT", help="grade the output right after the last draw")
    command.add_argument(
        "--min-defined-prompts", type=int_value, help="passed to the evaluation (with --evaluate)"
    )
    command.add_argument(
        "--progress-every", type=int_value, default=500, help="draws between progress events (0: none)"
    )
    command.set_defaults(handler=_generate)
