"""Step files of a training dump: the step is the integer in the name the writer gives the file.

verl writes ``f"{self.global_steps}.jsonl"`` and TRL ``f"completions_{self.state.global_step:05d}.parquet"``,
so each step has exactly one spelling. Any other spelling (``01.jsonl``, ``١.jsonl`` — ``int()``
reads Arabic-Indic digits — ``completions_1.parquet``) was not written by the tool and would read
as a step that another file already is; such files are an error naming them, never merged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from modebench.validation import InputError

__all__ = ["step_files"]


def step_files(
    source: Path,
    candidates: list[Path],
    pattern: str,
    canonical: Callable[[int], str],
    what: str,
) -> list[tuple[int, Path]]:
    """``(step, path)`` by step; ``pattern`` has one group, the step's digits (ASCII only)."""
    regex = re.compile(pattern, re.ASCII)
    steps: dict[int, Path] = {}
    bad: list[str] = []
    for path in candidates:
        found = regex.fullmatch(path.name)
        if found is None or canonical(int(found.group(1))) != path.name:
            bad.append(path.name)
            continue
        step = int(found.group(1))
        if step in steps:  # only reachable when several single files name one step
            raise InputError(f"{path}: step {step} is also {steps[step]}")
        steps[step] = path
    if bad:
        raise InputError(
            f"{source}: not {what} step files: {', '.join(sorted(bad))} "
            f"(the writer names each step {canonical(7)} for step 7; move other files away)"
        )
    if not steps:
        raise InputError(f"{source}: no {what} step files ({canonical(7)} for step 7)")
    return sorted(steps.items())
