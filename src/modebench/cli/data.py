"""The data commands of the CLI: ``prepare`` and ``datasets {card,list,fetch,inspect,export}``.

Each handler converts its arguments and calls one public function; errors are raised as
``InputError``/``ValueError``/``OSError`` and ``modebench.cli.main`` turns them into exit 2.
"""

from __future__ import annotations

import argparse
from typing import Any

from modebench.cli._common import (
    REGISTRY_HELP,
    SPLITS,
    add_config_list,
    add_ids_option,
    add_split_options,
    configs_of,
    print_json,
)

__all__ = ["add_commands"]


def _source(args: argparse.Namespace) -> dict[str, Any]:
    """The flags naming where a split comes from, as the library's keyword arguments."""
    return {
        "data_root": args.data_root,
        "cache_dir": args.cache_dir,
        "offline": args.offline,
        "registry": args.registry,
    }


def _prepare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    config, suite = configs_of(args)
    if suite is not None:
        from modebench.api import prepare_suite  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

        if args.ids is not None:
            parser.error("--ids applies to a single --config")
        print_json(prepare_suite(args.output, suite, args.split, limit=args.limit, **_source(args)))
        return 0
    from modebench.data import export_requests  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    assert config is not None  # --config is required
    print_json(
        export_requests(args.output, config, args.split, ids=args.ids, limit=args.limit, **_source(args))
    )
    return 0


def _list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.dataset_cache import listing  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    print(listing(args.config, args.split, as_json=args.json, registry=args.registry), flush=True)
    return 0


def _example(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import example_record  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    print_json(example_record(args.domain, args.level))
    return 0


def _card(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.cards import card  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    print_json(card(args.config, registry=args.registry), indent=2)
    return 0


def _fetch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.dataset_cache import fetch  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    root = fetch(
        args.config, args.split, cache_dir=args.cache_dir, offline=args.offline, registry=args.registry
    )
    print_json({"data_root": str(root), "config": args.config, "split": args.split, "verified": True})
    return 0


def _inspect(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.data import inspect  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    payload = inspect(args.config, args.split, args.row, show_reference=args.show_reference, **_source(args))
    print_json(payload, indent=2)
    return 0


def _export(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import export_dataset  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    print_json(
        export_dataset(args.directory, registry=args.registry, cache_dir=args.cache_dir, offline=args.offline)
    )
    return 0


def add_commands(subparsers: Any) -> None:
    """Add ``prepare`` and ``datasets`` to the top-level subparsers (in CLI order)."""
    prepare = subparsers.add_parser("prepare", help="export frozen requests (no references) as JSONL")
    add_config_list(prepare, required=True, suite="--output is then a new directory of <config>.jsonl files")
    add_split_options(prepare, config=None)
    prepare.add_argument(
        "--output",
        required=True,
        help="request JSONL to write, or the directory for several configs (never overwritten)",
    )
    add_ids_option(prepare, "export only these prompts")
    prepare.set_defaults(handler=_prepare)

    datasets = subparsers.add_parser("datasets", help="list, describe, fetch and inspect frozen splits")
    actions = datasets.add_subparsers(dest="action", required=True)

    card = actions.add_parser("card", help="print the dataset card of a configuration")
    card.add_argument("--config", required=True, help="dataset config, e.g. level1_countdown")
    card.add_argument("--registry", help=REGISTRY_HELP)
    card.set_defaults(handler=_card)
    from modebench.cli.evaluation import with_reference_formats  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    with_reference_formats(card)  # the card describes a split; its rows' answer format is here

    example = actions.add_parser(
        "example",
        help="print one complete evaluate input record of a domain (a generated task with its whole "
        "answer object and a response that verifies); redirect it to a .jsonl file to evaluate",
    )
    example.add_argument("domain", help="the domain, e.g. countdown (an unknown name lists the valid ones)")
    example.add_argument("--level", type=int, default=1, help="the level of the example task")
    example.set_defaults(handler=_example)

    listing = actions.add_parser("list", help="list registry splits")
    listing.add_argument("--config", help="only this config")
    listing.add_argument("--split", choices=SPLITS, help="only this split")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.add_argument("--registry", help=REGISTRY_HELP)
    listing.set_defaults(handler=_list)

    fetch = actions.add_parser("fetch", help="download and verify a split into the cache")
    add_split_options(
        fetch, config="dataset config to download and verify", config_required=True, data_root=False
    )
    fetch.set_defaults(handler=_fetch)

    inspect = actions.add_parser("inspect", help="show one row's prompt (and optionally its reference)")
    add_split_options(inspect, config="dataset config to show a row of", config_required=True)
    inspect.add_argument("--row", type=int, default=0, help="zero-based row index")
    inspect.add_argument("--show-reference", action="store_true", help="also print the reference answer")
    inspect.set_defaults(handler=_inspect)

    export = actions.add_parser(
        "export",
        help="write a registry's verified splits as a Hugging Face dataset directory (README.md card)",
    )
    export.add_argument("directory", help="new directory to create (never overwritten)")
    add_split_options(export, config=None, split=False, data_root=False)
    export.set_defaults(handler=_export)
