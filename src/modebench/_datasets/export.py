"""What a frozen split gives its users: tasks, the requests ``prepare`` exports, and one row's
prompt for ``datasets inspect``. None of these ever puts a reference into a request."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench._datasets.cache import fetch
from modebench._datasets.parquet import PathLike, load, prompt_id, require_parquet, task_identity
from modebench._datasets.roots import SplitSource, preload_registry
from modebench._datasets.sources import RegistryLike
from modebench.api_types import Task
from modebench.intake.ids import PromptIds, read_ids
from modebench.prompts import DEFAULT_CONDITION, make_messages, messages_sha256
from modebench.publish import atomic_output
from modebench.validation import InputError, is_integer, loads, output_exists, positive_integer

__all__ = ["export_requests", "inspect", "iter_tasks", "prepare_requests"]


def prepare_requests(
    root: PathLike,
    config: str,
    split: str = "eval",
    *,
    registry: RegistryLike = None,
    ids: PromptIds | None = None,
    limit: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Request records (no references) of a frozen split, in row order; with ``ids``, only those
    (an id the split lacks is refused before the first request); with ``limit``, only the first
    ``limit`` rows."""
    loaded = load(root, config, split, True, registry)
    level, domain = task_identity(loaded.record)
    rows = loaded.rows if limit is None else loaded.rows[:limit]
    names = [prompt_id(config, split, index) for index in range(len(loaded.rows))]
    if ids is not None:
        ids.require_within(set(names), f"{config}/{split}")
    for index, row in enumerate(rows):
        if ids is not None and names[index] not in ids:
            continue
        messages = make_messages(level, domain, row, DEFAULT_CONDITION)
        yield {
            "id": names[index],
            "level": level,
            "domain": domain,
            "messages": messages,
            "prompt_sha256": messages_sha256(messages),
            "dataset_sha256": loaded.record["parquet_sha256"],
        }


def decode_answer(answer: Any, label: str) -> dict[str, Any]:
    value = loads(answer) if isinstance(answer, str) else answer
    if not isinstance(value, dict):
        raise InputError(f"{label}: answer must be an object or a JSON-encoded object")
    return value


def iter_tasks(
    config: str,
    split: str = "eval",
    *,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
) -> Iterator[Task]:
    """Tasks of a frozen split (generator: every download and error happens on the first next())."""
    require_parquet()
    registry = preload_registry(registry, offline, cache_dir)
    if data_root is None:
        data_root = fetch(config, split, cache_dir=cache_dir, offline=offline, registry=registry)
    loaded = load(data_root, config, split, True, registry)
    level, domain = task_identity(loaded.record)
    for index, row in enumerate(loaded.rows):
        ident = prompt_id(config, split, index)
        answer = decode_answer(row.get("answer"), ident)
        problem = row.get("problem")
        if not isinstance(problem, str):
            raise InputError(f"{ident}: ModeBench row requires a nonempty problem string")
        yield Task(ident, level, domain, problem, answer, loaded.record["parquet_sha256"])


def export_requests(
    output: PathLike,
    config: str,
    split: str = "eval",
    *,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
    ids: PathLike | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """``modebench prepare``: publish the request JSONL atomically; never overwrite.

    ``ids`` names a prompt-id list (``docs/prompt-ids.md``): only those prompts are exported.
    ``limit`` keeps the first ``limit`` rows (a quick trial); the summary then says so.
    """
    if Path(output).exists():
        raise output_exists(output)
    if limit is not None:
        positive_integer(limit, "limit", option=True)
    selected = read_ids(ids) if ids is not None else None
    root, registry = SplitSource(config, split, data_root, cache_dir, offline, registry).open()
    requests = prepare_requests(root, config, split, registry=registry, ids=selected, limit=limit)
    first = next(requests, None)  # an unknown id fails here, before the output exists
    count = 0
    with atomic_output(output) as handle:
        for request in itertools.chain([first] if first is not None else [], requests):
            handle.write(json.dumps(request, allow_nan=False) + "\n")
            count += 1
    summary: dict[str, Any] = {"output": os.fspath(output), "prompts": count}
    if limit is not None:  # only then: an unlimited summary stays as 0.4.0 printed it
        summary["limit"] = limit
    return summary


def inspect(
    config: str,
    split: str = "eval",
    row: int = 0,
    *,
    show_reference: bool = False,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
) -> dict[str, Any]:
    """``datasets inspect``: one row's prompt (and, on request, its decoded reference)."""
    root, registry = SplitSource(config, split, data_root, cache_dir, offline, registry).open()
    loaded = load(root, config, split, True, registry)
    count = len(loaded.rows)
    if not is_integer(row) or not 0 <= row < count:
        raise InputError(f"row must be between 0 and {count - 1}")
    level, domain = task_identity(loaded.record)
    selected = loaded.rows[row]
    payload: dict[str, Any] = {
        "id": prompt_id(config, split, row),
        "rows": count,
        "level": level,
        "domain": domain,
        "dataset_sha256": loaded.record["parquet_sha256"],
        "messages": make_messages(level, domain, selected, DEFAULT_CONDITION),
    }
    if show_reference:
        payload["answer"] = decode_answer(selected.get("answer"), payload["id"])
    return payload
