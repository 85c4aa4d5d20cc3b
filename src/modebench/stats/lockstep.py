"""Two receipts' journals read side by side: the pass a comparison makes (``stats/comparison.py``).

Each journal is read once, sequentially (:func:`modebench.stats.journal.entries`) or split
over processes (:mod:`modebench.stats.chunks`); the two streams are paired prompt by prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from modebench.receipt.records import Receipt
from modebench.stats import chunks
from modebench.stats.journal import Entry, ResultError
from modebench.stats.journal import entries as journal_entries
from modebench.validation import InputError

T = TypeVar("T")

__all__ = ["lockstep"]


def lockstep(
    first: Callable[[], Receipt],
    second: Callable[[], Receipt],
    reduce: Callable[[Entry], T],
    reduce_second: Callable[[Entry], T] | None = None,
    *,
    light: bool = False,
    parallel: bool = False,
) -> Iterator[tuple[T | None, T | None]]:
    """Two receipts' reductions side by side (``None`` once one side is done), each journal read once.

    Errors come in the order of checking the first receipt completely, then the second, then
    reading their results: a failure of the first receipt's checks is raised at once; anything
    else waits until the first journal was read to its end.
    """
    a = first()
    try:
        b: Receipt | None = second()
        late: InputError | None = None
    except InputError as exc:
        b, late = None, exc
    other = reduce_second if reduce_second is not None else reduce
    if parallel:  # each journal split over processes (stats/chunks.py): ``reduce`` is pure

        def read(receipt: Receipt, function: Callable[[Entry], T]) -> Iterator[T]:
            return chunks.entries(receipt, function, light, share=2)
    else:

        def read(receipt: Receipt, function: Callable[[Entry], T]) -> Iterator[T]:
            return journal_entries(receipt, function, light=light)

    streams = [read(a, reduce), read(b, other) if b is not None else iter(())]
    done = [False, False]
    errors: list[tuple[int, InputError]] = [(1, late)] if late is not None else []
    while not all(done):
        pair: list[T | None] = [None, None]
        for side in (0, 1):
            if done[side]:
                continue
            try:
                pair[side] = next(streams[side])
            except StopIteration:
                done[side] = True
            except ResultError as exc:
                done[side] = True
                errors.append((3 + side, exc))
            except InputError as exc:
                if side == 0:
                    raise
                done[side] = True
                errors.append((2, exc))
        if not errors and (pair[0] is not None or pair[1] is not None):
            yield pair[0], pair[1]
    if errors:
        raise min(errors, key=lambda item: item[0])[1]
