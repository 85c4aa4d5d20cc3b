"""Suite-building commands: ``build`` (fresh frozen release), ``calibrate``, ``power``."""

from __future__ import annotations

import argparse
import json
from typing import Any


def _calibrate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.suite.calibrate import calibrate, render  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    result = calibrate(
        args.receipt,
        seed=args.seed,
        dev_fraction=args.dev_fraction,
        keep_non_discriminating=args.keep_non_discriminating,
        output=args.output,
        dev_ids=args.dev_ids,
        test_ids=args.test_ids,
    )
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


def _power(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.suite.power import plan, render  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if (args.discordant is None) == (args.from_compare is None):
        raise ValueError("give exactly one of --discordant or --from-compare")
    if args.from_compare is not None:
        from modebench.api import observed_discordant  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

        args.discordant = observed_discordant(args.from_compare, args.outcome)
    try:
        result = plan(
            discordant=args.discordant,
            delta=args.delta,
            items=args.items,
            alpha=args.alpha,
            power=args.power,
            draws=args.draws,
        )
    except ValueError as exc:
        if args.from_compare is None:
            raise
        # the rate came from a file: say what it was, or the message cannot be acted on
        raise ValueError(
            f"{exc} (observed discordant rate {args.discordant:.4g} of {args.outcome} in {args.from_compare})"
        ) from None
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


def _build(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.suite.build import build_release  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    summary = build_release(
        args.output,
        seed=args.seed,
        configs=args.configs,
        rows={"eval": args.rows_eval, "dev": args.rows_dev, "train": args.rows_train},
    )
    print(json.dumps(summary))
    return 0


def add_commands(commands: Any) -> None:
    build = commands.add_parser("build", help="generate a fresh, never-published frozen release")
    build.add_argument("--output", required=True, help="release directory to create (never overwritten)")
    build.add_argument("--seed", type=int, required=True, help="generator seed (same seed, same bytes)")
    build.add_argument("--configs", default="all", help="comma-separated level<L>_<domain> names, or all")
    build.add_argument("--rows-eval", type=int, default=128, help="eval rows per config")
    build.add_argument("--rows-dev", type=int, default=0, help="dev rows per config")
    build.add_argument("--rows-train", type=int, default=0, help="train rows per config")
    build.set_defaults(handler=_build)

    calibrate = commands.add_parser(
        "calibrate", help="difficulty strata and a dev/test split from a pilot receipt"
    )
    calibrate.add_argument("receipt", help="receipt of a pilot run")
    calibrate.add_argument("--seed", type=int, default=0, help="seed of the dev/test selection")
    calibrate.add_argument(
        "--dev-fraction", type=float, default=0.5, help="share of kept tasks that go to dev"
    )
    calibrate.add_argument(
        "--keep-non-discriminating", action="store_true", help="keep tasks every or no draw solves"
    )
    calibrate.add_argument("--output", help="also write the calibration JSON here (never overwritten)")
    calibrate.add_argument(
        "--dev-ids",
        metavar="FILE",
        help="also write the dev prompt ids here, one per line in numeric order (for --ids of prepare/evaluate)",
    )
    calibrate.add_argument(
        "--test-ids", metavar="FILE", help="also write the test prompt ids here, like --dev-ids"
    )
    calibrate.add_argument("--json", action="store_true", help="print JSON instead of text")
    calibrate.set_defaults(handler=_calibrate)

    power = commands.add_parser("power", help="items needed for a paired accuracy comparison (McNemar)")
    power.add_argument("--delta", type=float, help="accuracy difference to detect: prints the items needed")
    power.add_argument("--items", type=int, help="items available: prints the minimum detectable difference")
    power.add_argument(
        "--discordant", type=float, help="expected share of items where the two models disagree"
    )
    power.add_argument(
        "--from-compare", help="use the observed discordant rate of a saved `compare --format json` output"
    )
    power.add_argument(
        "--outcome",
        choices=("pass_at_draws", "first_draw_pass"),
        default="pass_at_draws",
        help="which binary outcome's discordant rate --from-compare reads",
    )
    power.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level")
    power.add_argument("--power", type=float, default=0.8, help="probability of detecting the difference")
    power.add_argument(
        "--draws", type=int, default=1, help="draws per prompt (reported as the generation budget)"
    )
    power.add_argument("--json", action="store_true", help="print JSON instead of text")
    power.set_defaults(handler=_power)


__all__ = ["add_commands"]
