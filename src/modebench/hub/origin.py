"""The Hugging Face Hub as a data origin: files at a pinned commit, verified before use.

A file is looked up in the Hub cache first (``huggingface_hub.try_to_load_from_cache`` at the
commit); if it is missing and we are online, one child process (:mod:`modebench.hub._child`)
downloads it with ``hf_hub_download`` under the caller's byte cap, and is killed with its process
group when the caller's deadline passes. The bytes are then hashed against the registry: a
mismatch is refused and whatever this attempt added to the Hub cache (the snapshot link, its
blob, a partial file) is removed, so a failed or corrupt transfer is never kept.

Offline (``offline=True`` or ``HF_HUB_OFFLINE`` set) only the Hub cache is consulted. The Hub
cache is ``huggingface_hub``'s own (``HF_HUB_CACHE``, ``HF_HOME/hub``, ...) unless a modebench
cache directory is given, in which case it is ``<cache dir>/hf-hub`` so everything stays there.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modebench._datasets.settings import public
from modebench.contracts import install_hint
from modebench.hub.address import HubAddress
from modebench.validation import InputError

__all__ = ["HUB_EXTRA_MESSAGE", "HubLimits", "fetch_bytes", "hub_cache_dir", "hub_offline", "limits"]

HUB_EXTRA_MESSAGE = f"fetching from the Hugging Face Hub requires the 'data' extra: {install_hint('data')}"
_TRUE = {"1", "ON", "YES", "TRUE"}


@dataclass(frozen=True)
class HubLimits:
    max_bytes: int
    timeout_seconds: float


def limits() -> HubLimits:
    """The HTTP origin's byte cap and deadline, read at call time (tests lower them)."""
    settings = public()
    return HubLimits(settings.MAX_DOWNLOAD_BYTES, settings.DOWNLOAD_TIMEOUT_SECONDS)


def hub_offline(offline: bool) -> bool:
    """``offline``, or ``HF_HUB_OFFLINE`` set in the environment (read now, not at import)."""
    return offline or os.environ.get("HF_HUB_OFFLINE", "").upper() in _TRUE


def hub_cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    """Where Hub files are cached (the same rule ``huggingface_hub`` uses, evaluated now)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser().resolve() / "hf-hub"
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser().resolve()
    if os.environ.get("HF_HOME"):
        return (Path(os.environ["HF_HOME"]) / "hub").expanduser().resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache")
    return (base / "huggingface" / "hub").expanduser().resolve()


def _storage(cache: Path, address: HubAddress) -> Path:
    return cache / ("datasets--" + address.repo_id.replace("/", "--"))


def _cached(cache: Path, address: HubAddress, filename: str) -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415 - optional extra: data (huggingface_hub)
    except ImportError:
        raise InputError(HUB_EXTRA_MESSAGE) from None
    found = try_to_load_from_cache(
        address.repo_id, filename, cache_dir=cache, revision=address.commit, repo_type="dataset"
    )
    return Path(found) if isinstance(found, str) else None


def _present(storage: Path, pointer: Path) -> set[Path]:
    """The blobs (complete or partial) and the snapshot link that exist now."""
    found = set(storage.glob("blobs/*")) if storage.is_dir() else set()
    if pointer.is_symlink() or pointer.exists():
        found.add(pointer)
    return found


def _discard(storage: Path, pointer: Path, before: set[Path]) -> None:
    """Remove what this attempt added to the Hub cache: new blobs, partial files, the snapshot link."""
    for path in _present(storage, pointer) - before:
        path.unlink(missing_ok=True)
    # The link's removal can leave empty snapshot directories; prune them (never the storage root).
    parent = pointer.parent
    while parent != storage and parent.is_relative_to(storage):
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _run_child(
    request: dict[str, Any], deadline: float, storage: Path, pointer: Path, before: set[Path], what: str
) -> Path:
    env = dict(os.environ, HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HUB_DISABLE_TELEMETRY="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "modebench.hub._child", json.dumps(request)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own group, so a kill also reaches anything it started
    )
    try:
        out, err = process.communicate(timeout=max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        _discard(storage, pointer, before)
        raise InputError(f"{what} deadline exceeded") from None
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        _discard(storage, pointer, before)
        raise
    try:
        reply = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError):
        reply = {"error": "failed", "detail": err.decode("utf-8", "replace").strip()[-300:] or "no reply"}
    if "path" in reply and Path(reply["path"]) == pointer:
        return pointer
    _discard(storage, pointer, before)
    if reply.get("error") == "size":
        raise InputError(f"{what} exceeds byte limit")
    raise InputError(f"{what} failed: {reply.get('detail')}")


def _read_capped(path: Path, limit: int) -> bytes | None:
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def fetch_bytes(
    address: HubAddress,
    filename: str,
    *,
    sha256: str | None,
    label: str,
    what: str,
    not_cached: InputError,
    offline: bool,
    cache_dir: str | os.PathLike[str] | None,
    limits: HubLimits,
) -> bytes:
    """The verified bytes of ``filename`` at the pinned commit (from the Hub cache or downloaded).

    ``sha256`` is the registry's identity of the file (``None`` for the registry itself, which the
    commit pins). ``what`` names the transfer in messages (``dataset download``, ...); ``not_cached``
    is the error raised when offline and the Hub cache lacks the file.
    """
    deadline = time.monotonic() + limits.timeout_seconds
    cache = hub_cache_dir(cache_dir)
    storage = _storage(cache, address)
    pointer = storage / "snapshots" / address.commit / filename
    path = _cached(cache, address, filename)
    before = _present(storage, pointer)
    downloaded = path is None
    if path is None:
        if hub_offline(offline):
            raise not_cached
        request = {
            "repo_id": address.repo_id,
            "filename": filename,
            "commit": address.commit,
            "cache_dir": str(cache),
            "max_bytes": limits.max_bytes,
            "timeout": limits.timeout_seconds,
        }
        path = _run_child(request, deadline, storage, pointer, before, what)
    data = _read_capped(path, limits.max_bytes)
    if data is not None and (sha256 is None or hashlib.sha256(data).hexdigest() == sha256):
        return data
    if downloaded:
        _discard(storage, pointer, before)
    if data is None:
        raise InputError(f"{what} exceeds byte limit")
    if not downloaded:
        raise InputError(f"cached dataset hash mismatch: {path}; remove this file and fetch again")
    raise InputError(f"download hash mismatch: {label}; cache not modified")
