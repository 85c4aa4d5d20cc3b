"""Registries: the packaged 0.4.0 one, the bundled release, or one read from a path or URL."""

from __future__ import annotations

import importlib.util
import os
import urllib.parse
from pathlib import Path

from modebench import registries
from modebench._datasets.paths import remembered_registry
from modebench._datasets.settings import public
from modebench._datasets.transfer import transfer
from modebench.guard import open_regular
from modebench.registries import Registry
from modebench.validation import InputError, OptionError

__all__ = [
    "BUNDLED",
    "BUNDLED_PACKAGE",
    "RegistryLike",
    "bundled_registry_path",
    "bundled_release_root",
    "is_url",
    "load_registry",
]

RegistryLike = Registry | str | os.PathLike[str] | None


def is_url(source: str) -> bool:
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
    if source.startswith("hf://"):
        return _hub_registry(source, offline, cache_dir)
    if is_url(source):
        base = urllib.parse.urljoin(source, "./")  # the directory holding the registry
        if urllib.parse.urlsplit(source).scheme == "file":
            chunks: list[bytes] = []
            transfer(source, chunks.append, "registry download")
            return registries.parse(b"".join(chunks), source, base)
        if offline:
            remembered = remembered_registry(source, cache_dir)
            if not remembered.is_file():
                raise OptionError(
                    "registry_not_cached",
                    f"registry is not cached: {source}; fetch a split of it while online first",
                    source=source,
                )
            return registries.parse(remembered.read_bytes(), source, base)
        chunks = []
        transfer(source, chunks.append, "registry download")
        return registries.parse(b"".join(chunks), source, base)
    path = bundled_registry_path() if source == BUNDLED else Path(source).expanduser().resolve()
    settings = public()  # the public names, read at call time

    with open_regular(path, "registry") as handle:  # a FIFO or device is refused by name
        raw = handle.read(settings.MAX_DOWNLOAD_BYTES + 1)
    if len(raw) > settings.MAX_DOWNLOAD_BYTES:
        raise InputError(f"registry {source} exceeds byte limit")
    manifest = path.parent / "data" / "manifest.json"
    local_root = manifest.parent if manifest.is_file() and manifest.read_bytes() == raw else None
    return registries.parse(raw, source, path.parent.as_uri() + "/", local_root)


#: ``--registry bundled``: the small release built by this project and shipped in the package.
BUNDLED = "bundled"


#: The data-only package the wheel installs the top-level ``data/bundled/`` release as.
BUNDLED_PACKAGE = "modebench._bundled_release"


def bundled_release_root() -> Path:
    """The bundled release directory: the installed package data, else ``data/bundled`` of the checkout."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[3] / "data" / "bundled"  # src/modebench/_datasets/…


def bundled_registry_path() -> Path:
    return bundled_release_root() / "registry.json"


def _hub_registry(source: str, offline: bool, cache_dir: str | os.PathLike[str] | None) -> Registry:
    """``hf://datasets/OWNER/NAME@COMMIT``: the repository's ``registry.json`` at that commit."""
    from modebench.hub.address import parse_address  # noqa: PLC0415 - hf:// registries only (data extra)
    from modebench.hub.origin import fetch_bytes, limits  # noqa: PLC0415 - hf:// registries only (data extra)

    address = parse_address(source)
    raw = fetch_bytes(
        address,
        "registry.json",
        sha256=None,
        label="registry",
        what="registry download",
        not_cached=OptionError(
            "registry_not_cached",
            f"registry is not cached: {source}; fetch a split of it while online first",
            source=source,
        ),
        offline=offline,
        cache_dir=cache_dir,
        limits=limits(),
    )
    return registries.parse(raw, source, str(address))
