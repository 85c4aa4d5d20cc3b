"""The interface the engine grades through (``modebench.engine``): what every back end provides."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

__all__ = ["Grader", "unprepared"]


class Grader(Protocol):
    """Everything the engine calls on a back end (``modebench.engine``); nothing is probed."""

    #: Worker processes (recorded in the receipt's execution history).
    workers: int

    def __enter__(self) -> Grader: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None: ...

    def prestart(self) -> None: ...

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]: ...

    def prepared_lines(
        self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        """``(number, line, reply)`` in input order: ``reply`` is the line's prepared record when a
        worker preflighted it (``modebench.isolation.prepare``), else None (:func:`unprepared`)."""
        ...

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]: ...


def unprepared(lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes, Any]]:
    """``prepared_lines`` of a back end whose workers do not preflight: every line to the engine."""
    for number, line in lines:
        yield number, line, None
