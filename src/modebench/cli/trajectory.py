"""The ``trajectory`` command: statistics and mode retention of runs ordered by training step."""

from __future__ import annotations

import argparse
from typing import Any

from modebench.cli._common import add_split_options, int_value, print_json
from modebench.cli.stats import _points, _print_table
from modebench.render import FORMATS

__all__ = ["add_commands"]


def _trajectory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import trajectory, trajectory_html  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    options = dict(
        registry=args.registry,
        config=args.config,
        split=args.split,
        data_root=args.data_root,
        cache_dir=args.cache_dir,
        offline=args.offline,
        grading_cache=args.grading_cache,
        workers=args.workers,
        run_file=args.run,
        id_field=args.id_field,
    )
    if args.html is None and args.figures is not None:
        parser.error("--figures applies to --html only")
    if args.html is not None:
        print_json(trajectory_html(args.runs, args.html, args.k, figures_dir=args.figures, **options))
        return 0
    _print_table(trajectory(args.runs, args.k, **options), args.format)
    return 0


def add_commands(commands: Any) -> None:
    cmd = commands.add_parser(
        "trajectory",
        help="per training step: accuracy, pass@k, distinct@k, PCMD, effective modes, mode retention",
        description="RUN is a receipt, a suite.json or a directory of receipts (PATH, its step is its "
        "position; or STEP=PATH) or a rollout "
        "source (verl:DIR, trl:DIR) graded against --config, each step cached by content hash.",
    )
    cmd.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="a receipt, suite.json or directory of receipts (PATH or STEP=PATH), or verl:DIR / trl:DIR",
    )
    cmd.add_argument("--k", type=_points, help="comma-separated k points (default 1,2,4,… and the draws)")
    cmd.add_argument("--format", choices=FORMATS, default="text", help="output table format")
    cmd.add_argument(
        "--html",
        metavar="OUT.html",
        help="write the figures and tables as one HTML page (needs the 'plot' extra)",
    )
    cmd.add_argument(
        "--figures",
        metavar="DIR",
        help="with --html: also write each figure as a standalone SVG and PDF into DIR",
    )
    add_split_options(cmd, config="frozen config the rollouts are graded against")
    cmd.add_argument(
        "--grading-cache",
        default="modebench-grading",
        help="where graded steps are cached (default: %(default)s)",
    )
    cmd.add_argument(
        "--run", help="run metadata JSON for grading rollout sources (model, generation, prompt_condition)"
    )
    cmd.add_argument(
        "--id-field",
        metavar="NAME",
        help="rollout sources: the field holding the modebench prompt id (dotted path), as for ingest: "
        "a TRL column, a verl line key (gts, gts.id, an extra key)",
    )
    cmd.add_argument("--workers", type=int_value, default=1, help="grading worker processes")
    cmd.set_defaults(handler=_trajectory)
