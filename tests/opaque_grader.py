"""The local pool behind a grader type the engine does not recognise as its own pool.

The engine grades while preflight runs, and workers assemble results, only for a
``ParallelGrader``; this wrapper delegates every call to a local pool but is not one, so a test can
run the same workers on the sequential, parent-assembled path and compare the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from modebench.backends import make_grader


class OpaqueLocalGrader:
    """``make_grader("local", workers)``, every call delegated, under a type of its own."""

    def __init__(self, workers: int = 1) -> None:
        self.inner = make_grader("local", workers)
        self.workers = workers

    def __enter__(self) -> OpaqueLocalGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()

    def close(self) -> None:
        self.inner.close()

    def prestart(self) -> None:
        self.inner.prestart()

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        return self.inner.reference_check(level, domain, answer)

    def prepared_lines(
        self, run: Any, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        return self.inner.prepared_lines(run, lines)

    def results(self, items: Iterable[tuple[int, dict[str, Any]]]) -> Any:
        return self.inner.results(items)
