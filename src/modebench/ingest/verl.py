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
    paths = [source] if source.is_file() else sorted(source.glob("*.jsonl"))
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
    for location, line in iter_json_lines(path):
        for field in ("input", "output"):
            if not isinstance(line.get(field), str):
                raise InputError(f"{location}: {field} must be a string")
        prompt: str = line["input"]
        if prompt not in groups:
            groups[prompt] = (location, [])
        groups[prompt][1].append(line["output"])
    for prompt, (location, responses) in groups.items():
        yield SourcePrompt(step, None, prompt, responses, location)


def read(source: Path) -> Iterator[SourcePrompt]:
    for step, path in step_files(source):
        yield from read_step(step, path)
