"""Grading prepared prompts on N isolated workers, results delivered strictly in input order.

One request per prompt carries all of its (distinct) responses. With N ≥ 2 workers a bounded
window of prompts is in flight; the window is several times N so that one slow prompt does not
idle the other workers (results are still consumed in order, so memory stays bounded).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from modebench.diagnostics import MAX_REQUEST_BYTES, UNSCORABLE, result
from modebench.isolation.assemble import Assembled, Plan, parse_assembled, prompts_request
from modebench.isolation.client import reference_check_with
from modebench.isolation.prepare import MAX_LINE_BYTES, MAX_REQUEST_LINES_BYTES, prepared_reply, request_line
from modebench.isolation.process import BoundedWorker
from modebench.isolation.protocol import decode_line, groups_request, item_reply
from modebench.validation import is_integer

MAX_WORKERS = 8
#: Prompts per worker request, and requests in flight per worker: a worker always has its next
#: request queued, and one round trip serves many prompts. The first request of a run carries
#: ``CHUNK_PROMPTS`` prompts, so grading starts at once; each next one twice as many, up to
#: ``MAX_CHUNK_PROMPTS``: a long run pays a quarter of the round trips (each one a moment where a
#: worker waits for the parent's next request).
CHUNK_PROMPTS = 16
MAX_CHUNK_PROMPTS = 64
CHUNKS_PER_WORKER = 2
#: Input lines per preflight request (``prepared_lines``), growing the same way.
PREPARE_LINES = 64
MAX_PREPARE_LINES = 256
#: Worst-case escaped bytes of texts in one request (the worker reads lines of up to 64 MiB).
REQUEST_BUDGET = 16 * MAX_REQUEST_BYTES


#: One prompt on its way to a worker (its home is :mod:`modebench.isolation.assemble`, where the
#: worker plans prompts it assembles with the same code).
_Plan = Plan


def _requests(
    groups: list[tuple[Any, Any, Any, list[str]]], fixed: list[int]
) -> list[list[tuple[int, int, int]]]:
    """Split groups into worker requests of bounded size: ``[(group, start, stop), ...]`` each.

    The bound is on the worst-case escaped size (12 bytes per character), so a request always
    fits the worker's line cap however the texts are spelled.
    """
    requests: list[list[tuple[int, int, int]]] = []
    current: list[tuple[int, int, int]] = []
    size = 0
    for index, group in enumerate(groups):
        start = 0
        for position, text in enumerate(group[3]):
            cost = 12 * len(text) + 64
            if size + cost + fixed[index] > REQUEST_BUDGET and (current or position > start):
                if position > start:
                    current.append((index, start, position))
                requests.append(current)
                current, size, start = [], 0, position
            size += cost + (fixed[index] if position == start else 0)
        if len(group[3]) > start:
            current.append((index, start, len(group[3])))
    if current:
        requests.append(current)
    return requests


Requests = list[tuple[list[tuple[int, int, int]], list[Any], "bytes | None"]]


def grade_requests(worker: BoundedWorker, requests: Requests, groups: int) -> list[list[dict[str, Any]]]:
    """Send a chunk's encoded requests to ``worker``; the replies of each of ``groups`` groups.

    A chunk's requests are plain data, so a remote back end ships them to a grader elsewhere and
    calls this same function there.
    """
    graded: list[list[dict[str, Any]]] = [[] for _ in range(groups)]
    for request, pieces, data in requests:
        for (index, _, _), replies in zip(request, worker.grade_groups(pieces, data)):
            graded[index].extend(replies)
    return graded


class Chunk:
    """Prompts made ready for one worker: planned, split into requests, requests encoded.

    Building a chunk and finishing it (``finish``) need no worker, so the pool does both on the
    consuming thread while a grading thread keeps the worker busy with the previous chunk.
    """

    def __init__(self, prompts: list[dict[str, Any]], answered: int = 0) -> None:
        self.plans = [_Plan(prepared) for prepared in prompts]
        self.groups = [
            (prepared["level"], prepared["domain"], plan.answer_json, list(plan.pending))
            for prepared, plan in zip(prompts, self.plans)
        ]
        fixed = [len(plan.answer_json) for plan in self.plans]
        self.requests: Requests = []
        # ``answered``: the first prompt's first texts already have replies (``PromptsChunk``).
        sending = [
            (*group[:3], group[3][answered:] if index == 0 else group[3])
            for index, group in enumerate(self.groups)
        ]
        for request in _requests(sending, fixed):
            pieces = [(*sending[index][:3], sending[index][3][start:stop]) for index, start, stop in request]
            try:
                data: bytes | None = groups_request(pieces)
            except (TypeError, ValueError, RecursionError):
                data = None  # grade_groups reports it item by item
            self.requests.append((request, pieces, data))

    def grade(self, worker: BoundedWorker) -> list[list[dict[str, Any]]]:
        """The worker's replies for each group's distinct texts."""
        return grade_requests(worker, self.requests, len(self.groups))

    def finish(self, graded: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
        """Every prompt's attempts in response order, repeats given their own copies."""
        return [
            plan.finish(group[3], replies) for plan, group, replies in zip(self.plans, self.groups, graded)
        ]


