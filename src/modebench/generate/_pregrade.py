"""Grading each prompt as soon as its k draws are in, for ``generate --evaluate``.

A background thread takes every prompt whose draws are complete, validates its evaluate record
with the evaluator's own :class:`~modebench.evaluation.Preflight` (so level, domain and reference
are exactly what the evaluation will see) and grades it on the worker pool the evaluation will
use, keeping the attempts in a :class:`~modebench.backends.memo.GradeMemo`. After publication
the normal evaluation runs with a :class:`~modebench.backends.memo.MemoGrader` over that pool
and memo (``docs/generate.md``, "Grading right away"): nothing about validation, the journal or
the receipt changes; only the grading of already graded prompts is skipped.

Pre-grading is an optimisation and never an authority: a record it cannot validate, a grading
error or a stopped thread only leaves prompts out of the memo, and the evaluation grades those
(and reports any error) as it always does.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from modebench._datasets.frozen import open_frozen
from modebench._datasets.roots import SplitSource
from modebench.api_types import EvaluationOptions, Split
from modebench.backends.memo import GradeMemo, MemoGrader
from modebench.engine.spec import check_options
from modebench.generate._ledger import Draw
from modebench.generate._output import response_text
from modebench.generate._plan import FrozenSplitSource, Loaded, Source
from modebench.intake.preflight import Preflight
from modebench.isolation.pool import CHUNK_PROMPTS, ParallelGrader

__all__ = ["PreGrader"]

_END = None


class PreGrader:
    """Collects draws, grades complete prompts in a background thread, owns the pool and memo."""

    def __init__(self, source: Source, loaded: Loaded, k: int) -> None:
        self._source = source
        self._loaded = loaded
        self._k = k
        self._records = {prompt.id: prompt.record for prompt in loaded.prompts}
        self._texts: dict[str, dict[int, str]] = {}
        self._total = k * len(loaded.prompts)
        self._received = 0
        self._queue: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self.memo = GradeMemo()
        # One worker, as the evaluation's default: the receipt records the pool's worker count.
        self.grader = MemoGrader(ParallelGrader(1), self.memo)
        #: Prompts graded ahead; of them, those graded while draws were still to come.
        self.graded = 0
        self.early = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name="modebench-pregrade", daemon=True)
        self._thread.start()

    # -- called by the generating thread -------------------------------------------------------
    def add(self, draws: Iterable[Draw]) -> None:
        """Note finished draws; a prompt whose k draws are all in is queued for grading."""
        for draw in draws:
            texts = self._texts.setdefault(draw.prompt, {})
            if draw.draw in texts:
                continue
            texts[draw.draw] = response_text(draw)
            self._received += 1
            if len(texts) == self._k:
                del self._texts[draw.prompt]
                responses = [texts[index] for index in range(self._k)]
                self._queue.put({**self._records[draw.prompt], "responses": responses})

    def finish(self) -> None:
        """No more draws: grade what is queued, then return (the pool stays up for the evaluation)."""
        self._queue.put(_END)
        self._thread.join()

    def close(self) -> None:
        """Stop grading (not waiting for queued prompts) and stop the pool's workers."""
        self._stopping.set()
        self._queue.put(_END)
        self.grader.close()  # a chunk in flight is cancelled within the pool's poll interval
        self._thread.join()
        self.grader.close()  # a worker the thread started while being stopped

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pregraded_prompts": self.graded,
            "pregraded_while_generating": self.early,
            "memo_hits": self.memo.hits,
            "memo_misses": self.memo.misses,
        }
        if self.error is not None:  # the evaluation graded the rest itself; said for diagnosis
            out["pregrade_error"] = self.error
        return out

    # -- the grading thread --------------------------------------------------------------------
    def _run(self) -> None:
        try:
            preflight = self._preflight()
            if self._stopping.is_set():
                return
            self.grader.prestart()  # the worker's warm-up overlaps the first draws
            ended = False
            while not ended and not self._stopping.is_set():
                batch: list[dict[str, Any]] = []
                item = self._queue.get()
                while item is not _END:
                    batch.append(item)
                    if len(batch) >= CHUNK_PROMPTS or self._queue.empty():
                        break
                    item = self._queue.get()
                ended = item is _END
                self._grade(preflight, batch)
        except Exception as exc:  # never fatal: the evaluation grades whatever is not memoized
            self.error = f"{type(exc).__name__}: {exc}"

    def _grade(self, preflight: Any, batch: list[dict[str, Any]]) -> None:
        prepared = []
        for record in batch:
            try:
                prepared.append(preflight.accept(record, f"prompt {record.get('id')!r}"))
            except Exception:  # an invalid record: the evaluation reports it, with its own text
                continue
        if not prepared or self._stopping.is_set():
            return
        for _, item, attempts in self.grader.inner.results(enumerate(prepared)):
            self.memo.put(item, attempts)
            self.graded += 1
            if self._received < self._total:
                self.early += 1

    def _preflight(self) -> Any:
        """The evaluator's record validation, set up as the evaluation after publication sets it up."""
        source = self._source
        if not isinstance(source, FrozenSplitSource):
            return Preflight(EvaluationOptions(), None, validate=self.grader.reference_check)
        root = None if self._loaded.data_root is None else Path(self._loaded.data_root)
        data_root, registry = SplitSource(
            source.config, source.split, root, None, False, source.registry
        ).open()
        split = cast(Split, source.split)
        options = check_options(
            EvaluationOptions(data_root=os.fspath(data_root), config=source.config, split=split)
        )
        frozen = open_frozen(data_root, source.config, source.split, False, registry, None)
        return Preflight(options, frozen, validate=self.grader.reference_check)
