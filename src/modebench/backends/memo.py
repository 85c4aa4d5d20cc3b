"""Grading results computed ahead of an evaluation, taken by it instead of grading again.

``modebench generate --evaluate`` grades each prompt as soon as its draws are in
(``docs/generate.md``, "Grading right away"). The evaluation that follows publication is the
normal one — validation, journal, digest chain, receipt — and gets a :class:`MemoGrader` as its
back end: a prompt whose exact grading inputs were graded ahead is answered from the memo, any
other prompt goes to the real pool. Grading inputs are the level, the domain, the validated
reference answer and the responses (what the parent-side checks and the worker see), so a memo
entry can only ever be used for the very inputs it was graded from.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from modebench.backends import Grader, unprepared
from modebench.identity import canonical

__all__ = ["GradeMemo", "MemoGrader", "grading_key"]

#: Prompts looked up per step of :meth:`MemoGrader.results`: misses of one step go to the pool
#: together (so it pipelines them), while a run of hits is never held back by the whole input.
STEP_PROMPTS = 256


def grading_key(level: Any, domain: Any, answer: Any, responses: Any) -> str | None:
    """The digest of one prompt's grading inputs; ``None`` when they are not JSON (never memoized)."""
    try:
        text = canonical([level, domain, answer, responses])
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _prepared_key(prepared: dict[str, Any]) -> str | None:
    try:
        row = prepared["row"]
        return grading_key(prepared["level"], prepared["domain"], row["answer"], prepared["raw"]["responses"])
    except (KeyError, TypeError):
        return None


class GradeMemo:
    """Thread-safe attempts by grading key, kept as JSON so every use gets its own objects."""

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}
        self._references: dict[str, str] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def put(self, prepared: dict[str, Any], attempts: list[dict[str, Any]]) -> None:
        key = _prepared_key(prepared)
        if key is None:
            return
        text = json.dumps(attempts, allow_nan=False)
        with self._lock:
            self._entries[key] = text

    def take(self, prepared: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The memoized attempts of ``prepared``'s grading inputs, or ``None``."""
        key = _prepared_key(prepared)
        with self._lock:
            text = None if key is None else self._entries.get(key)
            if text is None:
                self.misses += 1
                return None
            self.hits += 1
        attempts: list[dict[str, Any]] = json.loads(text)
        return attempts

    def reference(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            text = self._references.get(key)
        return None if text is None else dict(json.loads(text))

    def put_reference(self, key: str, parsed: dict[str, Any]) -> None:
        text = json.dumps(parsed, allow_nan=False)
        with self._lock:
            self._references[key] = text


class MemoGrader:
    """A :class:`~modebench.backends.Grader` answering from a :class:`GradeMemo`, else from ``inner``.

    Results keep input order, as every back end's do. Closing it closes ``inner``.
    """

    def __init__(self, inner: Grader, memo: GradeMemo) -> None:
        self.inner = inner
        self.memo = memo
        self.workers = inner.workers

    def __enter__(self) -> MemoGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.inner.close()

    def prestart(self) -> None:
        self.inner.prestart()

    def prepared_lines(
        self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        """Lines are preflighted by the engine itself (no ``prepare`` round trips)."""
        return unprepared(lines)

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        """Validate a reference; a successful check is a pure function of its inputs, so it is kept."""
        key = grading_key(level, domain, answer, None)
        found = None if key is None else self.memo.reference(key)
        if found is not None:
            return found
        parsed = self.inner.reference_check(level, domain, answer)
        if key is not None:
            self.memo.put_reference(key, parsed)
        return parsed

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        source = iter(items)
        while step := list(islice(source, STEP_PROMPTS)):
            found = [self.memo.take(prepared) for _, prepared in step]
            misses = [item for item, attempts in zip(step, found) if attempts is None]
            graded = self.inner.results(misses) if misses else iter(())
            for (seq, prepared), attempts in zip(step, found):
                if attempts is None:
                    seq, prepared, attempts = next(graded)
                yield seq, prepared, attempts
