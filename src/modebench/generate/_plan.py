"""Which prompts a run samples, what each request sends, and the per-draw seeds.

Three sources give the same thing, a list of :class:`Prompt` (id, the chat messages sent, and
the evaluate-input fields the output record carries): a frozen split (rendered by
``modebench.data.prepare_requests``, exactly what ``modebench prepare`` writes), a request file
written by ``prepare``, or a custom task file (the evaluate input format without responses).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modebench import data, dataset_cache
from modebench.intake.lines import iter_jsonl
from modebench.intake.preflight import RECORD_FIELDS
from modebench.prompts import DEFAULT_CONDITION, make_messages, messages_sha256
from modebench.validation import InputError

__all__ = [
    "FrozenSplitSource",
    "Prompt",
    "Request",
    "RequestFileSource",
    "Source",
    "TaskFileSource",
    "chatml_prompt",
    "draw_seed",
    "load_prompts",
    "plan_requests",
]

PathLike = str | os.PathLike[str]
#: Seeds stay below 2**31 so every OpenAI-compatible server accepts them (some use int32).
SEED_MODULUS = 2**31
SEED_DERIVATION = "int(sha256(json([run_seed, prompt_id, draw_index]))[:8]) mod 2**31"


@dataclass(frozen=True)
class FrozenSplitSource:
    """A frozen split of a registry (the packaged one, ``"bundled"``, or a path/URL)."""

    config: str
    split: str = "eval"
    data_root: PathLike | None = None
    cache_dir: PathLike | None = None
    offline: bool = False
    registry: str | None = None


@dataclass(frozen=True)
class RequestFileSource:
    """A JSONL file written by ``modebench prepare`` (ids, messages, hashes; no answers)."""

    path: PathLike


@dataclass(frozen=True)
class TaskFileSource:
    """A custom JSONL task file: evaluate input records (id, level, domain, problem, answer) without responses."""

    path: PathLike


Source = FrozenSplitSource | RequestFileSource | TaskFileSource


@dataclass(frozen=True)
class Prompt:
    id: str
    messages: list[dict[str, str]]
    #: The evaluate-input fields of the output record, in output order; ``responses`` comes last.
    record: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Request:
    """One API call: ``count`` consecutive draws of one prompt starting at ``start``."""

    prompt: int
    start: int
    count: int
    seed: int | None


@dataclass(frozen=True)
class Loaded:
    prompts: list[Prompt]
    #: What the prompts came from, as recorded in run metadata.
    description: dict[str, Any]
    #: The data root a frozen evaluation of the output uses (``None`` for files).
    data_root: PathLike | None = None


def draw_seed(run_seed: int, prompt_id: str, draw: int) -> int:
    """The seed of one draw: independent of every other draw, reproducible from the run seed."""
    text = json.dumps([run_seed, prompt_id, draw], separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") % SEED_MODULUS


def plan_requests(
    prompts: list[Prompt], k: int, per_request: int, run_seed: int | None, done: set[tuple[str, int]]
) -> list[Request]:
    """Requests for every draw not in ``done``, prompt by prompt, in draw order.

    Draws are grouped ``per_request`` at a time; a group a previous run left half finished is
    sent draw by draw, so nothing already recorded is sampled twice.
    """
    requests: list[Request] = []
    for index, prompt in enumerate(prompts):
        for start in range(0, k, per_request):
            group = range(start, min(start + per_request, k))
            missing = [draw for draw in group if (prompt.id, draw) not in done]
            if len(missing) == len(group):
                requests.append(Request(index, start, len(group), _seed(run_seed, prompt.id, start)))
            else:
                requests.extend(Request(index, d, 1, _seed(run_seed, prompt.id, d)) for d in missing)
    return requests


def _seed(run_seed: int | None, prompt_id: str, draw: int) -> int | None:
    return None if run_seed is None else draw_seed(run_seed, prompt_id, draw)


def chatml_prompt(messages: list[dict[str, str]]) -> str:
    """The completions-endpoint prompt: the messages in ChatML, ending at the assistant turn."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def load_prompts(source: Source, condition: str) -> Loaded:
    """The prompts of ``source`` in order; input problems raise ``InputError`` naming the line."""
    if isinstance(source, FrozenSplitSource):
        return _frozen(source, condition)
    if isinstance(source, RequestFileSource):
        return _file(source.path, "requests", _request_prompt, condition)
    return _file(source.path, "tasks", _task_prompt, condition)


