"""The ``walkthrough`` command: export the offline five-domain example."""

from __future__ import annotations

import argparse
from typing import Any

from modebench.cli._common import print_json

__all__ = ["add_commands"]


def _walkthrough(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.walkthrough import export  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    print_json(export(args.directory))
    return 0


def add_commands(commands: Any) -> None:
    walkthrough_cmd = commands.add_parser("walkthrough", help="export the offline five-domain example")
    walkthrough_cmd.add_argument(
        "--directory", required=True, help="directory to create with responses.jsonl and run.json"
    )
    walkthrough_cmd.set_defaults(handler=_walkthrough)
