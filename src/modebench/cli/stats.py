"""The statistics commands: ``stats RUN`` and ``compare A B [C …]``.

Each handler converts its arguments, calls one public function of :mod:`modebench.api` and
prints the table with :func:`modebench.render.render_table`. A RUN is a receipt, a ``suite.json``
or a directory of receipts.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def _resamples(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer: {text!r}") from None
    if value < 2:
        # One resample has no spread: its "interval" would be a single value, silently.
        raise argparse.ArgumentTypeError(f"at least 2 resamples are needed for an interval, got {value}")
    return value


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names: {text!r}")
    return names


def _cells(text: str) -> list[tuple[int, str]]:
    found = []
    for part in text.split(","):
        level, sep, domain = part.strip().partition(":")
        if not sep or not level.isdigit() or not domain:
            raise argparse.ArgumentTypeError(f"expected LEVEL:DOMAIN[,LEVEL:DOMAIN…]: {text!r}")
        found.append((int(level), domain))
    return found


def _label(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH: {text!r}")
    return name.strip(), path


def _print_table(table: Any, fmt: str) -> None:
    print(
        render_table(
            table.columns,
            table.rows,
            fmt,
            document=table.to_dict(),
            display=table.display,
            headers=table.headers,
        ),
        flush=True,
    )
    notes = list(table.meta.get("notes", []))
    for comparison in table.meta.get("comparisons", []):
        notes.extend(f"{comparison['a']} vs {comparison['b']}: {note}" for note in comparison["notes"])
    if notes and fmt != "json":  # JSON carries them in the document
        for note in notes:
            print(f"note: {note}", file=sys.stderr)


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {"cells": args.cells, "domains": args.domains, "levels": args.levels}


def _stats(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import curves  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    label = next((name for name, path in args.label or [] if path == args.receipt), None)
    table = curves(
        args.receipt, args.k, seed=args.seed, resamples=args.resamples, level=args.level,
        label=label, **_filters(args),
    )  # fmt: skip
    _print_table(table, args.format)
    return 0


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import compare_runs, prompt_retention  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.per_prompt:
        if len(args.runs) != 2:
            parser.error("--per-prompt takes exactly two receipts")
        for record in prompt_retention(args.runs[0], args.runs[1]):
            print(json.dumps(record))
        return 0
    labels = {path: name for name, path in args.label or []}
    unknown = sorted(set(labels) - set(args.runs))
    if unknown:
        parser.error(f"--label names a path that is not compared: {', '.join(unknown)}")
    table = compare_runs(
        args.runs, args.k, seed=args.seed, resamples=args.resamples, level=args.level, labels=labels,
        baseline=args.baseline, allow_unequal_draws=args.allow_unequal_draws, **_filters(args),
    )  # fmt: skip
    _print_table(table, args.format)
    return 0


def _common(command: argparse.ArgumentParser) -> None:
    command.add_argument("--k", type=_points, help="comma-separated k points (default 1,2,4,… and the draws)")
    command.add_argument("--format", choices=FORMATS, default="text", help="output format")
    command.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    command.add_argument("--resamples", type=_resamples, default=1000, help="bootstrap resamples, at least 2")
    command.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals")
    command.add_argument(
        "--label",
        action="append",
        type=_label,
        metavar="NAME=PATH",
        help="name the run given as PATH (repeatable)",
    )
    command.add_argument("--cells", type=_cells, metavar="L:DOMAIN,…", help="only these cells")
    command.add_argument("--domains", type=_names, metavar="D,…", help="only these domains")
    command.add_argument("--levels", type=_points, metavar="L,…", help="only these levels")


def add_commands(commands: Any) -> None:
    stats = commands.add_parser(
        "stats", help="curves over k with error bars per cell, per domain and over all cells of a run"
    )
    stats.add_argument("receipt", metavar="RUN", help="a receipt, a suite.json or a directory of receipts")
    _common(stats)
    stats.set_defaults(handler=_stats)

    compare = commands.add_parser(
        "compare", help="paired comparison, mode retention and its baseline of runs against the first"
    )
    compare.add_argument(
        "runs", nargs="+", metavar="RUN",
        help="receipts, suite.json files or directories; the first is the baseline (differences are B - A)",
    )  # fmt: skip
    _common(compare)
    compare.add_argument("--baseline", metavar="NAME", help="compare against the run with this label")
    compare.add_argument(
        "--allow-unequal-draws",
        action="store_true",
        help="compare runs with different draws per prompt although pass_at_draws then compares unequal groups",
    )
    compare.add_argument(
        "--per-prompt", action="store_true", help="JSON lines of each prompt's modes: retained, lost, gained"
    )
    compare.set_defaults(handler=_compare)
