"""Interpreter-wide settings a plug-in could change and a built-in verdict depends on.

Countdown's 4,300-digit literal limit is CPython's ``sys.int_max_str_digits``; deep expressions
meet the recursion limit; decimal arithmetic follows the thread's context. A third-party plug-in
runs in the same worker, so it could change any of them (at import, or while grading) and flip a
built-in verdict (``\\boxed{1`` + 5,000 zeros + ``}``: ``malformed`` → ``incorrect``).
:func:`snapshot` and :func:`restore` put them back: around every plug-in import, and before every
item a worker grades once a plug-in has been loaded in it (:func:`settle`).
"""

from __future__ import annotations

import decimal
import sys
from typing import NamedTuple

__all__ = ["Settings", "restore", "settle", "snapshot"]


class Settings(NamedTuple):
    int_max_str_digits: int
    recursion_limit: int
    decimal_context: decimal.Context


def snapshot() -> Settings:
    return Settings(sys.get_int_max_str_digits(), sys.getrecursionlimit(), decimal.getcontext().copy())


def restore(saved: Settings) -> None:
    if sys.get_int_max_str_digits() != saved.int_max_str_digits:
        sys.set_int_max_str_digits(saved.int_max_str_digits)
    if sys.getrecursionlimit() != saved.recursion_limit:
        sys.setrecursionlimit(saved.recursion_limit)
    decimal.setcontext(saved.decimal_context.copy())
    global _baseline
    if _baseline is None:  # the settings before the first plug-in: what every later item gets
        _baseline = saved


_baseline: Settings | None = None


def settle() -> None:
    """Before grading an item: the settings from before any plug-in (a no-op until one loaded)."""
    if _baseline is not None:
        restore(_baseline)
