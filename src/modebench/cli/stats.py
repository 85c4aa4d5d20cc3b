"""The statistics commands: ``stats RECEIPT`` and ``compare A B``.

Each handler converts its arguments, calls one public function of :mod:`modebench.api` and
prints the table with :func:`modebench.render.render_table`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from modebench.render import FORMATS, render_table

__all__ = ["add_commands"]


def _points(text: str) -> list[int]:
    try:
        points = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers: {text!r}") from None
    if not points or any(k < 1 for k in points):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers: {text!r}")
    return points


def _print_table(table: Any, fmt: str) -> None:
    print(render_table(table.columns, table.rows, fmt, document=table.to_dict()), flush=True)


def _stats(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import curves

    table = curves(args.receipt, args.k, seed=args.seed, resamples=args.resamples, level=args.level)
    _print_table(table, args.format)
    return 0


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import compare, prompt_retention

    if args.per_prompt:
        for record in prompt_retention(args.a, args.b):
            print(json.dumps(record))
        return 0
    table = compare(args.a, args.b, args.k, seed=args.seed, resamples=args.resamples, level=args.level)
    _print_table(table, args.format)
    return 0


def _common(command: argparse.ArgumentParser) -> None:
    command.add_argument("--k", type=_points, help="comma-separated k points (default 1,2,4,… and the draws)")
    command.add_argument("--format", choices=FORMATS, default="text", help="output format of the table")
    command.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    command.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    command.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals")


def add_commands(commands: Any) -> None:
    stats = commands.add_parser("stats", help="curves over k with error bars for every cell of a receipt")
    stats.add_argument("receipt", help="receipt written by evaluate")
    _common(stats)
    stats.set_defaults(handler=_stats)

    compare = commands.add_parser("compare", help="paired comparison and mode retention of two receipts")
    compare.add_argument("a", help="baseline receipt")
    compare.add_argument("b", help="receipt compared against the baseline (differences are B - A)")
    _common(compare)
    compare.add_argument(
        "--per-prompt", action="store_true", help="JSON lines of each prompt's modes: retained, lost, gained"
    )
    compare.set_defaults(handler=_compare)
