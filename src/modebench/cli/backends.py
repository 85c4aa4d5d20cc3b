"""Execution back-end options of ``evaluate`` and the ``merge`` command for shard receipts."""

from __future__ import annotations

import argparse
from typing import Any

from modebench.backends import BACKENDS
from modebench.cli._common import EXIT_FAILED, print_json


def add_evaluate_options(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where grading runs: local worker processes, or Ray actors (needs the 'ray' extra) (default: local)",
    )
    evaluate.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="address of a running Ray cluster (default: start a local one, or use RAY_ADDRESS)",
    )
    evaluate.add_argument(
        "--shard",
        metavar="I/N",
        help="grade only shard I of N (prompts at positions p with p mod N = I-1) into a shard receipt",
    )


def _merge(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import merge_shards  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    summary = merge_shards(args.shards, args.output)
    print_json(summary)
    return 0 if summary["status"] == "completed" else EXIT_FAILED


def add_commands(commands: Any) -> None:
    merge = commands.add_parser(
        "merge", help="merge shard receipts into the receipt and journal of the unsharded run"
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD_RECEIPT", help="every shard receipt of one run")
    merge.add_argument("--output", required=True, help="path of the merged receipt (never overwritten)")
    merge.set_defaults(handler=_merge)
