"""One-off work a plug-in meets in the middle of an item (a lazy import), kept off its deadline.

A worker grades each item under its own wall deadline and warms a domain before any deadline is
armed. A domain that loads a heavy library only when an item first needs it (MathIR's SymPy, for
what its transition table does not decide) would charge that load to whichever item came first,
so it runs the load through :func:`untimed`: in a worker, the worker's pauser stops the item's
clock around it (``isolation.worker_main``); anywhere else (in-process grading) it just runs.
"""

from __future__ import annotations

from collections.abc import Callable

_pauser: Callable[[Callable[[], None]], None] | None = None


def install(pauser: Callable[[Callable[[], None]], None] | None) -> None:
    """Set the process's pauser (the worker does, at start-up); None removes it."""
    global _pauser
    _pauser = pauser


def untimed(action: Callable[[], None]) -> None:
    """Run ``action`` outside the current item's deadline (if any)."""
    pauser = _pauser
    if pauser is None:
        action()
    else:
        pauser(action)


__all__ = ["install", "untimed"]
