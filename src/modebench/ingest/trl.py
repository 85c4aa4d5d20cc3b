"""TRL GRPO completion logs: ``completions/completions_{step:05d}.parquet``.

``GRPOTrainer`` with ``log_completions`` writes one Parquet file per logged step with the columns
``step``, ``prompt``, ``completion``, one column per reward function and ``advantage``. Rows of
one step with the same prompt are one prompt's responses. Conversational prompts and completions
are lists of chat messages (the completion's text is its assistant message's ``content``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.ingest._source import SourcePrompt, need_pyarrow
from modebench.validation import InputError

__all__ = ["read", "step_files"]

_NAME = re.compile(r"completions_(\d+)\.parquet")


def step_files(source: Path) -> list[tuple[int, Path]]:
    if source.is_file():
        paths = [source]
    else:
        folder = source / "completions" if (source / "completions").is_dir() else source
        paths = sorted(p for p in folder.glob("completions_*.parquet") if p.is_file())
    steps = []
    for path in paths:
        found = _NAME.fullmatch(path.name)
        if found is None:
            raise InputError(f"{path}: TRL completion logs are named completions_<step>.parquet")
        steps.append((int(found.group(1)), path))
    if not steps:
        raise InputError(f"{source}: no TRL completions_*.parquet files")
    return sorted(steps)


def _completion(value: Any, location: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        content = value[-1].get("content")
        if isinstance(content, str):
            return content
    raise InputError(f"{location}: completion must be a string or a list of chat messages")


def _reason(exc: Exception) -> str:
    return " ".join(str(exc).split())  # pyarrow's messages span lines


def read_step(step: int, path: Path) -> Iterator[SourcePrompt]:
    pq = need_pyarrow()
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a non-Parquet file
        raise InputError(f"{path}: not a readable Parquet file ({_reason(exc)})") from None
    names = set(parquet.schema_arrow.names)
    for column in ("prompt", "completion"):
        if column not in names:
            raise InputError(f"{path}: missing column: {column}")
    groups: dict[str, tuple[str, Any, list[str]]] = {}
    row = 0
    batches = parquet.iter_batches(columns=["prompt", "completion"])
    while True:
        try:  # a damaged page surfaces only when its batch is read
            batch = next(batches, None)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise InputError(
                f"{path}: after row {row}: not a readable Parquet file ({_reason(exc)})"
            ) from None
        if batch is None:
            break
        for prompt, completion in zip(
            batch.column("prompt").to_pylist(), batch.column("completion").to_pylist(), strict=True
        ):
            row += 1
            location = f"{path}: row {row}"
            if not isinstance(prompt, (str, list)):
                raise InputError(f"{location}: prompt must be a string or a list of chat messages")
            key = prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True)
            if key not in groups:
                groups[key] = (location, prompt, [])
            groups[key][2].append(_completion(completion, location))
    for location, prompt, responses in groups.values():
        yield SourcePrompt(step, None, prompt, responses, location)


def read(source: Path) -> Iterator[SourcePrompt]:
    for step, path in step_files(source):
        yield from read_step(step, path)
