"""The ``ingest`` command: other tools' response logs → evaluate input (``docs/ingest.md``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from modebench.cli._common import add_split_options, print_json

__all__ = ["add_commands"]


def _ingest(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import ingest  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    summary = ingest(
        args.format,
        args.source,
        args.output,
        registry=args.registry,
        config=args.config,
        split=args.split,
        data_root=args.data_root,
        cache_dir=args.cache_dir,
        offline=args.offline,
        id_field=args.id_field,
        lm_eval_filter=args.filter,
        tokenizer=args.tokenizer,
    )
    print_json(summary, indent=2)
    if summary["unmatched"]:
        first = summary["unmatched_prompts"][0]
        print(
            f"modebench ingest: {summary['unmatched']} of {summary['source_prompts']} source prompts "
            f"matched no registered prompt and were left out (first: {first}); see unmatched_prompts",
            file=sys.stderr,
        )
    return 0


#: ``modebench.ingest.FORMATS``'s names (a test keeps them equal): building the parser for any
#: command must not load the ingest wing (about 9 ms of every ``modebench evaluate``).
FORMATS = ("inspect", "lm-eval", "verl", "trl")


def add_commands(commands: Any) -> None:
    cmd = commands.add_parser(
        "ingest",
        help="convert Inspect, lm-eval, verl or TRL response logs into evaluate input",
        description="Convert response logs of other tools into modebench's evaluate input (JSONL). "
        "verl and TRL sources write one file per training step: OUT.step-N.jsonl.",
    )
    cmd.add_argument("format", choices=tuple(FORMATS), metavar="FORMAT", help=f"one of {', '.join(FORMATS)}")
    cmd.add_argument("source", help="log file or directory")
    cmd.add_argument("--output", required=True, help="output JSONL path")
    add_split_options(cmd, config="frozen config whose registered prompts are matched by their renderings")
    cmd.add_argument(
        "--id-field",
        metavar="NAME",
        help="the source field holding the modebench prompt id (dotted path): a TRL column, a verl "
        "line key (gts, gts.id, an extra key), an lm-eval doc field, an Inspect sample field",
    )
    cmd.add_argument(
        "--filter",
        metavar="NAME",
        help="lm-eval: the filter whose documents to read (default: each task's first filter; "
        "#N for the N-th filter of a 0.4.0-0.4.2 file)",
    )
    cmd.add_argument(
        "--tokenizer",
        metavar="DIR",
        help="a local tokenizer directory (needs transformers) whose chat template renders the "
        "registered prompts too, decoded with and without special tokens",
    )
    cmd.set_defaults(handler=_ingest)
