"""The release inventory: every shipped file with its SHA-256 and size.

``python ops/release/verify_release.py`` checks ``evidence/release-inventory.json`` against the tree and exits 1
on any difference (``make check`` runs it); ``--refresh`` rewrites the inventory after a change.
Shipped files: the package under ``src/modebench`` (sources, data), the bundled release under
``data/``, the license,
citation, changelog and README, and this project's evidence records (``evidence/``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "evidence" / "release-inventory.json"
TOP_LEVEL = (
    "README.md",
    "LICENSE",
    "DATA_LICENSE",
    "CITATION.cff",
    "CHANGELOG.md",
    "pyproject.toml",
    "MANIFEST.in",
    "setup.py",
)
SUFFIXES = {".py", ".json", ".parquet", ".typed", ".md"}


def shipped_files() -> list[Path]:
    files = [ROOT / name for name in TOP_LEVEL]
    for folder in ("src/modebench", "data", "evidence"):
        for path in sorted((ROOT / folder).rglob("*")):
            if (
                path.is_file()
                and path.suffix in SUFFIXES
                and "__pycache__" not in path.parts
                and path != INVENTORY
            ):
                files.append(path)
    return files


def inventory() -> dict[str, object]:
    sys.path.insert(0, str(ROOT / "src"))
    from modebench import __version__

    entries = []
    for path in shipped_files():
        data = path.read_bytes()
        entries.append(
            {
                "path": path.relative_to(ROOT).as_posix(),
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            }
        )
    return {"schema": "modebench-release-inventory-v1", "version": __version__, "files": entries}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="rewrite evidence/release-inventory.json")
    args = parser.parse_args()
    current = inventory()
    if args.refresh:
        INVENTORY.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
        print(f"written: {INVENTORY.relative_to(ROOT)} ({len(current['files'])} files)")  # type: ignore[arg-type]
        return 0
    if not INVENTORY.is_file():
        print(
            "evidence/release-inventory.json is missing; run: python ops/release/verify_release.py --refresh"
        )
        return 1
    recorded = json.loads(INVENTORY.read_text(encoding="utf-8"))
    old = {entry["path"]: entry for entry in recorded["files"]}
    new = {entry["path"]: entry for entry in current["files"]}  # type: ignore[attr-defined]
    problems = [f"missing from tree: {p}" for p in sorted(set(old) - set(new))]
    problems += [f"not in inventory: {p}" for p in sorted(set(new) - set(old))]
    problems += [f"changed: {p}" for p in sorted(set(old) & set(new)) if old[p]["sha256"] != new[p]["sha256"]]
    if recorded.get("version") != current["version"]:
        problems.append(f"version {recorded.get('version')} != {current['version']}")
    for problem in problems:
        print(problem)
    if problems:
        print("release inventory is stale; run: python ops/release/verify_release.py --refresh")
        return 1
    print(f"release inventory ok: {len(new)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
