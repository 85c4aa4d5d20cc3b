"""Execution back ends under the grading step: the local worker pool, Ray actors, and shards.

Every back end grades the same chunks of prompts with the same bounded worker subprocess
(rlimits, per-item deadlines, restart), so verdicts never depend on where grading ran; the
streaming evaluator commits results in input order whichever back end produced them.
"""

from __future__ import annotations

from modebench.backends.grader import Grader, unprepared
from modebench.isolation.pool import ParallelGrader
from modebench.validation import InputError

BACKENDS = ("local", "ray")

__all__ = ["BACKENDS", "Grader", "make_grader", "unprepared"]


def make_grader(backend: str = "local", workers: int = 1, address: str | None = None) -> Grader:
    """A grader for ``backend``; ``address`` names a Ray cluster (None: start or reuse a local one).

    The options were checked by :class:`modebench.engine.spec.RunSpec` (an address with the local
    back end is refused there, with the rule's message); a local grader ignores ``address``.
    """
    if backend == "local":
        return ParallelGrader(workers)
    if backend == "ray":
        # The optional ``ray`` extra: imported only when a Ray back end is asked for.
        from modebench.backends.ray_pool import RayGrader  # noqa: PLC0415 - optional ray extra

        return RayGrader(workers, address)
    raise InputError(f"unknown back end: {backend!r} (expected one of: {', '.join(BACKENDS)})")
