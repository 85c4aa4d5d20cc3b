"""Command-line interface: one module per command group, each a thin skin over the library.

A command module exposes ``add_commands(commands)`` and its handlers parse flags, call one
public function and print. ``main`` maps ``InputError``/``ValueError``/``OSError`` to exit 2
with the message on stderr (no traceback); an evaluation that did not complete exits 3.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from modebench.cli import backends, data, evaluation, ingest, report, stats, suite, trajectory, walkthrough
from modebench.cli._common import Handler, error_message
from modebench.evaluation import evaluate
from modebench.validation import InputError, loads

__all__ = ["build_parser", "evaluate", "main", "read_records"]

#: Command groups in the order ``modebench --help`` lists them.
_GROUPS = (
    evaluation,  # evaluate
    data,  # prepare, datasets
    walkthrough,  # walkthrough
    report,  # report
    suite,  # build, calibrate, power
    backends,  # merge
    stats,  # stats, compare
    ingest,  # ingest
    trajectory,  # trajectory
)


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modebench", description="Grade saved model responses for correctness and mode diversity."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for group in _GROUPS:
        group.add_commands(commands)
    return parser


def _fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args, parser)
    except (ValueError, OSError) as exc:
        _fail(parser, error_message(exc))


if __name__ == "__main__":
    sys.exit(main())
