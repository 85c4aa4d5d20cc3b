"""TRL GRPO completion logs: ``completions/completions_{step:05d}.parquet``.

``GRPOTrainer.log`` (with ``log_completions``) writes one Parquet file per logged step with the
columns ``step``, ``prompt``, ``completion``, one column per reward function, extra logged columns
and ``advantage``. ``prompt`` and ``completion`` are the token ids decoded with
``skip_special_tokens=True`` (``_generate_and_score_completions``), so a chat dataset's prompt is
its chat template's rendering without the special tokens. Rows of one step with the same prompt
are one prompt's responses, in row order; ``--id-field COLUMN`` groups and names them by a column
instead. Lists of chat messages (written by forks) are matched by their message hash.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.ingest import _steps
from modebench.ingest._source import ReadOptions, SourcePrompt, need_pyarrow
from modebench.validation import InputError

__all__ = ["read", "step_files"]


def step_files(source: Path) -> list[tuple[int, Path]]:
    if source.is_file():
        paths = [source]
    else:
        folder = source / "completions" if (source / "completions").is_dir() else source
        paths = sorted(p for p in folder.glob("completions_*.parquet") if p.is_file())
    return _steps.step_files(
        source, paths, r"completions_([0-9]+)\.parquet", lambda step: f"completions_{step:05d}.parquet", "TRL"
    )


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


def read_step(step: int, path: Path, options: ReadOptions) -> Iterator[SourcePrompt]:  # noqa: C901, PLR0912 - one branch per TRL column variant and per record check
    pq = need_pyarrow()
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a non-Parquet file
        raise InputError(f"{path}: not a readable Parquet file ({_reason(exc)})") from None
    names = set(parquet.schema_arrow.names)
    id_field = options.id_field
    columns = ["prompt", "completion", *([id_field] if id_field is not None else [])]
    for column in columns:
        if column not in names:
            raise InputError(f"{path}: missing column: {column}")
    groups: dict[str, tuple[str, Any, list[str]]] = {}
    row = 0
    batches = parquet.iter_batches(columns=columns)
    while True:
        try:  # a damaged page surfaces only when its batch is read
            batch = next(batches, None)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise InputError(
                f"{path}: after row {row}: not a readable Parquet file ({_reason(exc)})"
            ) from None
        if batch is None:
            break
        prompts = batch.column("prompt").to_pylist()
        completions = batch.column("completion").to_pylist()
        idents = batch.column(id_field).to_pylist() if id_field is not None else [None] * len(prompts)
        for prompt, completion, ident in zip(prompts, completions, idents, strict=True):
            row += 1
            location = f"{path}: row {row}"
            if not isinstance(prompt, (str, list)):
                raise InputError(f"{location}: prompt must be a string or a list of chat messages")
            if id_field is not None:
                if isinstance(ident, bool) or not isinstance(ident, (str, int)):
                    raise InputError(f"{location}: id column {id_field} must hold strings or integers")
                key = str(ident)
            else:
                key = prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True)
            if key not in groups:
                groups[key] = (location, prompt, [])
            groups[key][2].append(_completion(completion, location))
    for key, (location, prompt, responses) in groups.items():
        if id_field is None:
            yield SourcePrompt(step, None, prompt, responses, location)
        else:
            yield SourcePrompt(step, key, prompt, responses, location, id_rule=f"id-field:{id_field}")


def read(source: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    for step, path in step_files(source):
        yield from read_step(step, path, options)
