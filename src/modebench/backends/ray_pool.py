"""Grading on a Ray cluster: warm actors, each driving the project's own bounded worker.

Each actor owns one ``BoundedWorker`` subprocess, so a hostile response is contained inside the
actor's node exactly as on a laptop (rlimits, per-item deadlines, restart); Ray only carries
chunks of encoded requests there and replies back. Chunks are larger than the local pool's,
so one Ray task round trip is spread over many responses. The parent keeps the streaming
contract: results are consumed in input order, so the ledger, journal and receipt are the same
bytes as a local run. An actor that dies is restarted by Ray and its task retried (grading is
pure, so a retried chunk gives the same replies); one that cannot be restarted is replaced.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from modebench.backends.grader import unprepared
from modebench.contracts import install_hint
from modebench.isolation.client import reference_check_with
from modebench.isolation.pool import Chunk, Requests, grade_requests
from modebench.isolation.process import BoundedWorker
from modebench.validation import InputError

RAY_EXTRA_MESSAGE = f"the ray back end requires the 'ray' extra: {install_hint('ray')}"
#: Prompts per Ray task: a task round trip costs about a millisecond, so it is spread over
#: hundreds of responses (measured by ops/benchmarks/benchmark_ray.py).
RAY_CHUNK_PROMPTS = 64
#: Tasks queued per actor, so an actor never idles on a round trip.
TASKS_PER_ACTOR = 2
MAX_RAY_WORKERS = 4096
#: Times one chunk is sent again after its actor died for good before the run fails.
MAX_CHUNK_RETRIES = 3

__all__ = ["RAY_EXTRA_MESSAGE", "RayGrader", "import_ray"]


def import_ray() -> Any:
    """The ``ray`` module, or an input error with the install hint when the extra is missing."""
    try:
        import ray  # noqa: PLC0415 - optional ray extra
    except ImportError:
        raise InputError(RAY_EXTRA_MESSAGE) from None
    return ray


class GradingActor:
    """Body of one Ray actor: a warm bounded worker subprocess and the chunk loop."""

    def __init__(self) -> None:
        self.worker = BoundedWorker()
        self.worker.spawn()  # warm-up (imports, SymPy) starts before any chunk arrives

    def grade(self, requests: Requests, groups: int) -> list[list[dict[str, Any]]]:
        return grade_requests(self.worker, requests, groups)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.worker.close()


class RayGrader:
    """Context manager owning ``workers`` grading actors on a Ray cluster."""

    def __init__(self, workers: int = 1, address: str | None = None) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers <= 0:
            raise InputError("workers must be a positive integer")
        if workers > MAX_RAY_WORKERS:
            raise InputError(f"workers must be between 1 and {MAX_RAY_WORKERS}")
        self.workers = workers
        self.address = address
        self._ray = import_ray()
        self._started_ray = False
        self._actors: list[Any] = []
        self._local: BoundedWorker | None = None  # validates references in the parent
        self._actor_class: Any = None

    def __enter__(self) -> RayGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- cluster -------------------------------------------------------------------------------
    def _connect(self) -> None:
        ray = self._ray
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = self.address or "a new local cluster"
                raise InputError(f"cannot connect to the Ray cluster at {where}: {exc}") from None
            self._started_ray = True
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if self.workers > cpus:
            raise InputError(
                f"the Ray cluster has {cpus} CPUs; a grading actor needs one, so at most {cpus} workers"
            )
        # One CPU per actor: each drives one worker subprocess that grades on that CPU.
        self._actor_class = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=-1)(GradingActor)

    def prestart(self) -> None:
        """Start every actor now, so their warm-up overlaps the parent's hashing and preflight."""
        if self._actor_class is None:
            self._connect()
        while len(self._actors) < self.workers:
            self._actors.append(self._actor_class.remote())

    def actors(self) -> list[Any]:
        """The live actor handles (tests kill one mid-run)."""
        return list(self._actors)

    def close(self) -> None:
        ray = self._ray
        actors, self._actors = self._actors, []
        for actor in actors:
            try:
                ray.get(actor.close.remote(), timeout=10)
            except Exception:  # noqa: BLE001 - a dead actor has nothing left to close
                pass
            ray.kill(actor, no_restart=True)
        if self._local is not None:
            self._local.close()
            self._local = None
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
            self._started_ray = False

    # -- grading -------------------------------------------------------------------------------
    def prepared_lines(
        self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        """Lines are preflighted by the engine itself (no ``prepare`` round trips)."""
        return unprepared(lines)

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        """Validate a reference in a local worker: the same verdict as anywhere, no round trip."""
        self.prestart()
        if self._local is None:
            self._local = BoundedWorker()
        return reference_check_with(self._local, level, domain, answer)

    def _submit(self, slot: int, chunk: Chunk) -> Any:
        return self._actors[slot].grade.remote(chunk.requests, len(chunk.groups))

    def _collect(self, slot: int, chunk: Chunk, ref: Any) -> list[list[dict[str, Any]]]:
        ray = self._ray
        for _ in range(MAX_CHUNK_RETRIES + 1):
            try:
                graded: list[list[dict[str, Any]]] = ray.get(ref)
                return graded
            except ray.exceptions.RayActorError:
                # Ray gave up restarting this actor: replace it and send the chunk again.
                self._actors[slot] = self._actor_class.remote()
                ref = self._submit(slot, chunk)
        raise InputError("a Ray grading actor died repeatedly on the same chunk; see the Ray logs")

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        """Yield ``(seq, prepared, attempts)`` in the order the items were given."""
        self.prestart()
        window: deque[tuple[list[tuple[int, dict[str, Any]]], Chunk, int, Any]] = deque()
        limit = TASKS_PER_ACTOR * self.workers
        source = iter(items)
        exhausted = False
        turn = 0
        while True:
            while not exhausted and len(window) < limit:
                batch = list(islice(source, RAY_CHUNK_PROMPTS))
                if not batch:
                    exhausted = True
                    break
                chunk = Chunk([prepared for _, prepared in batch])
                slot = turn % self.workers
                turn += 1
                window.append((batch, chunk, slot, self._submit(slot, chunk)))
            if not window:
                return
            batch, chunk, slot, ref = window.popleft()
            for (seq, prepared), attempts in zip(batch, chunk.finish(self._collect(slot, chunk, ref))):
                yield seq, prepared, attempts
