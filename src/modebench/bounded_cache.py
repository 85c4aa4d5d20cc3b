"""Caches of the grading worker bounded in bytes, far below the worker's memory limit.

A worker runs under a 1 GiB address-space limit (``diagnostics.WORKER_MEMORY_BYTES``); an item
that meets that limit becomes ``resource_limit``. Caches bounded in *entries* let the history of
a worker decide whether an innocent item meets it: 4,096 parsed graph references of ~53 KB, or
100,000 results keyed by the full answer JSON, fill the address space, and which item then fails
depends on how the prompts were dealt to workers. Bounded in *bytes*, with every entry's size
counted generously, the caches together stay a small fraction of the limit, so grading an item
never depends on what the worker graded before: a cache only ever saves time.

Sizes are estimates of the Python objects an entry keeps alive, made from the lengths of the
texts behind them (``EXPANSION`` bytes of objects per byte of JSON or text, plus a fixed
``OVERHEAD``), so that accounting costs nothing per lookup.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from modebench.diagnostics import UNSCORABLE, WORKER_MEMORY_BYTES

__all__ = ["EXPANSION", "OVERHEAD", "REFERENCE_BUDGET", "RESULT_BUDGET", "ByteBoundedCache", "ResultCache"]

K = TypeVar("K")
V = TypeVar("V")

#: Bytes of Python objects counted per byte of JSON or text an entry holds: a parsed JSON graph
#: (dicts, lists, small ints, short strings) takes roughly 5-10 times its text; counted as 16.
EXPANSION: Final = 16
#: Fixed bytes counted per entry (the key tuple, the reply dict, the cache's own slot).
OVERHEAD: Final = 1024
#: The parsed-reference cache and the result cache each get 1/16 of the worker's limit (64 MiB
#: counted, so with the estimate's margin well under 1/8 in fact): together under a fifth of
#: the limit, leaving the rest for the item being graded.
REFERENCE_BUDGET: Final = WORKER_MEMORY_BYTES // 16
RESULT_BUDGET: Final = WORKER_MEMORY_BYTES // 16


class ByteBoundedCache(Generic[K, V]):
    """Least-recently-used mapping whose entries' counted sizes sum to at most ``budget`` bytes.

    An entry larger than ``budget / 8`` is never kept (one huge entry must not flush the rest).
    """

    def __init__(self, budget: int, max_entries: int | None = None) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.used = 0
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V, size: int) -> None:
        """Remember ``value`` as ``size`` counted bytes, dropping the least recently used to fit."""
        if size > self.budget // 8:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.used -= old[1]
        self._entries[key] = (value, size)
        self.used += size
        while self.used > self.budget or (
            self.max_entries is not None and len(self._entries) > self.max_entries
        ):
            _, (_, dropped) = self._entries.popitem(last=False)
            self.used -= dropped

    def clear(self) -> None:
        self._entries.clear()
        self.used = 0


class ResultCache:
    """Scorable results of (task, response) pairs: RL logs repeat the same answers many times.

    Grading is pure, so a remembered verdict is the verdict. Only short responses are kept and
    the task (level, domain, answer JSON) is keyed by its SHA-256, not by its text, so an entry's
    size is the response and the reply; the whole is bounded in bytes (``RESULT_BUDGET``).
    """

    MAX_TEXT: Final = 2048

    def __init__(self, budget: int = RESULT_BUDGET) -> None:
        self._entries: ByteBoundedCache[tuple[bytes, str], dict[str, Any]] = ByteBoundedCache(budget)
        self._task: tuple[str, str, str] | None = None  # the task of the last call and its digest
        self._digest = b""

    def grade(
        self, task: tuple[str, str, str], text: Any, grade: Callable[[Any], dict[str, Any]]
    ) -> dict[str, Any]:
        """``grade(text)``, or the remembered reply for this task and text."""
        if not isinstance(text, str) or len(text) > self.MAX_TEXT:
            return grade(text)
        if task is not self._task:  # one prompt's texts share their task object: hashed once
            self._task, self._digest = (
                task,
                hashlib.sha256("\0".join(task).encode("utf-8", "surrogatepass")).digest(),
            )
        key = (self._digest, text)
        reply = self._entries.get(key)
        if reply is None:
            reply = grade(text)
            if reply["status"] not in UNSCORABLE:
                chars = len(text)  # plus the reply's texts (a plain loop: this runs for every new text)
                for value in reply.values():
                    if isinstance(value, str):
                        chars += len(value)
                self._entries.put(key, reply, OVERHEAD + EXPANSION * chars)
        return reply
