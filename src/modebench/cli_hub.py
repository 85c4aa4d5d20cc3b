"""``modebench datasets export DIR``: a registry's splits as a Hugging Face dataset directory.

The handler parses its flags, calls :func:`modebench.api.export_dataset` and prints its summary;
errors reach ``modebench.cli.main`` as ``InputError``/``OSError`` (exit 2).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_commands"]

REGISTRY_HELP = (
    "registry to export: a path, URL, 'bundled' or hf://datasets/OWNER/NAME@COMMIT "
    "(default: the packaged ModeBench 0.4.0 registry)"
)


def _export(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from modebench.api import export_dataset

    summary = export_dataset(
        args.directory, registry=args.registry, cache_dir=args.cache_dir, offline=args.offline
    )
    print(json.dumps(summary), flush=True)
    return 0


def add_commands(actions: Any) -> None:
    """Add ``export`` to the ``datasets`` subcommands."""
    export = actions.add_parser(
        "export",
        help="write a registry's verified splits as a Hugging Face dataset directory (README.md card)",
    )
    export.add_argument("directory", help="new directory to create (never overwritten)")
    export.add_argument("--registry", help=REGISTRY_HELP)
    export.add_argument("--cache-dir", help="cache base instead of $XDG_CACHE_HOME/modebench")
    export.add_argument("--offline", action="store_true", help="never download")
    export.set_defaults(handler=_export)
