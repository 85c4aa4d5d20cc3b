"""Frozen splits on disk: find a split in a data root's manifest, verify its Parquet file and read
its rows. The file bytes are read once, hashed, and parsed from that same buffer, so the rows used
are exactly the bytes that verified. Parquet is read with pyarrow (the ``data`` extra).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from modebench._datasets.sources import RegistryLike, load_registry
from modebench._datasets.suggest import unknown_hint
from modebench.api_types import Domain
from modebench.contracts import install_hint, normalize_domain, normalize_level
from modebench.registries import SCHEMA
from modebench.validation import InputError, is_integer, loads, positive_integer

__all__ = [
    "DATA_EXTRA_MESSAGE",
    "Loaded",
    "PathLike",
    "load",
    "load_rows",
    "load_split",
    "prompt_id",
    "require_parquet",
    "split_record",
    "task_identity",
    "verified_table",
]

DATA_EXTRA_MESSAGE = f"dataset loading requires the 'data' extra: {install_hint('data')}"
PathLike = str | os.PathLike[str]


def require_parquet() -> Any:
    """The Parquet reader, or the spec's ``'data' extra`` error (checked before anything else)."""
    try:
        import pyarrow.parquet as parquet  # noqa: PLC0415 - optional data extra
    except ImportError:
        raise InputError(DATA_EXTRA_MESSAGE) from None
    return parquet


def prompt_id(config: str, split: str, index: int) -> str:
    """``<config>/<split>/<index>`` for a zero-based row index."""
    if not is_integer(index) or index < 0:
        raise InputError("prompt row index must be a nonnegative integer")
    return f"{config}/{split}/{index}"


def _strip(record: dict[str, Any]) -> str:
    # data_file is excluded so a checkout may use another layout; json.dumps keeps true != 1.
    return json.dumps({key: value for key, value in record.items() if key != "data_file"}, sort_keys=True)


def _locate(
    root: PathLike, config: str, split: str, frozen: bool, registry: RegistryLike
) -> tuple[dict[str, Any], Path, bytes]:
    """Find and check a split's manifest record; returns (record, file path, manifest bytes)."""
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
        hint = "" if matches else unknown_hint(config, split, splits)
        raise InputError(f"unknown or ambiguous split: {config}/{split}{hint}")
    record = matches[0]
    rows = record.get("rows")
    positive_integer(rows, "dataset rows")
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
class Loaded:
    record: dict[str, Any]
    rows: list[dict[str, Any]]
    manifest_sha256: str


def verified_table(
    root: PathLike, config: str, split: str, frozen: bool, registry: RegistryLike
) -> tuple[dict[str, Any], Any, bytes]:
    """(record, pyarrow table, manifest bytes) of a split whose bytes and row count verified."""
    parquet = require_parquet()
    record, path, manifest = _locate(root, config, split, frozen, registry)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != record["parquet_sha256"]:
        raise InputError(f"dataset hash mismatch: {config}/{split}")
    import pyarrow  # noqa: PLC0415 - optional data extra

    try:
        table = parquet.read_table(pyarrow.BufferReader(data))
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"dataset is not readable Parquet: {config}/{split}: {exc}") from None
    if table.num_rows != record["rows"]:
        raise InputError(f"dataset row count mismatch: {config}/{split}")
    return record, table, manifest


def load(root: PathLike, config: str, split: str, frozen: bool, registry: RegistryLike) -> Loaded:
    record, table, manifest = verified_table(root, config, split, frozen, registry)
    return Loaded(record, table.to_pylist(), hashlib.sha256(manifest).hexdigest())


def load_rows(
    root: PathLike, config: str, split: str, *, frozen: bool = False, registry: RegistryLike = None
) -> list[dict[str, Any]]:
    """Rows of a verified split as plain dictionaries, in file order (needs only pyarrow)."""
    return load(root, config, split, frozen, registry).rows


def load_split(
    root: PathLike, config: str, split: str, *, frozen: bool = False, registry: RegistryLike = None
) -> Any:
    """A verified split as a ``datasets.Dataset`` in file order (row index = prompt ID index).

    The bytes are hashed and parsed from one buffer, then handed to ``datasets`` in memory: nothing
    is read twice and nothing is written to the ``datasets`` cache.
    """
    require_parquet()
    try:
        from datasets import Dataset, NamedSplit  # noqa: PLC0415 - optional data extra
    except ImportError:
        raise InputError(DATA_EXTRA_MESSAGE) from None
    record, table, _ = verified_table(root, config, split, frozen, registry)
    # The verified SHA-256 names this content exactly; without it datasets would hash the table.
    return Dataset(table, split=NamedSplit(split), fingerprint=record["parquet_sha256"])


def task_identity(record: dict[str, Any]) -> tuple[int, Domain]:
    return normalize_level(record.get("level")), normalize_domain(record.get("domain"))
