"""``modebench datasets export DIR``: any registry's splits as a Hub-ready release directory.

Every split is fetched through the verified cache (so it is checked against the registry's
SHA-256), then written under ``DIR`` at its registry ``data_file`` path and checked again. The
registry is copied byte for byte to ``DIR/registry.json`` and ``DIR/data/manifest.json`` — its
bytes are its identity, so the exported directory names the same cache partition and is a data
root as it is. ``cards/<config>.json``, the ``README.md`` dataset card and a ``manifest.json`` of
every file complete it. Like ``build``, the directory is assembled beside its destination and
renamed into place; an existing destination is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from modebench import __version__
from modebench.cards import card
from modebench.dataset_cache import fetch, load_registry
from modebench.hub.release_dir import build_title, write_card
from modebench.identity import file_sha256
from modebench.validation import InputError, loads

__all__ = ["EXPORT_MANIFEST_SCHEMA", "export_release"]

EXPORT_MANIFEST_SCHEMA = "modebench-release-manifest-v1"


def _titles(registry: Any) -> tuple[str, str]:
    if registry.source == "packaged":
        return (
            "ModeBench 0.4.0",
            "The frozen splits of the published ModeBench 0.4.0 release: tasks in five domains and "
            "five levels for grading saved language-model responses for correctness and "
            "solution-mode diversity.",
        )
    if registry.local_root is not None:
        manifest = registry.local_root.parent / "manifest.json"
        if manifest.is_file():
            document = loads(manifest.read_bytes())
            if isinstance(document, dict) and "seed" in document:
                return build_title(document)
    return (
        "ModeBench splits",
        f"Splits of the registry {registry.source}, exported by modebench {__version__}; every "
        "file was verified against the registry's SHA-256 before it was written.",
    )


def _write_verified(path: Path, data: bytes, sha256: str, label: str) -> None:
    if hashlib.sha256(data).hexdigest() != sha256:
        raise InputError(f"dataset hash mismatch: {label}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def export_release(
    directory: str | os.PathLike[str],
    *,
    registry: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
) -> dict[str, Any]:
    """Write every split of ``registry`` (default: the packaged 0.4.0 one) as a release directory."""

    target = Path(directory)
    if target.exists():
        raise InputError(f"export destination already exists: {os.fspath(directory)}")
    chosen = load_registry(registry, offline=offline, cache_dir=cache_dir)
    records = chosen.select()
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".modebench-export-{secrets.token_hex(6)}"
    temp.mkdir()
    try:
        for record in records:
            label = f"{record['config_name']}/{record['split']}"
            root = fetch(
                record["config_name"], record["split"], cache_dir=cache_dir, offline=offline, registry=chosen
            )
            source = root.parent / record["data_file"]
            _write_verified(temp / record["data_file"], source.read_bytes(), record["parquet_sha256"], label)
        (temp / "registry.json").write_bytes(chosen.raw)
        (temp / "data").mkdir(exist_ok=True)
        (temp / "data" / "manifest.json").write_bytes(chosen.raw)
        configs = sorted({record["config_name"] for record in records})
        datasheets = {config: card(config, registry=chosen) for config in configs}
        (temp / "cards").mkdir()
        for config, sheet in datasheets.items():
            (temp / "cards" / f"{config}.json").write_text(
                json.dumps(sheet, indent=2) + "\n", encoding="utf-8"
            )
        title, summary = _titles(chosen)
        write_card(temp, records, datasheets, title=title, summary=summary)
        files = sorted(path for path in temp.rglob("*") if path.is_file())
        manifest = {
            "schema": EXPORT_MANIFEST_SCHEMA,
            "generator": f"modebench {__version__} export",
            "registry_source": chosen.source,
            "files": {
                path.relative_to(temp).as_posix(): {"sha256": file_sha256(path), "bytes": path.stat().st_size}
                for path in files
            },
        }
        (temp / "manifest.json").write_text(
            json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="ascii"
        )
        os.rename(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return {
        "output": os.fspath(directory),
        "registry_sha256": chosen.sha256,
        "configs": len(configs),
        "splits": len(records),
        "rows": sum(record["rows"] for record in records),
    }
