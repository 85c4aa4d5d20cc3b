"""Frozen splits: lookup, verified Parquet loading, prompt IDs, request export, and the frozen
checks of the evaluator (``docs/datasets.md``; the ``dataset`` block in ``docs/evaluation.md``).

Parquet is read with pyarrow directly (the ``data`` extra). The file bytes are read once, hashed,
and parsed from that same buffer, so the rows used are exactly the bytes that verified.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from modebench.api_types import Domain, Task
from modebench.contracts import normalize_domain, normalize_level
from modebench.dataset_cache import RegistryLike, fetch, load_registry
from modebench.prompts import DEFAULT_CONDITION, make_messages, messages_sha256
from modebench.registries import SCHEMA
from modebench.validation import InputError, loads

__all__ = [
    "DATA_EXTRA_MESSAGE",
    "FrozenSplit",
    "export_requests",
    "inspect",
    "iter_tasks",
    "load_split",
    "open_frozen",
    "prepare_requests",
    "prompt_id",
    "resolve_data_root",
    "split_record",
]

DATA_EXTRA_MESSAGE = "dataset loading requires the 'data' extra: pip install 'modebench[data]'"
UNIQUE_ANSWER_NOTE = "Single-answer diagnostic; separate from the main benchmark."
PathLike = str | os.PathLike[str]


def _parquet() -> Any:
    """The Parquet reader, or the ``'data' extra`` install hint (checked before anything else)."""
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise InputError(DATA_EXTRA_MESSAGE) from None
    return parquet


def prompt_id(config: str, split: str, index: int) -> str:
    """``<config>/<split>/<index>`` for a zero-based row index."""
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise InputError("prompt row index must be a nonnegative integer")
    return f"{config}/{split}/{index}"


def _strip(record: dict[str, Any]) -> str:
    # data_file is excluded so a checkout may use another layout; json.dumps keeps true != 1.
    return json.dumps({key: value for key, value in record.items() if key != "data_file"}, sort_keys=True)


def _locate(
    root: PathLike, config: str, split: str, frozen: bool, registry: RegistryLike
) -> tuple[dict[str, Any], Path, bytes]:
    """Look a split record up and check it (and, frozen, against the packaged registry); returns (record, file path, manifest bytes)."""
    directory = Path(root).resolve()
    manifest = (directory / "manifest.json").read_bytes()  # a missing file is an OSError
    document = loads(manifest)
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise InputError("unsupported dataset manifest schema")
    splits = document.get("splits")
    if not isinstance(splits, list) or not all(isinstance(item, dict) for item in splits):
        raise InputError("dataset manifest requires a list of split objects")
    matches = [item for item in splits if item.get("config_name") == config and item.get("split") == split]
    if len(matches) != 1:
        raise InputError(f"unknown or ambiguous split: {config}/{split}")
    record = matches[0]
    rows = record.get("rows")
    if isinstance(rows, bool) or not isinstance(rows, int) or rows <= 0:
        raise InputError("dataset rows must be a positive integer")
    sha = record.get("parquet_sha256")
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise InputError("dataset requires a SHA-256 identity")
    data_file = record.get("data_file")
    if not isinstance(data_file, str):
        raise InputError("dataset requires a data_file path")
    path = (directory.parent / data_file).resolve()
    if (
        PurePosixPath(data_file).is_absolute()
        or Path(data_file).is_absolute()
        or not path.is_relative_to(directory)
    ):
        raise InputError("dataset file must be inside the data directory")
    if frozen:
        trusted = load_registry(registry).select(config, split)
        if len(trusted) != 1 or _strip(trusted[0]) != _strip(record):
            raise InputError("dataset manifest does not match the packaged frozen registry")
    return record, path, manifest


def split_record(
    root: PathLike, config: str, split: str, *, frozen: bool = False, registry: RegistryLike = None
) -> dict[str, Any]:
    """The manifest record of one split (``frozen=True`` also checks it against the registry)."""
    return _locate(root, config, split, frozen, registry)[0]


@dataclass(frozen=True)
class _Loaded:
    record: dict[str, Any]
    rows: list[dict[str, Any]]
    manifest_sha256: str


def _load(root: PathLike, config: str, split: str, frozen: bool, registry: RegistryLike) -> _Loaded:
    parquet = _parquet()
    record, path, manifest = _locate(root, config, split, frozen, registry)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != record["parquet_sha256"]:
        raise InputError(f"dataset hash mismatch: {config}/{split}")
    import pyarrow

    try:
        table = parquet.read_table(pyarrow.BufferReader(data))
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"dataset is not readable Parquet: {config}/{split}: {exc}") from None
    if table.num_rows != record["rows"]:
        raise InputError(f"dataset row count mismatch: {config}/{split}")
    return _Loaded(record, table.to_pylist(), hashlib.sha256(manifest).hexdigest())


def load_split(
    root: PathLike, config: str, split: str, *, frozen: bool = False, registry: RegistryLike = None
) -> list[dict[str, Any]]:
    """Rows of a verified split in file order (row index = prompt ID index)."""
    return _load(root, config, split, frozen, registry).rows


def _identity(record: dict[str, Any]) -> tuple[int, Domain]:
    return normalize_level(record.get("level")), normalize_domain(record.get("domain"))


def prepare_requests(
    root: PathLike, config: str, split: str = "eval", *, registry: RegistryLike = None
) -> Iterator[dict[str, Any]]:
    """Request records (no references) of a frozen split, in row order (``docs/datasets.md``, "Commands")."""
    loaded = _load(root, config, split, True, registry)
    level, domain = _identity(loaded.record)
    for index, row in enumerate(loaded.rows):
        messages = make_messages(level, domain, row, DEFAULT_CONDITION)
        yield {
            "id": prompt_id(config, split, index),
            "level": level,
            "domain": domain,
            "messages": messages,
            "prompt_sha256": messages_sha256(messages),
            "dataset_sha256": loaded.record["parquet_sha256"],
        }


def _registry(registry: RegistryLike, offline: bool, cache_dir: PathLike | None) -> RegistryLike:
    """Read a non-packaged registry once per command (honouring ``offline``) and reuse it."""
    if registry is None:
        return None
    return load_registry(registry, offline=offline, cache_dir=cache_dir)


def resolve_data_root(
    config: str,
    split: str = "eval",
    *,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
) -> PathLike:
    """The CLI data root (``docs/datasets.md``, "The verified cache"): ``data_root``, else ``./data``, else the cache.

    ``./data`` is the checkout of the packaged release, so it is not consulted for another registry.
    """
    _parquet()  # no download for a split that could not be read anyway
    if data_root is not None:
        return data_root
    if cache_dir is None and registry is None and Path("data", "manifest.json").exists():
        return "data"
    return fetch(config, split, cache_dir=cache_dir, offline=offline, registry=registry)


def _decode_answer(answer: Any, label: str) -> dict[str, Any]:
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
    _parquet()
    registry = _registry(registry, offline, cache_dir)
    if data_root is None:
        data_root = fetch(config, split, cache_dir=cache_dir, offline=offline, registry=registry)
    loaded = _load(data_root, config, split, True, registry)
    level, domain = _identity(loaded.record)
    for index, row in enumerate(loaded.rows):
        ident = prompt_id(config, split, index)
        answer = _decode_answer(row.get("answer"), ident)
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
) -> dict[str, Any]:
    """``modebench prepare``: publish the request JSONL atomically; never overwrite."""
    from modebench.publish import atomic_output

    if Path(output).exists():
        raise InputError(f"output already exists: {os.fspath(output)}")
    _parquet()
    registry = _registry(registry, offline, cache_dir)
    root = resolve_data_root(
        config, split, data_root=data_root, cache_dir=cache_dir, offline=offline, registry=registry
    )
    count = 0
    with atomic_output(output) as handle:
        for request in prepare_requests(root, config, split, registry=registry):
            handle.write(json.dumps(request, allow_nan=False) + "\n")
            count += 1
    return {"output": os.fspath(output), "prompts": count}


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
    _parquet()
    registry = _registry(registry, offline, cache_dir)
    root = resolve_data_root(
        config, split, data_root=data_root, cache_dir=cache_dir, offline=offline, registry=registry
    )
    loaded = _load(root, config, split, True, registry)
    count = len(loaded.rows)
    if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < count:
        raise InputError(f"row must be between 0 and {count - 1}")
    level, domain = _identity(loaded.record)
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
        payload["answer"] = _decode_answer(selected.get("answer"), payload["id"])
    return payload


class FrozenSplit:
    """The evaluator's view of one verified frozen split (``docs/datasets.md``, frozen evaluation)."""

    def __init__(self, config: str, split: str, loaded: _Loaded, allow_partial: bool) -> None:
        self.config, self.split, self.allow_partial = config, split, allow_partial
        self.record = loaded.record
        self.manifest_sha256 = loaded.manifest_sha256
        self.level, self.domain = _identity(loaded.record)
        # Only problem and answer are kept: other row columns never reach grading.
        self._rows = [(row.get("problem"), row.get("answer")) for row in loaded.rows]
        self.expected_ids = [prompt_id(config, split, index) for index in range(len(self._rows))]
        self._index = {ident: index for index, ident in enumerate(self.expected_ids)}

    def accept(self, record: dict[str, Any], rid: str, preflight: Any) -> tuple[int, str, dict[str, Any]]:
        index = self._index.get(rid)
        if index is None:
            raise InputError(f"unknown frozen prompt ID: {rid}")
        if "answer" in record:
            raise InputError("frozen evaluation resolves answer from the dataset; omit supplied answer")
        level = normalize_level(record.get("level", self.level))
        domain = normalize_domain(record.get("domain", self.domain))
        if (level, domain) != (self.level, self.domain):
            raise InputError("level/domain does not match the frozen configuration")
        problem, answer = self._rows[index]
        if "problem" in record and record["problem"] != problem:
            raise InputError("problem does not match the frozen row")
        if "dataset_sha256" in record and record["dataset_sha256"] != self.record["parquet_sha256"]:
            raise InputError("dataset_sha256 does not match the frozen split")
        draws = len(record["responses"])
        if preflight.draws is None:
            preflight.draws = draws
        elif draws != preflight.draws:
            raise InputError(
                "frozen evaluation requires the same number of draws per prompt; retain failed draws"
            )
        preflight.supplied_ids.add(rid)
        return self.level, self.domain, {"problem": problem, "answer": answer}

    def finish(self, preflight: Any) -> None:
        if preflight.run is None:
            raise InputError("frozen evaluation requires run metadata (model, generation, prompt_condition)")
        if preflight.run.get("prompt_condition") != DEFAULT_CONDITION:
            raise InputError(
                f"frozen evaluation requires {DEFAULT_CONDITION}; use custom mode for changed conditions"
            )
        missing = len(self.expected_ids) - len(preflight.supplied_ids)
        if missing and not self.allow_partial:
            raise InputError(
                f"incomplete frozen split: missing {missing} of {len(self.expected_ids)} prompts; "
                "explicitly allow_partial to evaluate a subset"
            )

    def dataset_block(self, preflight: Any) -> dict[str, Any]:
        supplied = preflight.supplied_ids
        selected = [ident for ident in self.expected_ids if ident in supplied]
        missing = [ident for ident in self.expected_ids if ident not in supplied]
        block: dict[str, Any] = {
            "kind": "frozen",
            "references_authenticated": True,
            "registry": SCHEMA,
            "split_record": self.record,
            "manifest_sha256": self.manifest_sha256,
            "selected_prompt_ids": selected,
            "missing_prompt_ids": missing,
            "complete": not missing,
            "selected_prompts": preflight.count,
            "expected_prompts": len(self.expected_ids),
            "allow_partial": self.allow_partial,
            "draws_per_prompt": preflight.draws,
        }
        if self.config.endswith("_unique_answer"):
            block["protocol_notes"] = [UNIQUE_ANSWER_NOTE]
        return block


def open_frozen(
    root: PathLike, config: str, split: str, allow_partial: bool, registry: RegistryLike = None
) -> FrozenSplit:
    """Load and verify a frozen split for evaluation (registry check, hash, row count)."""
    return FrozenSplit(config, split, _load(root, config, split, True, registry), allow_partial)
