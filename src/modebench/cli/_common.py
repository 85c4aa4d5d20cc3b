"""What every command module shares: the handler type, exit codes and JSON printing.

Exit codes: 0 success, 2 bad input (argparse's own code, raised through ``parser.error``), 3 an
evaluation that did not complete (``EXIT_FAILED``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

__all__ = ["EXIT_FAILED", "Handler", "int_value", "print_json"]

EXIT_FAILED = 3
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


def print_json(value: Any, indent: int | None = None) -> None:
    """One JSON document on stdout, flushed (a pipe reader sees it at once)."""
    print(json.dumps(value, indent=indent), flush=True)


def int_value(text: str) -> int:
    """An ``int`` argument whose range the library checks (so its message is the library's)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
