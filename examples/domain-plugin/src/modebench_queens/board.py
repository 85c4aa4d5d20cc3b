"""N-queens boards: the reference object, the answer grammar, and exact enumeration of solutions.

A placement is written row by row as the 1-based column of each row's queen, ``"2,4,1,3"``. That
string, with no spaces, is also the solution's canonical mode key: two answers are the same mode
exactly when they place the queens on the same squares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from modebench.domains import Incorrect, InvalidReference, Malformed

MIN_N = 4
MAX_N = 10  # 724 solutions at most: every check below is exact and fast
_BOX = "\\boxed{"
_PLACEMENT = re.compile(r"\s*\d+\s*(?:,\s*\d+\s*)*")


@dataclass(frozen=True)
class Board:
    """A validated reference: board size and the queens already placed, as ``(row, column)``."""

    n: int
    fixed: tuple[tuple[int, int], ...]


def _attacks(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] == b[0] or a[1] == b[1] or abs(a[0] - b[0]) == abs(a[1] - b[1])


@cache
def solutions(n: int) -> tuple[tuple[int, ...], ...]:
    """Every solution of the n-queens problem, as column tuples, in lexicographic order."""
    found: list[tuple[int, ...]] = []

    def extend(columns: tuple[int, ...]) -> None:
        row = len(columns) + 1
        if row > n:
            found.append(columns)
            return
        for column in range(1, n + 1):
            if not any(_attacks((r + 1, c), (row, column)) for r, c in enumerate(columns)):
                extend((*columns, column))

    extend(())
    return tuple(found)


def consistent(board: Board) -> list[tuple[int, ...]]:
    """The solutions that keep every fixed queen, in lexicographic order."""
    return [s for s in solutions(board.n) if all(s[row - 1] == column for row, column in board.fixed)]


def key(columns: tuple[int, ...]) -> str:
    return ",".join(str(column) for column in columns)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def validate(level: int, answer: dict[str, object]) -> Board:
    """The reference ``{"verifier": "queens", "n": N, "fixed": [[row, column], ...]}``."""
    n = _integer(answer.get("n"))
    if n is None or not MIN_N <= n <= MAX_N:
        raise InvalidReference(f"n must be an integer from {MIN_N} to {MAX_N}")
    raw = answer.get("fixed", [])
    if not isinstance(raw, list):
        raise InvalidReference("fixed must be a list of [row, column] pairs")
    fixed: list[tuple[int, int]] = []
    for item in raw:
        row, column = (
            (_integer(item[0]), _integer(item[1]))
            if isinstance(item, list) and len(item) == 2
            else (None, None)
        )
        if row is None or column is None or not (1 <= row <= n and 1 <= column <= n):
            raise InvalidReference(f"fixed must be a list of [row, column] pairs within 1..{n}")
        square = (row, column)
        if any(_attacks(square, other) for other in fixed):
            raise InvalidReference(f"fixed queens attack each other at {list(square)}")
        fixed.append(square)
    board = Board(n, tuple(sorted(fixed)))
    if not consistent(board):
        raise InvalidReference("no placement completes the fixed queens")
    return board


def candidate(text: str) -> str:
    """The content of the last ``\\boxed{...}``; raise Malformed when there is none."""
    start = text.rfind(_BOX)
    end = text.find("}", start + len(_BOX)) if start >= 0 else -1
    if end < 0:
        raise Malformed("no boxed placement")
    return text[start + len(_BOX) : end]


def parse(board: Board, content: str) -> tuple[int, ...]:
    """Columns of a comma-separated placement of exactly ``n`` queens; raise Malformed."""
    if not _PLACEMENT.fullmatch(content):
        raise Malformed("placement must be comma-separated column numbers", graded_text=content)
    columns = tuple(int(part) for part in content.split(","))
    if len(columns) != board.n or not all(1 <= column <= board.n for column in columns):
        raise Malformed(f"placement must give {board.n} columns within 1..{board.n}", graded_text=content)
    return columns


def check(board: Board, columns: tuple[int, ...]) -> None:
    """Raise Incorrect unless the placement is non-attacking and keeps every fixed queen."""
    shown = key(columns)
    squares = [(row + 1, column) for row, column in enumerate(columns)]
    for i, a in enumerate(squares):
        for b in squares[i + 1 :]:
            if _attacks(a, b):
                raise Incorrect(f"queens at {list(a)} and {list(b)} attack each other", graded_text=shown)
    for row, column in board.fixed:
        if columns[row - 1] != column:
            raise Incorrect(f"row {row} must keep its queen in column {column}", graded_text=shown)


__all__ = ["Board", "candidate", "check", "consistent", "key", "parse", "solutions", "validate"]
