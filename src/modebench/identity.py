"""Canonical JSON, digests, and the software identity bound into every receipt."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any, cast

from modebench import __version__
from modebench.contracts import BENCHMARK_CONTRACT, DIAGNOSTIC_CONTRACT, DOMAIN_ENTRY_POINT_GROUP
from modebench.diagnostics import RESOURCE_POLICY
from modebench.guard import open_regular

PACKAGE_DIR = Path(__file__).resolve().parent


#: ``json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)`` builds this very
#: encoder on every call; building it once saves most of the cost of encoding a short value (the
#: hot paths encode a few hundred thousand keys and strings per 10,000 prompts). The encoder keeps
#: no state between calls, so sharing it across threads is safe.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical(value: Any) -> str:
    """Sorted keys, compact separators, ASCII escapes, no NaN: the one hashing encoding."""
    return _CANONICAL.encode(value)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_json(value: Any) -> str:
    """Lower-case hex SHA-256 of ``canonical(value)``."""
    return sha256_text(canonical(value))


def bounded_file_sha256(path: str | os.PathLike[str], limit: int | None) -> str | None:
    """SHA-256 of a file, or ``None`` once it proves longer than ``limit`` bytes (no limit: ``None``)."""
    digest = hashlib.sha256()
    total = 0
    with open_regular(path, "any") as handle:  # a FIFO or device is refused, never read forever
        for block in iter(lambda: handle.read(1 << 20), b""):
            total += len(block)
            if limit is not None and total > limit:
                return None
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    return cast(str, bounded_file_sha256(path, None))  # without a limit there is always a digest


def source_files(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """``{relative posix path: sha256}`` of every ``*.py`` and ``*.json`` file below ``root``,
    leaving out ``__pycache__`` and any directory named in ``skip``."""
    ignored = {"__pycache__"} | skip
    return {
        path.relative_to(root).as_posix(): file_sha256(path)
        for path in sorted(root.rglob("*"))
        if path.suffix in (".py", ".json") and path.is_file() and not ignored & set(path.parts)
    }


@cache
def _source_files() -> tuple[tuple[str, str], ...]:
    # Hashed once per process: the package does not change under a running evaluator.
    # The bundled release is data (installed as _bundled_release), not software.
    return tuple(source_files(PACKAGE_DIR, frozenset({"_bundled_release"})).items())


def _version(name: str) -> str | None:
    # importlib.metadata, platform and subprocess are loaded where a receipt's identity is made:
    # a grading worker imports this module for its encodings only (about 20 ms less start-up).
    from importlib import metadata  # noqa: PLC0415 - worker start-up

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@cache
def _git() -> tuple[str | None, bool | None]:
    import subprocess  # noqa: PLC0415 - worker start-up (see _version)

    root = PACKAGE_DIR.parent.parent
    if not (root / ".git").exists():
        return None, None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=3, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, timeout=3, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(status.strip())


#: Held while the cached source hashes and git state are being made: a caller waits for a
#: :func:`prefetch` under way instead of making them a second time.
_MAKING = threading.Lock()


def prefetch() -> None:
    """Make the source hashes and git state now (``modebench evaluate`` runs this in a thread
    while it imports the evaluator: file reads and git's subprocesses leave the GIL free)."""
    with _MAKING:
        _source_files()
        _git()


def software_identity(*, include_git: bool = True) -> dict[str, Any]:
    """The ``software`` object of receipts (``docs/evaluation.md``, "The receipt")."""
    with _MAKING:
        files = dict(_source_files())
        git = _git() if include_git else None
    identity: dict[str, Any] = {
        "modebench_version": __version__,
        "verifier_contract": BENCHMARK_CONTRACT,
        "diagnostic_contract": DIAGNOSTIC_CONTRACT,
        "resource_policy": dict(RESOURCE_POLICY),
        "package_source_sha256": digest_json(files),
        "source_files": files,
    }
    if git is not None:
        commit, dirty = git
        identity["git"] = {"commit": commit, "dirty": dirty}
    import platform  # noqa: PLC0415 - worker start-up (see _version)

    identity["python"] = platform.python_version()
    identity["platform"] = platform.system()
    identity["dependencies"] = {name: _version(name) for name in ("sympy", "datasets", "pyarrow")}
    return identity


def grader_identity(data_root: Any = None, cache_dir: Any = None) -> dict[str, Any]:
    """What a cached grading depends on beyond its input: the software (the package's source
    hash, contracts and dependencies), the installed domain plug-ins (their entry points and
    distribution versions, read from metadata without importing any) and the data it reads
    (the data root's or cache's resolved path and the root manifest's hash).

    A receipt cached under a key built from this is reused only by the same grader on the same
    data: a verifier change, a plug-in installed, upgraded or removed, or another data root grades
    afresh (the trajectory grading cache, ``modebench.ingest.grading``).
    """
    from importlib import metadata  # noqa: PLC0415 - worker start-up (see _version)

    software = software_identity(include_git=False)
    entries = sorted(
        (
            entry.dist.metadata["Name"] if entry.dist is not None else "",
            entry.dist.version if entry.dist is not None else "",
            entry.name,
            entry.value,
        )
        for entry in metadata.entry_points(group=DOMAIN_ENTRY_POINT_GROUP)
    )
    data: dict[str, Any] = {}
    for key, value in (("data_root", data_root), ("cache_dir", cache_dir)):
        if value is not None:
            root = Path(value).expanduser().resolve()
            manifest = root / "manifest.json"
            data[key] = {
                "path": str(root),
                "manifest_sha256": file_sha256(manifest) if manifest.is_file() else None,
            }
    return {
        "software_sha256": digest_json({k: v for k, v in software.items() if k != "source_files"}),
        "plugins": [list(entry) for entry in entries],
        "data": data,
    }


__all__ = [
    "grader_identity",
    "prefetch",
    "canonical",
    "digest_json",
    "file_sha256",
    "sha256_text",
    "software_identity",
    "source_files",
]
