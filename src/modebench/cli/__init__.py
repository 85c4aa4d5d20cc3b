"""Command-line interface: one module per command group, each a thin skin over the library.

A command module exposes ``add_commands(commands)`` and its handlers parse flags, call one
public function and print. ``main`` maps ``InputError``/``ValueError``/``OSError`` to exit 2
with the message on stderr (no traceback); an evaluation that did not complete exits 3.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from modebench.cli._common import Handler, HelpFormatter, error_message, flag_worded
from modebench.validation import InputError, loads

__all__ = ["build_parser", "evaluate", "main", "read_records"]

#: Command groups (modules of this package) in the order ``modebench --help`` lists them. They
#: are imported when the parser is built, not with this package: ``evaluate`` starts its worker
#: first (``_start_early``), so that the worker's start-up overlaps these imports.
_GROUPS = (
    "evaluation",  # evaluate
    "data",  # prepare, datasets
    "walkthrough",  # walkthrough
    "report",  # report
    "suite",  # build, calibrate, power
    "backends",  # merge
    "stats",  # stats, compare
    "generate",  # generate
    "ingest",  # ingest
    "trajectory",  # trajectory
)

#: ModeBench 0.4.0 surface names of this module (docs/compatibility.md), each the very object of
#: its home module, loaded on first access (PEP 562) for the same reason.
_SURFACE = {
    "evaluate": "modebench.evaluation",
    "load_split": "modebench.data",
    "prepare_requests": "modebench.data",
    "prompt_id": "modebench.data",
    "discover": "modebench.dataset_cache",
    "fetch": "modebench.dataset_cache",
    "VerifierExecutionError": "modebench.diagnostics",
    "software_identity": "modebench.identity",
}


def __getattr__(name: str) -> Any:
    home = _SURFACE.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
    elif name in _GROUPS:
        value = _group(name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_SURFACE, *_GROUPS})


def _group(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def read_records(raw: bytes | str) -> tuple[list[Any], list[str]]:
    """Parse JSONL text into records and ``line N`` locations (blank lines are skipped)."""
    # Bytes are split and decoded line by line, as the file evaluator reads them (so a leading
    # UTF-8 byte order mark is accepted there too, as in ModeBench 0.4.0).
    lines: list[str | bytes] = [*(raw.split(b"\n") if isinstance(raw, bytes) else raw.split("\n"))]
    records, locations = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(loads(line))
        except InputError as exc:
            raise InputError(f"line {number}: {exc}") from None
        locations.append(f"line {number}")
    return records, locations


def _version() -> str:
    from modebench import __version__  # noqa: PLC0415 - deferred: a command loads its modules when it runs, so --help and other commands start fast

    return (
        f"modebench {__version__} — the successor of ModeBench 0.4.0 (same verifiers and "
        "receipts: modebench-verifiers-v1)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modebench",
        description="Grade saved model responses for correctness and mode diversity.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    for name in _GROUPS:
        _group(name).add_commands(commands)
    _format_all(commands)
    return parser


def _format_all(commands: Any) -> None:
    """Every command's help shows its options' defaults (nested groups such as ``datasets`` too)."""
    for command in commands.choices.values():
        command.formatter_class = HelpFormatter
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _format_all(action)


#: Exit codes of a run stopped by SIGINT / SIGTERM (128 + signal number, as shells report them).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
INTERRUPTED = "interrupted; rerun the same command with --resume"


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that it unwinds like Ctrl-C."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


def _fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    # A runtime error is not a usage error: the message alone, in argparse's format, without the
    # usage banner that would make it read like a typo in the command.
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def _closed_pipe() -> int:
    # The reader went away (``modebench datasets list | head -2``): stop quietly, as a filter
    # should; stdout is pointed at /dev/null so the interpreter's final flush cannot complain.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code.

    Called without ``argv`` (the console entry point, and 0.4.0's ``main()``, which read
    ``sys.argv``), a non-zero code is raised as ``SystemExit(code)``, as 0.4.0 did; with
    ``argv`` it is returned.
    """
    code = _main(argv)
    if argv is None and code:
        raise SystemExit(code)
    return code


def _start_early(argv: Sequence[str]) -> bool:
    """For ``evaluate`` on the local back end: start its first worker and the software identity's
    source hashes and git reads now, while this process imports the evaluator (about 0.1 s of
    a run's critical path). True if a worker was parked (``isolation.early``)."""
    if not argv or argv[0] != "evaluate" or any(arg in ("-h", "--help") for arg in argv):
        return False
    if any(arg == "--backend" or arg.startswith("--backend=") for arg in argv):
        return False  # ray (or a named back end): no local worker to start
    from modebench import identity  # noqa: PLC0415 - light: hashlib, json and the contracts
    from modebench.isolation import early  # noqa: PLC0415 - light: the standard library only

    early.park()
    threading.Thread(target=identity.prefetch, name="modebench-identity", daemon=True).start()
    return True


def _main(argv: Sequence[str] | None) -> int:
    parked = _start_early(sys.argv[1:] if argv is None else list(argv))
    try:
        return _run(argv)
    finally:
        if parked:
            from modebench.isolation import early  # noqa: PLC0415 - imported by _start_early

            early.discard()  # a worker no pool adopted (a usage error, an early failure)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return handler(args, parser)
    except BrokenPipeError:
        return _closed_pipe()
    except (ValueError, OSError) as exc:
        hint = getattr(exc, "hint", None)
        if (
            isinstance(hint, str) and not flag_worded(exc)
        ):  # a worded error says its hint itself  # said on its own line: the message itself stays the contract's
            _fail(parser, f"{error_message(exc)}\n{parser.prog}: hint: {hint}")
        _fail(parser, error_message(exc))
    except (KeyboardInterrupt, Terminated) as exc:
        # Committed work is kept (workers are already stopped); one line says how to continue.
        print(INTERRUPTED if args.command == "evaluate" else "interrupted", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())

__all__ += [
    "VerifierExecutionError",
    "discover",
    "fetch",
    "load_split",
    "prepare_requests",
    "prompt_id",
    "software_identity",
]
