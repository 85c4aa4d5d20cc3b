"""The verified download cache of frozen splits (``datasets.md`` §4) and registry loading.

Layout: ``<base>/<sha256 of registry bytes>/data/`` holds ``manifest.json`` (a copy of the
registry bytes, never a server copy) and the Parquet files at ``<data root>/../<data_file>``.
Every file is verified against the registry on download *and* on every reuse; nothing reaches its
final name before it verified, so a failed or corrupt transfer never becomes a cache entry.

``urlopen``, ``MAX_DOWNLOAD_BYTES`` and ``DOWNLOAD_TIMEOUT_SECONDS`` are looked up at call time
so tests can monkeypatch them.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import os
import re
import secrets
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from modebench import registries
from modebench.registries import DATA_ORIGIN, DATA_REVISION, Registry
from modebench.validation import InputError

__all__ = [
    "CHUNK_BYTES",
    "DATA_ORIGIN",
    "DATA_REVISION",
    "DOWNLOAD_TIMEOUT_SECONDS",
    "MAX_DOWNLOAD_BYTES",
    "cache_data_root",
    "discover",
    "fetch",
    "listing",
    "load_registry",
    "registry_bytes",
    "urlopen",
]

MAX_DOWNLOAD_BYTES = 33_554_432
DOWNLOAD_TIMEOUT_SECONDS = 30
CHUNK_BYTES = 65_536

RegistryLike = Registry | str | os.PathLike[str] | None


# -- deadline-bounded transport -------------------------------------------------------------------
# The reference checks its deadline only after a read returns, so a stalled socket can block for a
# full socket timeout past it (evaluation.md §18, hazard 13). Here every connection gets the time
# *remaining* until one overall deadline, for the connect and for the response headers, and the
# body loop below re-arms the socket timeout before each read.


def _remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)


class _DeadlineConnection:
    """Connect (TCP, TLS) and wait for headers only as long as the overall deadline allows."""

    timeout: float | None
    sock: Any

    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = _remaining(self._deadline)
        super().connect()  # type: ignore[misc]
        self.sock.settimeout(_remaining(self._deadline))


class _DeadlineHTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_DeadlineHTTPConnection, deadline=self._deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_DeadlineHTTPSConnection, deadline=self._deadline)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


def urlopen(url: str, timeout: float = DOWNLOAD_TIMEOUT_SECONDS) -> Any:
    """Open ``url`` so that connecting and receiving the headers end within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
    return opener.open(url, timeout=timeout)


