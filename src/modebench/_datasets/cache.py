"""The verified download cache of frozen splits.

Layout: ``<base>/<sha256 of registry bytes>/data/`` holds ``manifest.json`` (a copy of the
registry bytes, never a server copy) and the Parquet files at ``<data root>/../<data_file>``.
Every file is verified against the registry on download *and* on every reuse; nothing reaches its
final name before it verified, so a failed or corrupt transfer never becomes a cache entry.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import urllib.parse
from pathlib import Path
from typing import Any, BinaryIO, cast

from modebench import registries
from modebench._datasets.paths import cache_base, remembered_registry
from modebench._datasets.settings import public
from modebench._datasets.sources import BUNDLED, RegistryLike, load_registry
from modebench._datasets.suggest import unknown_hint
from modebench._datasets.transfer import transfer
from modebench.identity import bounded_file_sha256
from modebench.publish import atomic_output
from modebench.registries import Registry
from modebench.validation import InputError, OptionError, with_hint

__all__ = ["cache_data_root", "fetch"]


def cache_data_root(
    cache_dir: str | os.PathLike[str] | None = None, *, registry: RegistryLike = None
) -> Path:
    """``<base>/<sha256 of registry bytes>/data`` (the path; nothing is created)."""
    return cache_base(cache_dir) / load_registry(registry, cache_dir=cache_dir).sha256 / "data"


def _target(root: Path, data_file: str) -> Path:
    relative = registries.safe_data_file(data_file)
    target = (root.parent / relative).resolve()
    if not target.is_relative_to(root):
        raise InputError("dataset file must be inside the data directory")
    return target


#: A temporary file untouched this long was left by a killed fetch (a live one is written to
#: continuously, and a download's overall deadline is far shorter).
STALE_TEMP_SECONDS = 600.0


def sweep_stale_temps(final: Path) -> None:
    """Remove temporary siblings of ``final`` (``atomic_output``'s naming) left by killed fetches."""
    pattern = re.compile(re.escape(f".{final.name}-") + "[0-9a-f]{12}")
    try:
        entries = list(os.scandir(final.parent))
    except OSError:
        return
    cutoff = time.time() - STALE_TEMP_SECONDS
    for entry in entries:
        try:
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
        except OSError:
            continue  # raced with another fetcher: nothing to do


def _write_atomic(path: Path, data: bytes) -> None:
    sweep_stale_temps(path)
    with atomic_output(path, replace=True, binary=True) as handle:
        cast(BinaryIO, handle).write(data)


#: Said after a failed download from the packaged registry's origin (most often: no network).
BUNDLED_HINT = "no network? the release bundled with the package needs none: use the registry 'bundled'"


def _unreachable(error: InputError, url: str, packaged: bool) -> InputError:
    """A failed transfer as 0.4.0 raised it: an ``InputError`` with the transfer's own line.

    What was tried (and, for the packaged registry, the offline release) is its ``hint``; ``code``
    and ``details`` let the CLI say the same with its flag names (``cli._common.FLAG_MESSAGES``).
    """
    failure = with_hint(
        InputError(str(error)), "\n".join([f"tried {url}", *([BUNDLED_HINT] if packaged else [])])
    )
    failure.code = "download_failed_packaged" if packaged else "download_failed"  # type: ignore[attr-defined]
    failure.details = {"error": str(error), "url": url}  # type: ignore[attr-defined]
    return failure


def _download(url: str, target: Path, record: dict[str, Any], label: str, packaged: bool = False) -> None:
    digest = hashlib.sha256()
    try:
        # Renamed into place only after it verified; concurrent fetchers all install identical bytes.
        with atomic_output(target, replace=True, binary=True) as handle:

            def sink(chunk: bytes) -> None:
                cast(BinaryIO, handle).write(chunk)
                digest.update(chunk)

            try:
                transfer(url, sink, "dataset download", "; retry fetch or use a verified offline cache")
            except InputError as exc:
                raise _unreachable(exc, url, packaged) from None
            if digest.hexdigest() != record["parquet_sha256"]:
                raise InputError(f"download hash mismatch: {label}; cache not modified")
    except OSError as exc:
        raise InputError(
            f"dataset download failed: {exc}; retry fetch or use a verified offline cache"
        ) from None


def _hub_download(
    registry: Registry,
    record: dict[str, Any],
    target: Path,
    label: str,
    offline: bool,
    cache_dir: str | os.PathLike[str] | None,
) -> None:
    """Fetch a split from the registry's Hub origin (verified there) and install it in the cache."""
    from modebench.hub.address import parse_address  # noqa: PLC0415 - hf:// registries only (data extra)
    from modebench.hub.origin import fetch_bytes, limits  # noqa: PLC0415 - hf:// registries only (data extra)

    data = fetch_bytes(
        parse_address(registry.base),
        record["data_file"],
        sha256=record["parquet_sha256"],
        label=label,
        what="dataset download",
        not_cached=OptionError(
            "dataset_not_cached", f"dataset is not cached: {label}; fetch it while online first", label=label
        ),
        offline=offline,
        cache_dir=cache_dir,
        limits=limits(),
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(target, data)


def fetch(
    config: str,
    split: str = "eval",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
) -> Path:
    """Return the verified cache data root holding ``config``/``split``, downloading if needed."""
    settings = public()  # the public names, read at call time

    chosen = load_registry(registry, offline=offline, cache_dir=cache_dir)
    records = chosen.select(config, split)
    if len(records) != 1:
        raise InputError(
            f"unknown dataset selection: {config or '*'}/{split or '*'}; use datasets list"
            + unknown_hint(config, split, chosen.records)
        )
    record = records[0]
    label = f"{config}/{split}"
    if chosen.local_root is not None:
        # A local release (e.g. the bundled one) is its own verified data root: nothing to copy.
        target = _target(chosen.local_root, record["data_file"])
        if bounded_file_sha256(target, settings.MAX_DOWNLOAD_BYTES) != record["parquet_sha256"]:
            raise InputError(f"dataset hash mismatch: {label}")
        return chosen.local_root
    root = cache_data_root(cache_dir, registry=chosen)
    target = _target(root, record["data_file"])
    sweep_stale_temps(target)
    if target.exists():
        # Re-verified on every reuse; a bad entry is reported, never silently replaced.
        if bounded_file_sha256(target, settings.MAX_DOWNLOAD_BYTES) != record["parquet_sha256"]:
            raise InputError(f"cached dataset hash mismatch: {target}; remove this file and fetch again")
    elif chosen.base.startswith("hf://"):
        _hub_download(chosen, record, target, label, offline, cache_dir)
    elif offline:
        packaged = chosen.source == registries.packaged().source
        raise OptionError(
            "dataset_not_cached_packaged" if packaged else "dataset_not_cached",
            f"dataset is not cached: {label}; fetch it while online first"
            + (
                f"\n  or use the release bundled with the package: the registry '{BUNDLED}'"
                if packaged
                else ""
            ),
            label=label,
        )
    else:
        _download(chosen.url(record), target, record, label, chosen.source == registries.packaged().source)
    _write_atomic(root / "manifest.json", chosen.raw)
    if urllib.parse.urlsplit(chosen.source).scheme in ("http", "https"):
        remembered = remembered_registry(chosen.source, cache_dir)
        remembered.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(remembered, chosen.raw)
    return root
