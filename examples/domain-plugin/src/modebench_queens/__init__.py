"""modebench-queens: an example third-party ModeBench domain (N-queens with pre-placed queens).

ModeBench finds :data:`PLUGIN` through the entry point declared in this distribution's
``pyproject.toml``; its name, ``modebench_queens/queens``, is this package's name and the entry
point's name joined by a slash.
"""

from __future__ import annotations

import json
import random
from typing import Any

from modebench.domains import CardText, Correct, DomainPlugin, PromptTemplate
from modebench.prompts import CONDITIONS
from modebench_queens import board

NAME = "modebench_queens/queens"
#: Board size and the most queens a generated task pre-places, per level.
LEVELS = {1: (5, 1), 2: (6, 1), 3: (7, 2), 4: (8, 2), 5: (9, 3)}

_SYSTEM = (
    "Solve the placement puzzle. You may reason briefly, but end with exactly one final answer "
    "inside \\boxed{}: the column of the queen in each row, in row order, separated by commas."
)


def grade(level: int, reference: board.Board, text: str) -> Correct:
    """Extract, parse, check, key: the whole grading pipeline of one response."""
    content = board.candidate(text)
    columns = board.parse(reference, content)
    board.check(reference, columns)
    canonical = board.key(columns)
    return Correct(key=canonical, graded_text=canonical)


def prompt(level: int, condition: str) -> PromptTemplate:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown prompt condition: {condition}")
    return PromptTemplate("modebench_queens_boxed", _SYSTEM)


def problem_text(n: int, fixed: list[list[int]]) -> str:
    given = "; ".join(f"row {row} column {column}" for row, column in fixed) or "none"
    return (
        f"Place {n} queens on the {n}x{n} board so that no two share a row, a column or a diagonal. "
        f"Queens already placed (keep them): {given}. Rows and columns are numbered from 1."
    )


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    """One task row; every draw comes from ``rng``, so the same seed gives the same row."""
    n, most = LEVELS[level]
    solution = rng.choice(board.solutions(n))
    rows = sorted(rng.sample(range(1, n + 1), rng.randint(0, most)))
    # Keep pre-placing queens of the drawn solution only while two or more placements remain.
    while len(board.consistent(board.Board(n, tuple((r, solution[r - 1]) for r in rows)))) < 2:
        rows.pop()
    fixed = [[row, solution[row - 1]] for row in rows]
    answer = {"verifier": "queens", "n": n, "fixed": fixed}
    modes = len(board.consistent(board.validate(level, answer)))
    return {
        "level": level,
        "domain": NAME,
        "problem": problem_text(n, fixed),
        "answer": json.dumps(answer, sort_keys=True),
        "answer_mode_count": modes,
    }


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One correct response per solution mode, in key order."""
    return [f"\\boxed{{{board.key(s)}}}" for s in board.consistent(board.validate(level, answer))]


PLUGIN = DomainPlugin(
    name=NAME,
    verifiers=("queens",),
    deadline_seconds=2.0,
    validate_reference=board.validate,
    grade=grade,
    prompt=prompt,
    card=CardText(
        name="N-Queens",
        task="Complete a non-attacking placement of N queens around pre-placed ones.",
        canonical_identity="The placement itself: the column of each row's queen, in row order.",
        source="Synthetic, exactly enumerated placements (modebench-queens example plug-in).",
    ),
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["NAME", "PLUGIN", "generate", "grade", "prompt", "witnesses"]
