"""Coalescing concurrent one-completion grading calls into pool batches.

Some trainers call the reward function once per sample, many at a time: verl's asynchronous
reward loop runs a synchronous ``compute_score`` per sample in its event loop's executor (or
awaits an asynchronous one), OpenRLHF runs ``reward_func`` per sample in ``asyncio.to_thread``.
Handed one by one to :meth:`BatchGrader.grade`, whose lock serialises batches, such a burst costs
one pool round trip per sample. A :class:`Coalescer` groups them instead:

* the first caller that finds no batch in flight becomes the *leader*: it takes every call queued
  so far (its own included) and grades them as one batch;
* calls that arrive while a batch is in flight queue up and join the *next* batch, which one of
  them leads as soon as the pool is free.

:meth:`grade_async` serves coroutines of an event loop: a leader first yields once to the loop so
that the calls already scheduled queue up, and the batch runs in one dedicated thread so the
loop keeps serving the other calls (a burst of 2,048 calls is one batch). :meth:`grade` serves
threads: an executor holds at most its thread count of calls, so a leader waits up to
:data:`GATHER_SECONDS` for as many callers as the previous batch had (the threads coming back
with their next call); a lone caller, whose previous batch held one call, never waits. A bad row (:class:`RewardInputError`) fails only its own call: a
batch holding one is graded again row by row, each row getting its own result or error.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final

from modebench.rl.batch import BatchGrader, Completion, Graded, RewardInputError

__all__ = ["GATHER_SECONDS", "Coalescer"]

#: Longest a thread leader waits for the previous batch's number of callers to queue again.
GATHER_SECONDS: Final = 0.002


@dataclass
class _Slot:
    completion: Completion
    result: Graded | None = None
    error: BaseException | None = None
    done: bool = False

    def outcome(self) -> Graded:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@dataclass
class _LoopQueue:
    """The calls queued by one event loop, and whether a batch of them is in flight."""

    items: list[tuple[Completion, asyncio.Future[Graded]]] = field(default_factory=list)
    busy: bool = False


class Coalescer:
    """Groups concurrent one-completion calls on ``grader`` into batches (module docstring).

    ``batches`` and ``graded`` count the pool batches sent and the completions in them (what a
    test or a benchmark reads to see the coalescing).
    """

    def __init__(self, grader: BatchGrader) -> None:
        self.grader = grader
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # a batch finished: waiting callers look again
        self._arrived = threading.Condition(lock)  # a call queued: the gathering leader counts again
        self._queue: list[_Slot] = []
        self._busy = False
        #: Size of the last batch: how many callers run at once, what a leader waits to gather.
        self._concurrency = 1
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = (
            weakref.WeakKeyDictionary()
        )
        self._executor: ThreadPoolExecutor | None = None
        self.batches = 0
        self.graded = 0

    # -- threads ---------------------------------------------------------------------------------
    def grade(self, completion: Completion) -> Graded:
        """Grade one completion, in a batch with the calls made meanwhile by other threads.
        Unscorable completions are returned, never raised: the caller applies its policy."""
        slot = _Slot(completion)
        with self._cond:
            self._queue.append(slot)
            self._arrived.notify()
            while self._busy and not slot.done:
                self._cond.wait()
            if slot.done:
                return slot.outcome()
            self._busy = True
            # The callers of the last batch are likely on their way back with their next call
            # (an executor's threads): wait a moment for as many to queue, never longer.
            deadline = time.monotonic() + GATHER_SECONDS
            while len(self._queue) < self._concurrency and (left := deadline - time.monotonic()) > 0:
                self._arrived.wait(left)
            batch, self._queue = self._queue, []
            self._concurrency = max(len(batch), 1)
        try:
            outcomes = self._run([item.completion for item in batch])
        except BaseException as exc:  # the pool itself failed: every caller of the batch sees it
            outcomes = [exc] * len(batch)
        with self._cond:
            for item, outcome in zip(batch, outcomes):
                if isinstance(outcome, BaseException):
                    item.error = outcome
                else:
                    item.result = outcome
                item.done = True
            self._busy = False
            self._cond.notify_all()
        return slot.outcome()

    # -- coroutines ------------------------------------------------------------------------------
    async def grade_async(self, completion: Completion) -> Graded:
        """:meth:`grade` for coroutines: calls of one event loop made while a batch is in flight
        join the next batch; the batch runs in a dedicated thread, not on the loop."""
        loop = asyncio.get_running_loop()
        queue = self._loops.get(loop)
        if queue is None:
            queue = self._loops[loop] = _LoopQueue()
        future: asyncio.Future[Graded] = loop.create_future()
        queue.items.append((completion, future))
        if not queue.busy:
            queue.busy = True
            loop.create_task(self._drain(loop, queue))
        return await future

    async def _drain(self, loop: asyncio.AbstractEventLoop, queue: _LoopQueue) -> None:
        try:
            await asyncio.sleep(0)  # let the calls already scheduled on the loop queue up first
            while queue.items:
                batch, queue.items = queue.items, []
                try:
                    outcomes = await loop.run_in_executor(
                        self._thread(), self._run, [completion for completion, _ in batch]
                    )
                except Exception as exc:
                    outcomes = [exc] * len(batch)
                for (_, future), outcome in zip(batch, outcomes):
                    if future.done():  # the caller was cancelled
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
        finally:
            queue.busy = False

    def _thread(self) -> ThreadPoolExecutor:
        with self._cond:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="modebench-coalescer")
            return self._executor

    # -- one batch -------------------------------------------------------------------------------
    def _run(self, completions: Sequence[Completion]) -> list[Graded | BaseException]:
        """Each completion's verdict (row numbers are the batch's), or its own input error."""
        self.batches += 1
        self.graded += len(completions)
        try:
            return list(self.grader.grade(completions, unscorable="mask"))
        except RewardInputError:
            if len(completions) == 1:
                raise
        # A bad row in the batch: grade row by row so that only that row's caller fails (the
        # references already validated are cached, so this costs the bad batch only).
        out: list[Graded | BaseException] = []
        for completion in completions:
            try:
                out.append(self.grader.grade([completion], unscorable="mask")[0])
            except RewardInputError as exc:
                out.append(exc)
        return out
