"""Which data directory a frozen split is read from, and reading a custom registry once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from modebench._datasets.cache import fetch
from modebench._datasets.parquet import PathLike, require_parquet
from modebench._datasets.sources import RegistryLike, load_registry

__all__ = ["SplitSource", "preload_registry", "resolve_data_root"]


def preload_registry(registry: RegistryLike, offline: bool, cache_dir: PathLike | None) -> RegistryLike:
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
    """The data root of a split: ``data_root``, else ``./data``, else the verified cache.

    ``./data`` is the checkout of the packaged release, so it is not consulted for another registry.
    """
    require_parquet()  # no download for a split that could not be read anyway
    if data_root is not None:
        return data_root
    if cache_dir is None and registry is None and Path("data", "manifest.json").exists():
        return "data"
    return fetch(config, split, cache_dir=cache_dir, offline=offline, registry=registry)


@dataclass(frozen=True)
class SplitSource:
    """Where a frozen split is read from: the options every dataset operation shares."""

    config: str
    split: str = "eval"
    data_root: PathLike | None = None
    cache_dir: PathLike | None = None
    offline: bool = False
    registry: RegistryLike = None

    def open(self) -> tuple[PathLike, RegistryLike]:
        """The data root and the registry, read once (either may download unless ``offline``)."""
        require_parquet()  # no download for a split that could not be read anyway
        registry = preload_registry(self.registry, self.offline, self.cache_dir)
        root = resolve_data_root(
            self.config,
            self.split,
            data_root=self.data_root,
            cache_dir=self.cache_dir,
            offline=self.offline,
            registry=registry,
        )
        return root, registry