#: A ``prompts`` request carries at most this many bytes of prepared records (the worker reads
#: lines of up to 64 MiB); a chunk beyond it is graded the ``groups`` way.
PROMPTS_REQUEST_BYTES = 16 * MAX_REQUEST_BYTES


class PromptsChunk:
    """Stored prompts made ready for one worker that assembles their results itself
    (:mod:`modebench.isolation.assemble`): the request is the stored records spliced together.

    ``grade`` gives, per prompt, an :class:`Assembled` result, or ``(prepared, attempts)`` where
    the parent had to finish the prompt itself: a prompt the worker answered ``N``, and every
    prompt from the first one a failure interrupted, which is graded on the ``groups`` path from
    its first unanswered text on, so the failure is placed and reported as that path does.
    """

    def __init__(self, prompts: list[tuple[int, str, str]], policy: str) -> None:
        self.prompts = prompts
        self.data = prompts_request(policy, [(seq, text) for seq, _, text in prompts])
        self.domains = {domain for _, domain, _ in prompts}

    def grade(self, worker: BoundedWorker) -> list[Any]:
        lines, _ = worker.prompts(self.data, len(self.prompts), self.domains)
        out: list[Any] = []
        for position, (_, _, text) in enumerate(self.prompts):
            answered = lines[position] if position < len(lines) else []
            last = answered[-1] if answered else b""
            if last[:1] == b"A":
                try:
                    out.append(parse_assembled(last))
                    continue
                except (ValueError, RecursionError):
                    pass  # out of shape: this prompt and the rest the groups way
            prepared = json.loads(text)
            texts = list(_Plan(prepared).pending)
            items = answered[:-1] if last[:1] in (b"A", b"N") else answered
            replies, complete = _item_replies(items, texts)
            if complete and last[:1] == b"N":
                out.append((prepared, _Plan(prepared).finish(texts, replies)))
                continue
            rest = [prepared] + [json.loads(later) for _, _, later in self.prompts[position + 1 :]]
            chunk = Chunk(rest, answered=len(replies))
            graded = chunk.grade(worker)
            graded[0] = replies + graded[0]
            out.extend(zip(rest, chunk.finish(graded)))
            break
        return out


