"""The ``ingest`` command: other tools' response logs → evaluate input (``docs/ingest.md``)."""

from __future__ import annotations

import argparse
from typing import Any

from modebench.cli._common import add_split_options, print_json

__all__ = ["add_commands"]


def _ingest(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import ingest

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
    )
    print_json(summary, indent=2)
    return 0


def add_commands(commands: Any) -> None:
    from modebench.ingest import FORMATS

    cmd = commands.add_parser(
        "ingest",
        help="convert Inspect, lm-eval, verl or TRL response logs into evaluate input",
        description="Convert response logs of other tools into modebench's evaluate input (JSONL). "
        "verl and TRL sources write one file per training step: OUT.step-N.jsonl.",
    )
    cmd.add_argument("format", choices=tuple(FORMATS), metavar="FORMAT", help=f"one of {', '.join(FORMATS)}")
    cmd.add_argument("source", help="log file or directory")
    cmd.add_argument("--output", required=True, help="output JSONL path")
    add_split_options(cmd, config="frozen config whose registered prompts are matched by hash")
    cmd.set_defaults(handler=_ingest)