def _socket_of(response: Any) -> socket.socket | None:
    # http.client keeps the socket behind a buffered SocketIO; fakes and file:// responses have none.
    raw = getattr(getattr(response, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _transfer(url: str, sink: Callable[[bytes], None], what: str, hint: str = "") -> None:
    """Stream ``url`` into ``sink`` under the byte cap and one overall deadline."""
    limit = MAX_DOWNLOAD_BYTES
    timeout = DOWNLOAD_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    total = 0
    try:
        with urlopen(url, timeout=timeout) as response:
            declared = getattr(response, "headers", None)
            length = declared.get("Content-Length") if declared is not None else None
            if length is not None and length.isdigit() and int(length) > limit:
                raise InputError(f"{what} exceeds byte limit")
            while True:
                if time.monotonic() >= deadline:
                    raise InputError(f"{what} deadline exceeded")
                sock = _socket_of(response)
                if sock is not None:
                    sock.settimeout(_remaining(deadline))
                chunk = response.read1(CHUNK_BYTES)
                if not chunk:
                    break
                total += len(chunk)
                if time.monotonic() >= deadline:
                    raise InputError(f"{what} deadline exceeded")
                if total > limit:
                    raise InputError(f"{what} exceeds byte limit")
                sink(chunk)
            # http.client's read1 ends quietly at a premature EOF; a short body is a failed transfer.
            missing = getattr(response, "length", None)
            if isinstance(missing, int) and missing > 0:
                raise http.client.IncompleteRead(b"", missing)
    except InputError:
        raise
    except TimeoutError:
        raise InputError(f"{what} deadline exceeded") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if time.monotonic() >= deadline:
            raise InputError(f"{what} deadline exceeded") from None
        raise InputError(f"{what} failed: {exc}{hint}") from None


# -- registries -----------------------------------------------------------------------------------


def _is_url(source: str) -> bool:
    return urllib.parse.urlsplit(source).scheme in ("http", "https", "file")


def load_registry(
    registry: RegistryLike = None, *, offline: bool = False, cache_dir: str | os.PathLike[str] | None = None
) -> Registry:
    """The packaged registry (``None``), or one read from a path or an http(s)/file URL.

    A record's ``data_file`` resolves against the directory holding the registry. A registry
    downloaded over http(s) is remembered under ``<cache base>/registries/`` by a successful
    :func:`fetch`, so later ``offline`` runs can use it (its records still verify every file).
    """
    if registry is None:
        return registries.packaged()
    if isinstance(registry, Registry):
        return registry
    source = os.fspath(registry)
    if _is_url(source):
        base = urllib.parse.urljoin(source, "./")  # the directory holding the registry
        if urllib.parse.urlsplit(source).scheme == "file":
            chunks: list[bytes] = []
            _transfer(source, chunks.append, "registry download")
            return registries.parse(b"".join(chunks), source, base)
        if offline:
            remembered = _remembered(source, cache_dir)
            if not remembered.is_file():
                raise InputError(f"registry is not cached: {source}; run datasets fetch without --offline")
            return registries.parse(remembered.read_bytes(), source, base)
        chunks = []
        _transfer(source, chunks.append, "registry download")
        return registries.parse(b"".join(chunks), source, base)
    path = bundled_registry_path() if source == BUNDLED else Path(source).expanduser().resolve()
    with open(path, "rb") as handle:
        raw = handle.read(MAX_DOWNLOAD_BYTES + 1)
    if len(raw) > MAX_DOWNLOAD_BYTES:
        raise InputError(f"registry {source} exceeds byte limit")
    manifest = path.parent / "data" / "manifest.json"
    local_root = manifest.parent if manifest.is_file() and manifest.read_bytes() == raw else None
    return registries.parse(raw, source, path.parent.as_uri() + "/", local_root)


#: ``--registry bundled``: the small release built by this project and shipped in the package.
BUNDLED = "bundled"


def bundled_registry_path() -> Path:
    return Path(str(resources.files("modebench").joinpath("releases", "bundled", "registry.json")))


def _remembered(source: str, cache_dir: str | os.PathLike[str] | None) -> Path:
    return (
        _cache_base(cache_dir) / "registries" / f"{hashlib.sha256(source.encode('utf-8')).hexdigest()}.json"
    )


def registry_bytes(registry: RegistryLike = None) -> bytes:
    """The exact registry bytes (for the packaged one: the 0.4.0 ``frozen_splits.json``)."""
    return load_registry(registry).raw


def discover(
    config: str | None = None, split: str | None = None, *, registry: RegistryLike = None
) -> list[dict[str, Any]]:
    """Registry records matching the optional filters, in registry order."""
    return load_registry(registry).select(config, split)


def listing(
    config: str | None = None,
    split: str | None = None,
    *,
    as_json: bool = False,
    registry: RegistryLike = None,
) -> str:
    """The text of ``datasets list`` (``datasets.md`` §9.1); no network for the packaged registry."""
    import json

    records = discover(config, split, registry=registry)
    if not records:
        raise InputError(f"unknown dataset selection: {config or '*'}/{split or '*'}; use datasets list")
    if as_json:
        return json.dumps(records, indent=2)
    lines = ["level domain config split rows"]
    for record in sorted(records, key=lambda r: (r["level"], r["domain"], r["config_name"], r["split"])):
        lines.append(
            f"{record['level']} {record['domain']} {record['config_name']} {record['split']} {record['rows']}"
        )
    return "\n".join(lines)


# -- the cache ------------------------------------------------------------------------------------


def _cache_base(cache_dir: str | os.PathLike[str] | None) -> Path:
    if cache_dir is not None:
        base = Path(cache_dir)
    elif os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"]) / "modebench"
    else:
        base = Path("~/.cache/modebench")
    return base.expanduser().resolve()


def cache_data_root(
    cache_dir: str | os.PathLike[str] | None = None, *, registry: RegistryLike = None
) -> Path:
    """``<base>/<sha256 of registry bytes>/data`` (the path; nothing is created)."""
    return _cache_base(cache_dir) / load_registry(registry, cache_dir=cache_dir).sha256 / "data"


def _target(root: Path, data_file: str) -> Path:
    relative = registries.safe_data_file(data_file)
    target = (root.parent / relative).resolve()
    if not target.is_relative_to(root):
        raise InputError("dataset file must be inside the data directory")
    return target


def _file_sha256(path: Path, limit: int) -> str | None:
    """SHA-256 of a file of at most ``limit`` bytes; ``None`` when it is larger."""
    digest = hashlib.sha256()
    total = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            total += len(block)
            if total > limit:
                return None
            digest.update(block)
    return digest.hexdigest()


#: A temporary file untouched this long was left by a killed fetch (a live one is written to
#: continuously, and a download's overall deadline is far shorter).
STALE_TEMP_SECONDS = 600.0
_TEMP = re.compile(r"\.modebench-[0-9a-f]{16}")


def sweep_stale_temps(directory: Path) -> None:
    """Remove temporary files that killed fetches left in ``directory``."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    cutoff = time.time() - STALE_TEMP_SECONDS
    for entry in entries:
        try:
            if _TEMP.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
        except OSError:
            continue  # raced with another fetcher: nothing to do


def _write_atomic(path: Path, data: bytes) -> None:
    sweep_stale_temps(path.parent)
    temp = path.parent / f".modebench-{secrets.token_hex(8)}"
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _download(url: str, target: Path, record: dict[str, Any], label: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".modebench-{secrets.token_hex(8)}"
    try:
        digest = hashlib.sha256()
        with open(temp, "xb") as handle:

            def sink(chunk: bytes) -> None:
                handle.write(chunk)
                digest.update(chunk)

            _transfer(url, sink, "dataset download", "; retry fetch or use a verified offline cache")
            handle.flush()
            os.fsync(handle.fileno())
        if digest.hexdigest() != record["parquet_sha256"]:
            raise InputError(f"download hash mismatch: {label}; cache not modified")
        os.replace(temp, target)  # atomic; concurrent fetchers all install identical bytes
    except OSError as exc:
        raise InputError(
            f"dataset download failed: {exc}; retry fetch or use a verified offline cache"
        ) from None
    finally:
        temp.unlink(missing_ok=True)


def fetch(
    config: str,
    split: str = "eval",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    registry: RegistryLike = None,
) -> Path:
    """Return the verified cache data root holding ``config``/``split``, downloading if needed."""
    chosen = load_registry(registry, offline=offline, cache_dir=cache_dir)
    records = chosen.select(config, split)
    if len(records) != 1:
        raise InputError(f"unknown dataset selection: {config or '*'}/{split or '*'}; use datasets list")
    record = records[0]
    label = f"{config}/{split}"
    if chosen.local_root is not None:
        # A local release (e.g. the bundled one) is its own verified data root: nothing to copy.
        target = _target(chosen.local_root, record["data_file"])
        if _file_sha256(target, MAX_DOWNLOAD_BYTES) != record["parquet_sha256"]:
            raise InputError(f"dataset hash mismatch: {label}")
        return chosen.local_root
    root = cache_data_root(cache_dir, registry=chosen)
    target = _target(root, record["data_file"])
    sweep_stale_temps(target.parent)
    if target.exists():
        # Re-verified on every reuse; a bad entry is reported, never silently replaced.
        if _file_sha256(target, MAX_DOWNLOAD_BYTES) != record["parquet_sha256"]:
            raise InputError(f"cached dataset hash mismatch: {target}; remove this file and fetch again")
    elif offline:
        raise InputError(f"dataset is not cached: {label}; run datasets fetch without --offline")
    else:
        _download(chosen.url(record), target, record, label)
    _write_atomic(root / "manifest.json", chosen.raw)
    if urllib.parse.urlsplit(chosen.source).scheme in ("http", "https"):
        remembered = _remembered(chosen.source, cache_dir)
        remembered.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(remembered, chosen.raw)
    return root