def _item_replies(lines: list[bytes], texts: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """Item reply lines of one prompt decoded and checked as ``BoundedWorker`` does, up to the
    first that ends its worker (a refused reply becomes a ``worker_failure``, as there); whether
    every text got a reply that lets grading go on."""
    replies: list[dict[str, Any]] = []
    for line, text in zip(lines, texts):
        try:
            reply = item_reply(decode_line(line), text)
        except (ValueError, RecursionError) as exc:
            replies.append(result("worker_failure", detail=f"{type(exc).__name__}: {exc}"))
            return replies, False
        replies.append(reply)
        if reply["status"] in UNSCORABLE and reply["status"] != "invalid_reference":
            return replies, False
    return replies, len(replies) == len(texts)


def grade_prompts(worker: BoundedWorker, prompts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Grade all responses of several bound records in few worker round trips (input order)."""
    chunk = Chunk(prompts)
    return chunk.finish(chunk.grade(worker))


def _next_request(
    source: Iterator[tuple[int, bytes]], most: int
) -> tuple[list[tuple[int, bytes]], list[tuple[int, str]], list[int], bool]:
    """The next ``prepare`` request's share of ``source``: up to ``most`` lines (or
    ``MAX_REQUEST_LINES_BYTES``), the ``(number, text)`` pairs to send (lines a worker may
    prepare), their positions in the share, and whether ``source`` ran out."""
    chunk: list[tuple[int, bytes]] = []
    sent: list[tuple[int, str]] = []
    positions: list[int] = []
    size = 0
    for number, line in source:
        chunk.append((number, line))
        if len(line) <= MAX_LINE_BYTES and not line.startswith(b"\xef\xbb\xbf"):
            try:
                sent.append((number, line.decode("utf-8")))
                positions.append(len(chunk) - 1)
                size += len(line)
            except UnicodeDecodeError:
                pass  # the caller reports it
        if len(chunk) >= most or size >= MAX_REQUEST_LINES_BYTES:
            return chunk, sent, positions, False
    return chunk, sent, positions, True


class ParallelGrader:
    """Context manager owning N lazily started workers."""

    def __init__(self, workers: int = 1) -> None:
        if not is_integer(workers) or workers <= 0:
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
        #: The first ``prepare`` request sent ahead (``prime``) and its answer.
        self._primed: tuple[bytes, Future[list[Any] | None]] | None = None

    def __enter__(self) -> ParallelGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        # Threads waiting on a worker see the flag within CANCEL_POLL_SECONDS and kill their
        # worker, so closing never waits for a chunk in flight to finish grading.
        self._cancelled.set()
        self._primed = None
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
                worker = BoundedWorker(cancel=self._cancelled)
                worker.spawn()
                self._idle.append(worker)

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        """Validate a reference on the first of this pool's workers (preflight, before grading)."""
        self.prestart()
        with self._lock:
            first = (self._idle or self._all)[0]
        return reference_check_with(first, level, domain, answer)

    def _worker(self) -> BoundedWorker:
        worker = getattr(self._local, "worker", None)
        if worker is None:
            with self._lock:
                worker = self._idle.pop() if self._idle else BoundedWorker(cancel=self._cancelled)
                self._all.append(worker)
            self._local.worker = worker
        return worker

    def _grade(self, chunk: Any) -> Any:
        if self._cancelled.is_set():
            raise RuntimeError("grading cancelled")
        return chunk.grade(self._worker())

    def _prepare(self, data: bytes, expected: int) -> list[Any] | None:
        if self._cancelled.is_set():
            raise RuntimeError("grading cancelled")
        return self._worker().lines(data, expected, decode=prepared_reply)

    def prime(self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]) -> None:
        """Send the first ``prepare`` request of an input now, before :meth:`prepared_lines` is
        asked for it: the engine primes the pool right after starting it, so the worker
        preflights the input's first lines while the engine makes the software identity, hashes
        the input and opens the checkpoint (docs/performance.md). :meth:`prepared_lines` takes
        the answer if its first request is byte for byte the primed one (same run, same lines);
        otherwise the answer is dropped (preparing is pure: nothing else changes)."""
        chunk, sent, _, _ = _next_request(iter(lines), PREPARE_LINES)
        if not sent:
            return
        data = request_line(run, sent)
        self._primed = (data, self._pool().submit(self._prepare, data, len(sent)))

    def prepared_lines(
        self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        """Yield ``(number, line, reply)`` in input order, each line preflighted on a worker
        (:mod:`modebench.isolation.prepare`); ``reply`` is None for a line the caller must handle itself.

        Like :meth:`results`, a window of requests is in flight on every worker while this
        thread consumes replies in order, so memory stays bounded.
        """
        executor = self._pool()
        window: deque[tuple[list[tuple[int, bytes]], list[int], Future[list[Any] | None] | None]] = deque()
        limit = CHUNKS_PER_WORKER * self.workers
        source = iter(lines)
        exhausted = False
        lines_per_request = PREPARE_LINES
        primed, self._primed = self._primed, None
        while True:
            while not exhausted and len(window) < limit:
                chunk, sent, positions, exhausted = _next_request(source, lines_per_request)
                if not chunk:
                    break
                lines_per_request = min(2 * lines_per_request, MAX_PREPARE_LINES)
                future: Future[list[Any] | None] | None = None
                if sent:
                    data = request_line(run, sent)
                    if primed is not None and primed[0] == data:
                        future = primed[1]  # sent already, while the caller was getting ready
                    else:
                        future = executor.submit(self._prepare, data, len(sent))
                primed = None
                window.append((chunk, positions, future))
            if not window:
                return
            chunk, positions, future = window.popleft()
            replies: list[Any] = [None] * len(chunk)
            answered = future.result() if future is not None else None
            if answered is not None:
                for position, reply in zip(positions, answered):
                    replies[position] = reply
            for (number, line), reply in zip(chunk, replies):
                yield number, line, reply

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="modebench-grader")
        return self._executor

    def ordered(self, policy: str | None = None) -> OrderedResults:
        """A feed that grades prompts as they are offered and hands results back in that order
        (with ``policy``: stored prompts, results assembled on the workers)."""
        return OrderedResults(self, policy)

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        """Yield ``(seq, prepared, attempts)`` in the order the items were given.

        Items are graded in chunks of prompts, each chunk one worker request; every worker has a
        second chunk waiting, planned and encoded on this thread, so it never idles on a round
        trip. Even one worker is driven from a grading thread, so this thread's bookkeeping
        overlaps the worker's grading.
        """
        feed = self.ordered()
        for seq, prepared in items:
            yield from feed.put(seq, prepared)
        yield from feed.drain()


