"""What every command module shares: the handler type, exit codes, JSON printing and the
translation of library errors into the CLI's words.

Exit codes: 0 success, 2 bad input (argparse's own code, raised through ``parser.error``), 3 an
evaluation that did not complete (``EXIT_FAILED``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "CONFIGS_HELP",
    "EXIT_FAILED",
    "REGISTRY_HELP",
    "SPLITS",
    "Handler",
    "add_config_list",
    "add_ids_option",
    "add_split_options",
    "configs_of",
    "error_message",
    "int_value",
    "print_json",
]

EXIT_FAILED = 3
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]

#: Library rules (``OptionError.code``) said with flag names. ``{option}`` is the library's option
#: name spelled as a flag (``dev_fraction`` → ``dev-fraction``); other fields are the error's details.
FLAG_MESSAGES = {
    "cache_requires_config": "--cache-dir and --offline require --config",
    "registry_requires_config": "--registry requires --config",
    "limit_requires_config": "--limit requires --config",
    "checkpoint_exists": "checkpoint already exists: {path}; use --resume or a new destination",
    "registry_not_cached": "registry is not cached: {source}; run datasets fetch without --offline",
    "dataset_not_cached": "dataset is not cached: {label}; run datasets fetch without --offline",
    "dataset_not_cached_packaged": (
        "dataset is not cached: {label}; run datasets fetch without --offline\n"
        "  or use the release bundled with the package (no network needed): --registry bundled"
    ),
    "download_failed": "{error}\n  tried {url}",
    "download_failed_packaged": (
        "{error}\n  tried {url}\n  no network? the release bundled with the package needs none: --registry bundled"
    ),
    "positive_integer": "--{option} must be a positive integer",
    "nonnegative_integer": "--{option} must be a nonnegative integer",
    "unit_fraction": "--{option} must be between 0 and 1",
    "discordant_range": "--discordant must be in (0, 1]",
    "delta_range": "--delta must be positive and smaller than the discordant rate (and δ² < ψ)",
    "release_rows": "--rows-eval must be positive and --rows-dev/--rows-train nonnegative",
    "power_target": "give exactly one of --delta (items needed) or --items (detectable difference)",
    "address_requires_ray": "--ray-address requires --backend ray",
}


def flag_worded(error: Exception) -> bool:
    """Whether the CLI says this library error in its own words (``FLAG_MESSAGES``, hint included)."""
    return getattr(error, "code", None) in FLAG_MESSAGES and isinstance(getattr(error, "details", None), dict)


def error_message(error: Exception) -> str:
    """The text the CLI prints for a library error: flag names where the library named options.

    An ``OptionError``, or any error carrying its ``code`` and ``details`` (a failed download is
    0.4.0's plain ``InputError`` and carries them)."""
    if not flag_worded(error):
        return str(error)
    details = dict(getattr(error, "details"))  # noqa: B009 - set on the instance, see flag_worded
    if "option" in details:
        details["option"] = str(details["option"]).replace("_", "-")
    return FLAG_MESSAGES[getattr(error, "code")].format(**details)  # noqa: B009 - as above


class HelpFormatter(argparse.HelpFormatter):
    """Help that states each option's default, when it has a meaningful one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "(default" in text  # the text states its default itself: never say it twice
            or default is None
            or default is False  # identity: a default of 0 is meaningful (0 == False)
            or default == argparse.SUPPRESS
            or not action.option_strings
            or isinstance(action, argparse._HelpAction | argparse._VersionAction)
        ):
            return text
        return f"{text} (default: %(default)s)"


def print_json(value: Any, indent: int | None = None) -> None:
    """One JSON document on stdout, flushed (a pipe reader sees it at once)."""
    print(json.dumps(value, indent=indent), flush=True)


def int_value(text: str) -> int:
    """An ``int`` argument whose range the library checks (so its message is the library's)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


SPLITS = ("train", "dev", "eval")
REGISTRY_HELP = (
    "registry JSON (path or URL), bundled, or hf://datasets/OWNER/NAME@COMMIT instead of the packaged "
    "ModeBench 0.4.0 registry"
)


#: ``--config`` of ``prepare`` and ``evaluate``: one name is the classic run; more make a suite.
CONFIGS_HELP = (
    "frozen dataset config, e.g. level1_countdown (see 'datasets list'); several — a comma list, "
    "repeated --config, or 'all' (every config of the registry with --split) — make a suite: "
    "{suite} (docs/suites.md)"
)


def add_config_list(parser: argparse.ArgumentParser, *, required: bool, suite: str) -> None:
    """``--config`` taking one name, several (comma list or repeated) or ``all``; ``--limit N``."""
    parser.add_argument(
        "--config",
        action="append",
        required=required,
        metavar="NAME[,NAME...]|all",
        help=CONFIGS_HELP.format(suite=suite),
    )
    parser.add_argument(
        "--limit",
        type=int_value,
        metavar="N",
        help="quick trial: only the first N prompts of each config's split, recorded as such "
        "(default: every prompt)",
    )


def configs_of(args: argparse.Namespace) -> tuple[str | None, list[str] | None]:
    """(the one config of a classic run, or None; the selection of a suite, or None)."""
    from modebench.suite.configs import is_single  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    if args.config is None:
        return None, None
    if is_single(args.config):
        return args.config[0], None  # as given: the classic command, byte for byte
    return None, list(args.config)


def add_split_options(
    parser: argparse.ArgumentParser,
    *,
    config: str | None = "frozen dataset config, e.g. level1_countdown (see 'datasets list')",
    config_required: bool = False,
    config_group: argparse._ActionsContainer | None = None,
    split: bool = True,
    data_root: bool = True,
) -> None:
    """The options naming where a frozen split comes from, the same on every command:
    ``--config --split --data-root --cache-dir --offline --registry``.

    ``config=None`` leaves ``--config`` out (the command declares its own); ``config_group`` puts it
    into another container (a mutually exclusive group of sources). ``data_root=False`` leaves out
    ``--data-root`` for commands that only read the download cache. ``--data-root`` and ``--cache-dir``
    exclude each other: a data root is read as it is, the cache is where verified downloads go.
    """
    if config is not None:
        (config_group or parser).add_argument("--config", required=config_required, help=config)
    if split:
        parser.add_argument("--split", choices=SPLITS, default="eval", help="split of the config")
    roots: argparse._ActionsContainer = parser.add_mutually_exclusive_group() if data_root else parser
    if data_root:
        roots.add_argument("--data-root", help="explicit data directory (holds manifest.json)")
    roots.add_argument("--cache-dir", help="cache base instead of $XDG_CACHE_HOME/modebench")
    parser.add_argument("--offline", action="store_true", help="never download; use only the verified cache")
    parser.add_argument("--registry", help=REGISTRY_HELP)


def add_ids_option(parser: argparse.ArgumentParser, effect: str) -> None:
    """``--ids FILE``: a prompt-id list as ``calibrate --dev-ids/--test-ids`` writes it."""
    parser.add_argument(
        "--ids",
        metavar="FILE",
        help=f"{effect}: a file of prompt ids, one per line ('#' comments and blank lines ignored), "
        "e.g. written by 'calibrate --dev-ids/--test-ids'",
    )
