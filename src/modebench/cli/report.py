"""The ``report`` command: the text summary of a receipt."""

from __future__ import annotations

import argparse
from typing import Any

from modebench.cli._common import EXIT_FAILED

__all__ = ["add_commands"]


def _report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.reporting import read_report, summarize

    payload = read_report(args.receipt)
    print(summarize(payload))
    return 0 if payload["evaluation"]["status"] == "completed" else EXIT_FAILED


def add_commands(commands: Any) -> None:
    report_cmd = commands.add_parser("report", help="print the text summary of a receipt")
    report_cmd.add_argument("receipt", help="receipt JSON written by evaluate")
    report_cmd.set_defaults(handler=_report)