#: One prompt's result: ``(seq, prepared, attempts)``, or ``(seq, None, Assembled)`` (``OrderedResults``).
Graded = tuple[int, Any, Any]


class OrderedResults:
    """Prompts graded as they are offered, results handed back strictly in the order offered.

    The engine offers prompts while the input is still being preflighted (``put``), takes the
    results that are finished without waiting for the others (``put`` returns them, as does
    ``ready``), and at the end waits for the rest (``drain``). At most ``CHUNKS_PER_WORKER`` chunks
    per worker are in flight: when the window is full, ``put`` waits for the oldest chunk, so
    memory stays bounded however far the offering runs ahead of the workers.

    Without a ``policy`` each item is a prepared record and each result ``(seq, prepared,
    attempts)``. With one (the run's policy for unscorable attempts) each item is a stored prompt
    ``(domain, prepared_json)`` whose result the worker assembles (:class:`PromptsChunk`): a
    result is then ``(seq, None, Assembled)``, or ``(seq, prepared, attempts)`` for a prompt the
    parent finished itself (see ``BALANCE``).
    """

    def __init__(self, grader: ParallelGrader, policy: str | None = None) -> None:
        self._grader = grader
        self._policy = policy
        self._pending: list[tuple[int, Any]] = []
        self._window: deque[
            tuple[list[int], list[dict[str, Any]] | None, Chunk | PromptsChunk, Future[Any]]
        ] = deque()
        self._limit = CHUNKS_PER_WORKER * grader.workers
        #: One worker that fell behind: the parent assembles the next chunk itself (``_submit``).
        self._behind = False
        self._balance = self.BALANCE and grader.workers == 1
        self._chunk = CHUNK_PROMPTS  # prompts of the next request (doubles up to MAX_CHUNK_PROMPTS)

    #: With a single worker, the worker (not the parent) is the longer pole once it assembles
    #: results; the parent then takes the assembly of a chunk whenever it had to wait for the
    #: worker. Both paths give the same bytes. Tests that pin the path turn it off.
    BALANCE = True

    def put(self, seq: int, item: Any) -> list[Graded]:
        """Offer one prompt; the results finished so far (in order), after waiting for the oldest
        chunk only when the window is full."""
        self._pending.append((seq, item))
        if len(self._pending) < self._chunk:
            return self.ready() if self._window and self._window[0][3].done() else []
        out: list[Graded] = []
        if len(self._window) >= self._limit:
            self._behind = self._balance and not self._window[0][3].done()
            out = self._pop()
        self._submit()
        return out + self.ready()

    def ready(self) -> list[Graded]:
        """Results of the oldest chunks that are finished, without waiting."""
        out: list[Graded] = []
        while self._window and self._window[0][3].done():
            out.extend(self._pop())
        return out

    def drain(self) -> Iterator[Graded]:
        """Every remaining result in order, waiting for the workers."""
        if self._pending:
            self._submit()
        while self._window:
            yield from self._pop()

    def _submit(self) -> None:
        chunk, self._pending = self._pending, []
        self._chunk = min(2 * self._chunk, MAX_CHUNK_PROMPTS)
        seqs = [seq for seq, _ in chunk]
        prompts: list[dict[str, Any]] | None = None
        ready: Chunk | PromptsChunk
        if self._policy is None:
            prompts = [item for _, item in chunk]
            ready = Chunk(prompts)
        elif not self._behind and sum(len(item[1]) for _, item in chunk) <= PROMPTS_REQUEST_BYTES:
            ready = PromptsChunk([(seq, domain, text) for seq, (domain, text) in chunk], self._policy)
        else:
            prompts = [json.loads(item[1]) for _, item in chunk]
            ready = Chunk(prompts)
        self._window.append((seqs, prompts, ready, self._grader._pool().submit(self._grader._grade, ready)))

    def _pop(self) -> list[Graded]:
        seqs, prompts, ready, future = self._window.popleft()
        if isinstance(ready, Chunk):
            assert prompts is not None
            return list(zip(seqs, prompts, ready.finish(future.result())))
        out: list[Graded] = []
        for seq, outcome in zip(seqs, future.result()):
            if isinstance(outcome, Assembled):
                out.append((seq, None, outcome))
            else:
                out.append((seq, outcome[0], outcome[1]))
        return out


__all__ = ["MAX_WORKERS", "OrderedResults", "ParallelGrader", "grade_prompts", "grade_requests"]
