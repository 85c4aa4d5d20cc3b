"""Grading prepared prompts on N isolated workers, results delivered strictly in input order.

One request per prompt carries all of its (distinct) responses. With N ≥ 2 workers a bounded
window of prompts is in flight; the window is several times N so that one slow prompt does not
idle the other workers (results are still consumed in order, so memory stays bounded).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from modebench.diagnostics import MAX_REQUEST_BYTES, MAX_RESPONSE_CHARS, result
from modebench.domains._pipeline import encoded_size
from modebench.worker_process import BoundedWorker

MAX_WORKERS = 8
WINDOW_PER_WORKER = 8
_ENVELOPE = len('{"operation": "grade", "level": , "domain": , "answer": , "text": }') + 1


def grade_prompt(worker: BoundedWorker, prepared: dict[str, Any]) -> list[dict[str, Any]]:
    """Grade all responses of one bound record through ``worker``; same results as one by one."""
    level, domain = prepared["level"], prepared["domain"]
    answer = prepared["row"]["answer"]
    texts: list[str] = prepared["raw"]["responses"]
    fixed = _ENVELOPE + encoded_size(level) + encoded_size(domain) + encoded_size(answer)
    attempts: list[dict[str, Any] | None] = [None] * len(texts)
    pending: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        if len(text) > MAX_RESPONSE_CHARS:
            attempts[index] = result("resource_limit", detail="response character limit exceeded")
        # No character escapes to more than 12 bytes: only long texts need the exact size.
        elif (
            fixed + 12 * len(text) + 2 > MAX_REQUEST_BYTES and fixed + encoded_size(text) > MAX_REQUEST_BYTES
        ):
            attempts[index] = result("resource_limit", detail="request byte limit exceeded")
        else:
            pending.setdefault(text, []).append(index)  # identical responses are graded once
    if pending:
        unique = list(pending)
        for offset in range(0, len(unique), 64):
            chunk = unique[offset : offset + 64]
            for text, graded in zip(chunk, worker.grade_batch(level, domain, answer, chunk)):
                for index in pending[text]:
                    attempts[index] = dict(graded)
    return [attempt for attempt in attempts if attempt is not None]


class ParallelGrader:
    """Context manager owning N lazily started workers."""

    def __init__(self, workers: int = 1) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers <= 0:
            raise ValueError("workers must be a positive integer")
        if workers > MAX_WORKERS:
            raise ValueError(f"workers must be between 1 and {MAX_WORKERS}")
        self.workers = workers
        self._all: list[BoundedWorker] = []
        self._idle: list[BoundedWorker] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._executor: ThreadPoolExecutor | None = None

    def __enter__(self) -> ParallelGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._cancelled.set()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        with self._lock:
            workers, self._all, self._idle = self._all + self._idle, [], []
        for worker in workers:
            worker.close()

    def prestart(self) -> None:
        """Spawn every worker now, so their warm-up overlaps the caller's preflight."""
        with self._lock:
            while len(self._idle) + len(self._all) < self.workers:
                worker = BoundedWorker()
                worker.spawn()
                self._idle.append(worker)

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        """Validate a reference on the first of this pool's workers (preflight, before grading)."""
        from modebench.verifier import reference_check_with

        self.prestart()
        with self._lock:
            first = (self._idle or self._all)[0]
        return reference_check_with(first, level, domain, answer)

    def _worker(self) -> BoundedWorker:
        worker = getattr(self._local, "worker", None)
        if worker is None:
            with self._lock:
                worker = self._idle.pop() if self._idle else BoundedWorker()
                self._all.append(worker)
            self._local.worker = worker
        return worker

    def _grade(self, prepared: dict[str, Any]) -> list[dict[str, Any]]:
        if self._cancelled.is_set():
            raise RuntimeError("grading cancelled")
        return grade_prompt(self._worker(), prepared)

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        """Yield ``(seq, prepared, attempts)`` in the order the items were given."""
        # Even one worker is driven from a grading thread: the worker grades prompt n+1 while
        # this thread commits prompt n, so the two cores overlap. Results stay in input order.
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="modebench-grader")
        window: deque[tuple[int, dict[str, Any], Future[list[dict[str, Any]]]]] = deque()
        limit = WINDOW_PER_WORKER * self.workers
        source = iter(items)
        exhausted = False
        while True:
            while not exhausted and len(window) < limit:
                item = next(source, None)
                if item is None:
                    exhausted = True
                    break
                window.append((item[0], item[1], self._executor.submit(self._grade, item[1])))
            if not window:
                return
            seq, prepared, future = window.popleft()
            yield seq, prepared, future.result()


__all__ = ["MAX_WORKERS", "ParallelGrader", "grade_prompt"]
