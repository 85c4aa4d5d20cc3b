"""Execution back ends under the grading step: the local worker pool, Ray actors, and shards.

Every back end grades the same chunks of prompts with the same bounded worker subprocess
(rlimits, per-item deadlines, restart), so verdicts never depend on where grading ran; the
streaming evaluator commits results in input order whichever back end produced them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from modebench.validation import InputError

BACKENDS = ("local", "ray")

__all__ = ["BACKENDS", "Grader", "make_grader"]


class Grader(Protocol):
    """What the streaming evaluator needs from a back end."""

    workers: int

    def __enter__(self) -> Grader: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None: ...

    def prestart(self) -> None: ...

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]: ...

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]: ...


def make_grader(backend: str = "local", workers: int = 1, address: str | None = None) -> Grader:
    """A grader for ``backend``; ``address`` names a Ray cluster (None: start or reuse a local one)."""
    if backend == "local":
        if address is not None:
            raise InputError("a cluster address applies only to the ray back end")
        from modebench.parallel import ParallelGrader

        return ParallelGrader(workers)
    if backend == "ray":
        from modebench.backends.ray_pool import RayGrader

        return RayGrader(workers, address)
    raise InputError(f"unknown back end: {backend!r} (expected one of: {', '.join(BACKENDS)})")
