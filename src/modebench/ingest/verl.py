"""verl rollout dumps (``trainer.rollout_data_dir``): ``{step}.jsonl`` per logged step.

Each line is one rollout with ``input`` (the prompt as the model saw it), ``output`` and ``score``
(verl's reward, ignored: modebench grades). Lines of one step with the same ``input`` are one
prompt's responses, in file order. Files are read one step at a time, so memory holds one step.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from modebench.ingest._source import SourcePrompt, iter_json_lines
from modebench.validation import InputError

__all__ = ["read", "step_files"]


def step_files(source: Path) -> list[tuple[int, Path]]:
    """``(step, file)`` of every ``{step}.jsonl`` in the directory (or the one file), by step."""
    paths = [source] if source.is_file() else sorted(p for p in source.glob("*.jsonl") if p.is_file())
    steps = []
    for path in paths:
        if not path.stem.isdigit():
            if source.is_file():
                raise InputError(f"{path}: verl rollout files are named {{step}}.jsonl")
            continue
        steps.append((int(path.stem), path))
    if not steps:
        raise InputError(f"{source}: no verl {{step}}.jsonl rollout files")
    return sorted(steps)


def read_step(step: int, path: Path) -> Iterator[SourcePrompt]:
    groups: dict[str, tuple[str, list[str]]] = {}
    for number, line in iter_json_lines(path):
        prompt, output = line.get("input"), line.get("output")
        if not isinstance(prompt, str):
            raise InputError(f"{path}: line {number}: input must be a string")
        if not isinstance(output, str):
            raise InputError(f"{path}: line {number}: output must be a string")
        group = groups.get(prompt)
        if group is None:
            group = groups[prompt] = (f"{path}: line {number}", [])
        group[1].append(output)
    for prompt, (location, responses) in groups.items():
        yield SourcePrompt(step, None, prompt, responses, location)


def read(source: Path) -> Iterator[SourcePrompt]:
    for step, path in step_files(source):
        yield from read_step(step, path)