def _frozen(source: FrozenSplitSource, condition: str) -> Loaded:

    if condition != DEFAULT_CONDITION:
        raise InputError(f"frozen splits are sampled under {DEFAULT_CONDITION}; use a task file otherwise")
    registry: Any = source.registry
    if registry is not None:  # read once (honouring offline); reused for every later check
        registry = dataset_cache.load_registry(registry, offline=source.offline, cache_dir=source.cache_dir)
    root = data.resolve_data_root(
        source.config,
        source.split,
        data_root=source.data_root,
        cache_dir=source.cache_dir,
        offline=source.offline,
        registry=registry,
    )
    prompts = []
    dataset_sha256 = None
    for request in data.prepare_requests(root, source.config, source.split, registry=registry):
        dataset_sha256 = request["dataset_sha256"]
        prompts.append(Prompt(request["id"], request["messages"], request))
    description = {
        "kind": "frozen",
        "config": source.config,
        "split": source.split,
        "registry": source.registry if source.registry is not None else "packaged",
        "dataset_sha256": dataset_sha256,
    }
    return Loaded(prompts, description, root)


def _file(path: PathLike, kind: str, parse: Any, condition: str) -> Loaded:

    hasher = hashlib.sha256()
    prompts: list[Prompt] = []
    seen: set[str] = set()
    for number, value in iter_jsonl(path, hasher):
        try:
            prompt: Prompt = parse(value, condition)
        except (InputError, ValueError, TypeError, KeyError) as exc:
            raise InputError(f"line {number}: {exc}") from None
        if prompt.id in seen:
            raise InputError(f"line {number}: duplicate prompt id: {prompt.id}")
        seen.add(prompt.id)
        prompts.append(prompt)
    if not prompts:
        raise InputError(f"no prompt records: {os.fspath(path)}")
    name = Path(path).name
    return Loaded(prompts, {"kind": kind, "file": name, "sha256": hasher.hexdigest()})


def _identity(value: Any) -> str:
    if not isinstance(value, dict):
        raise InputError("each record must be an object")
    if "responses" in value:
        raise InputError("records to generate for must not contain responses")
    if "run" in value:
        raise InputError("records to generate for must not carry run metadata; generate writes its own")
    unknown = sorted(set(value) - set(RECORD_FIELDS))
    if unknown:
        raise InputError(f"unknown fields: {', '.join(unknown)}")
    if "id" not in value:
        raise InputError("missing field: id")
    ident = value["id"]
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or not str(ident).strip():
        raise InputError("id must be a nonempty string or integer")
    return str(ident)


def _request_prompt(value: Any, condition: str) -> Prompt:
    ident = _identity(value)
    messages = value.get("messages")
    if not isinstance(messages, list) or not messages or not all(_message(item) for item in messages):
        raise InputError("messages must be a nonempty list of {role, content} string objects")
    if "prompt_sha256" in value and value["prompt_sha256"] != messages_sha256(messages):
        raise InputError("prompt_sha256 does not match messages")
    return Prompt(ident, messages, dict(value))


def _message(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and set(item) == {"role", "content"}
        and isinstance(item["role"], str)
        and isinstance(item["content"], str)
    )


def _task_prompt(value: Any, condition: str) -> Prompt:
    ident = _identity(value)
    for name in ("level", "domain", "problem"):
        if name not in value:
            raise InputError(f"missing field: {name}")
    messages = make_messages(value["level"], value["domain"], value, condition)
    if "messages" in value and value["messages"] != messages:
        raise InputError("messages does not match the registered prompt")
    if "prompt_sha256" in value and value["prompt_sha256"] != messages_sha256(messages):
        raise InputError("prompt_sha256 does not match the registered prompt")
    return Prompt(ident, messages, dict(value))
