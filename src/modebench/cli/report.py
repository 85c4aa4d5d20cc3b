"""The ``report`` command: the text summary of receipts, their tables, or the HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from modebench.cli._common import EXIT_FAILED, print_json
from modebench.cli.stats import _cells, _label, _names, _points, _resamples
from modebench.render.tables import FORMATS

__all__ = ["add_commands"]


def _report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.html is None:
        for given, flag in ((args.figures, "--figures"), (args.label, "--label"),
                            (args.allow_unequal_draws or None, "--allow-unequal-draws"), (args.cells, "--cells"),
                            (args.domains, "--domains"), (args.levels, "--levels")):  # fmt: skip
            if given is not None:
                parser.error(f"{flag} applies to --html only")
    elif args.journal is not None:
        parser.error("--journal applies to the text and table report, not --html")
    if args.html is not None:
        from modebench.api import render_html  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

        labels = {path: name for name, path in args.label or []}
        unknown = sorted(set(labels) - set(args.receipt))
        if unknown:
            parser.error(f"--label names a path that is not reported: {', '.join(unknown)}")
        summary = render_html(
            args.receipt, args.html, seed=args.seed, resamples=args.resamples, level=args.level,
            figures_dir=args.figures, labels=labels, allow_unequal_draws=args.allow_unequal_draws,
            cells=args.cells, domains=args.domains, levels=args.levels,
        )  # fmt: skip
        print_json(summary)
        return 0 if summary["completed"] else EXIT_FAILED
    from modebench.api import report_table  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    try:
        text, completed = report_table(args.receipt, args.format, journal=args.journal)
    except FileNotFoundError as exc:
        hint = getattr(exc, "hint", None)
        if isinstance(hint, str) and args.journal is None:  # the journal was moved: say how to name it
            exc.hint = f"{hint}; or give where it is now with --journal PATH"  # type: ignore[attr-defined]
        raise
    print(text, flush=True)
    if not completed:
        _explain(_receipts_of(args.receipt))
    return 0 if completed else EXIT_FAILED


def _receipts_of(paths: list[str]) -> list[str]:
    """The receipts behind the arguments: a suite summary stands for its configurations' receipts."""
    from modebench.suite.summary import is_summary  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast
    from modebench.validation import loads  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    found: list[str] = []
    for path in paths:
        if not is_summary(path):
            found.append(path)
            continue
        with open(path, "rb") as handle:
            document = loads(handle.read())
        found.extend(str(Path(path).parent / entry["receipt"]) for entry in document["configs"])
    return found


def _explain(receipts: list[str]) -> None:
    """Where the failure detail is, on stderr: stdout keeps the contractual report text."""
    from modebench.api import explain_unscorable  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast
    from modebench.cli.evaluation import UNSCORABLE_OPTION  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    for receipt in receipts:
        try:
            explanation = explain_unscorable(receipt)
        except (ValueError, OSError):
            # a failed configuration without a receipt, or one moved since report read it: the
            # contractual report text stands alone
            continue
        if explanation.status == "completed":
            continue
        text = explanation.text(UNSCORABLE_OPTION)
        if text:
            prefix = f"{receipt}: " if len(receipts) > 1 else ""
            print(f"modebench: {prefix}{text}", file=sys.stderr)


def add_commands(commands: Any) -> None:
    report_cmd = commands.add_parser(
        "report", help="print the text summary of receipts, their cell table, or write the HTML report"
    )
    report_cmd.add_argument(
        "receipt", nargs="+", metavar="RUN",
        help="receipt JSON written by evaluate (one or more); with --html also a suite.json or a directory of receipts",
    )  # fmt: skip
    report_cmd.add_argument("--format", choices=FORMATS, default="text", help="table format")
    report_cmd.add_argument(
        "--journal", metavar="PATH",
        help="the result journal of the one receipt given, if it was moved away from the receipt "
        "(it must still match the receipt's hash)",
    )  # fmt: skip
    report_cmd.add_argument(
        "--html", metavar="OUT.html", help="write one self-contained HTML page (needs the 'plot' extra)"
    )
    report_cmd.add_argument(
        "--figures",
        metavar="DIR",
        help="with --html: also write each figure as a standalone SVG and PDF into DIR",
    )
    report_cmd.add_argument(
        "--label", action="append", type=_label, metavar="NAME=PATH",
        help="with --html: name the run given as PATH (repeatable; default: run.json's label)",
    )  # fmt: skip
    report_cmd.add_argument(
        "--allow-unequal-draws", action="store_true",
        help="with --html: compare runs with different draws per prompt (see 'compare')",
    )  # fmt: skip
    report_cmd.add_argument(
        "--cells", type=_cells, metavar="L:DOMAIN,…", help="with --html: only these cells"
    )
    report_cmd.add_argument("--domains", type=_names, metavar="D,…", help="with --html: only these domains")
    report_cmd.add_argument("--levels", type=_points, metavar="L,…", help="with --html: only these levels")
    report_cmd.add_argument("--seed", type=int, default=0, help="bootstrap seed for --html")
    report_cmd.add_argument("--resamples", type=_resamples, default=1000, help="bootstrap resamples")
    report_cmd.add_argument("--level", type=float, default=0.95, help="interval level")
    report_cmd.set_defaults(handler=_report)
