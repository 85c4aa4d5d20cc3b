"""Split registries: the packaged ModeBench 0.4.0 identities and any registry given by path or URL.

A registry is ``{"schema": "modebench-portable-data-v1", "splits": [<split record>, …]}``
(``docs/datasets.md``, "Registries and split records"). The packaged one is stored compactly
beside this module; its published bytes
(``json.dumps(obj, indent=2, sort_keys=True) + "\\n"``) are rendered at run time, because those
bytes name the cache partition and become the cache ``manifest.json``.

This module only parses and validates; reading a registry from disk or the network lives in
:mod:`modebench.dataset_cache`.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from modebench import domains
from modebench.contracts import LEVEL_ERROR, LEVELS
from modebench.validation import InputError, is_integer, loads

__all__ = [
    "DATA_ORIGIN",
    "DATA_REVISION",
    "PACKAGED_NAME",
    "PACKAGED_SHA256",
    "SCHEMA",
    "Registry",
    "packaged",
    "parse",
    "safe_data_file",
]

SCHEMA = "modebench-portable-data-v1"
DATA_REVISION = "94c45d1f66d3eb181fac2225dc04d62e08568b8e"
DATA_ORIGIN = f"https://raw.githubusercontent.com/liv-daliberti/modeBench/{DATA_REVISION}/"
#: The 0.4.0 registry's one stored form, at 0.4.0's package-data path: compact JSON (the same value
#: as the published file, never its bytes); :func:`packaged` renders the published bytes.
PACKAGED_NAME = "frozen_splits.json"
#: SHA-256 of the rendered packaged registry (the published 0.4.0 file); tests pin it.
PACKAGED_SHA256 = "b25710ac5514f4d6f3fe566d830ccaedf60c42fb22345c04e852f735e6b71405"

_HEX64 = re.compile(r"[0-9a-f]{64}")
SPLITS = ("train", "dev", "eval")


@dataclass(frozen=True)
class Registry:
    """A validated registry: its exact bytes, records, and where its data files live."""

    source: str  # "packaged" or the path/URL it was read from (for messages)
    raw: bytes  # the bytes whose SHA-256 names the cache partition
    records: tuple[dict[str, Any], ...]
    base: str  # URL (ending "/") that each record's data_file is appended to
    #: A local release directory's ``data/`` when it holds a ``manifest.json`` with these very bytes:
    #: its files are then verified in place instead of being copied into the cache.
    local_root: Path | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    def select(self, config: str | None = None, split: str | None = None) -> list[dict[str, Any]]:
        """Records matching the optional filters, in registry order (deep copies)."""
        return [
            json.loads(json.dumps(record))
            for record in self.records
            if (config is None or record["config_name"] == config)
            and (split is None or record["split"] == split)
        ]

    def url(self, record: dict[str, Any]) -> str:
        return self.base + urllib.parse.quote(record["data_file"])


def safe_data_file(value: Any) -> PurePosixPath:
    """A registry ``data_file`` as a relative path under ``data/`` that cannot escape the cache.

    Absolute paths, ``..``/``.``/empty segments, backslashes and NUL are rejected outright instead
    of being resolved, so neither a cache path nor a download URL can leave its directory.
    """
    if not isinstance(value, str):
        raise InputError("dataset requires a data_file path")
    path = PurePosixPath(value)
    parts = value.split("/")
    if (
        path.is_absolute()
        or "\\" in value
        or "\0" in value
        or ":" in value
        or len(parts) < 2
        or parts[0] != "data"
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise InputError("dataset file must be inside the data directory")
    return path


def _check_record(record: Any) -> tuple[str, str]:
    if not isinstance(record, dict):
        raise InputError("dataset manifest requires a list of split objects")
    config, split = record.get("config_name"), record.get("split")
    if not isinstance(config, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", config):
        raise InputError("registry record requires a config_name")
    if split not in SPLITS:
        raise InputError(f"registry record {config} requires a split of train, dev, or eval")
    label = f"{config}/{split}"
    level = record.get("level")
    if isinstance(level, bool) or level not in LEVELS:
        raise InputError(f"registry record {label}: {LEVEL_ERROR}")
    domain = record.get("domain")
    if not domains.is_registered(domain):  # exact names only: the alias is not a registry name
        raise InputError(f"registry record {label}: {domains.unsupported(domain)}")
    rows = record.get("rows")
    if not is_integer(rows) or rows <= 0:
        raise InputError(f"registry record {label}: dataset rows must be a positive integer")
    if not isinstance(record.get("parquet_sha256"), str) or not _HEX64.fullmatch(record["parquet_sha256"]):
        raise InputError(f"registry record {label}: dataset requires a SHA-256 identity")
    try:
        safe_data_file(record.get("data_file"))
    except InputError as exc:
        raise InputError(f"registry record {label}: {exc}") from None
    for flag in ("level_admitted", "difficulty_matched"):
        if flag in record and not isinstance(record[flag], bool):
            raise InputError(f"registry record {label}: {flag} must be a boolean")
    return config, split


def parse(raw: bytes, source: str, base: str, local_root: Path | None = None) -> Registry:
    """Validate registry bytes; every record must be usable, (config, split) pairs unique."""
    document = loads(raw)
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise InputError(f"registry {source}: unsupported dataset manifest schema")
    splits = document.get("splits")
    if not isinstance(splits, list) or not splits:
        raise InputError(f"registry {source}: dataset manifest requires a list of split objects")
    seen: set[tuple[str, str]] = set()
    for record in splits:
        try:
            key = _check_record(record)
        except InputError as exc:
            raise InputError(f"registry {source}: {exc}") from None
        if key in seen:
            raise InputError(f"registry {source}: unknown or ambiguous split: {key[0]}/{key[1]}")
        seen.add(key)
    origin = document.get("origin")
    if origin is not None:
        # Data files live in a Hub repository pinned to a commit; this registry stays the trusted
        # identity of every file, so nothing fetched from there is used before it verifies.
        from modebench.hub.address import parse_address  # noqa: PLC0415 - hf:// registries only (data extra)

        if not isinstance(origin, str):
            raise InputError(f"registry {source}: origin must be an hf://datasets/OWNER/NAME@COMMIT address")
        try:
            base = str(parse_address(origin))
        except InputError as exc:
            raise InputError(f"registry {source}: {exc}") from None
    return Registry(source, bytes(raw), tuple(splits), base, local_root)


@cache
def packaged() -> Registry:
    """The ModeBench 0.4.0 registry, rendered to its exact published bytes."""
    compact = resources.files("modebench").joinpath(PACKAGED_NAME).read_bytes()
    raw = (json.dumps(json.loads(compact), indent=2, sort_keys=True) + "\n").encode("ascii")
    return parse(raw, "packaged", DATA_ORIGIN)
