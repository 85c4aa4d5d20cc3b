"""Build a fresh, never-published frozen release with this project's generators.

``build_release(DIR, seed=S)`` writes

* ``DIR/data/level<L>/<domain>/<split>.parquet`` — train/dev/eval with disjoint instances;
* ``DIR/registry.json`` — the split-record registry (usable with ``--registry DIR/registry.json``);
* ``DIR/cards/<config>.json`` — a datasheet per configuration;
* ``DIR/README.md`` — the Hugging Face dataset card (``configs:`` per configuration, datasheets),
  so ``datasets.load_dataset(DIR, config)`` works on the directory as it is;
* ``DIR/manifest.json`` — SHA-256 and size of every file above.

Rows come from ``plugin.generate(level, Random(f"{seed}:{config}"))`` in order, skipping any
instance whose problem text was already drawn, so the same seed and software version give
byte-identical files. A release directory is never overwritten: a changed release is a new one.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from modebench import __version__
from modebench._words import counted
from modebench.contracts import (
    DOMAINS,
    LEVELS,
    NOT_ADMITTED_LEVELS,
    NOT_DIFFICULTY_MATCHED,
    install_hint,
    normalize_level,
)
from modebench.domains import is_certified, plugin
from modebench.hub.release_dir import build_title, write_card
from modebench.identity import digest_json, file_sha256
from modebench.publish import atomic_directory
from modebench.suite.cards import datasheet
from modebench.validation import InputError, OptionError, is_integer

REGISTRY_SCHEMA = "modebench-portable-data-v1"
MANIFEST_SCHEMA = "modebench-release-manifest-v1"
SPLITS = ("eval", "dev", "train")  # drawn in this order, so eval never depends on train size
ORIGINAL_SPLIT = {"eval": "multi_answer", "dev": "multi_answer", "train": "train"}
MAX_ATTEMPTS_PER_ROW = 50


def all_configs() -> list[str]:
    return [f"level{level}_{domain}" for level in LEVELS for domain in sorted(DOMAINS)]


def parse_config(config: str) -> tuple[int, str]:
    # A release is certified under modebench-verifiers-v1, so it is built from the certified
    # built-in domains only; third-party domains are graded but never frozen into a release.
    prefix, _, domain = config.partition("_")
    try:
        level = normalize_level(prefix) if prefix.startswith("level") else None
    except ValueError:
        level = None
    if level is None or not is_certified(domain):
        raise InputError(f"unknown configuration: {config}; expected level<1-5>_<domain>")
    return level, domain


def generate_rows(config: str, seed: int, counts: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """Rows per split for one configuration; instances are disjoint across splits."""
    level, domain = parse_config(config)
    generate = plugin(domain).generate
    if generate is None:
        raise InputError(f"{domain} has no task generator")
    rng = random.Random(f"{seed}:{config}")
    seen: set[str] = set()
    out: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        rows: list[dict[str, Any]] = []
        attempts = 0
        while len(rows) < counts.get(split, 0):
            attempts += 1
            if attempts > MAX_ATTEMPTS_PER_ROW * max(1, counts[split]):
                # The generator's instance space is finite: say how far it got, so the user can
                # ask for what fits (splits are disjoint, so the capacity is shared by all three).
                asked = sum(counts.get(name, 0) for name in SPLITS)
                raise InputError(
                    f"{config}: could not draw {counts[split]} distinct {split} rows: the generator "
                    f"gave only {counted(len(seen), 'distinct problem')} for this cell ({len(rows)} of them for "
                    f"{split}) in {counted(attempts, 'draw')}, so about {counted(len(seen), 'row')} fit across "
                    "all splits, "
                    f"and {asked} were asked for"
                )
            row = generate(level, rng)
            if row["problem"] in seen:
                continue
            seen.add(row["problem"])
            rows.append(row)
        out[split] = rows
    return out


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa  # noqa: PLC0415 - optional extra: data (pyarrow)
        import pyarrow.parquet as pq  # noqa: PLC0415 - optional extra: data (pyarrow)
    except ImportError:  # pragma: no cover - exercised without the extra
        raise InputError(f"building a release requires the 'data' extra: {install_hint('data')}") from None
    columns = list(rows[0])
    table = pa.Table.from_pydict({name: [row[name] for row in rows] for name in columns})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", use_dictionary=False, write_statistics=False)


def _record(
    config: str, split: str, rows: list[dict[str, Any]], parquet: Path, data_file: str
) -> dict[str, Any]:
    level, domain = parse_config(config)
    record: dict[str, Any] = {
        "config_name": config,
        "data_file": data_file,
        "domain": domain,
        "level": level,
        "original_datasetdict_split": ORIGINAL_SPLIT[split],
        "parquet_sha256": file_sha256(parquet),
        "rows": len(rows),
        "rows_sha256": digest_json(rows),
        "source_column_order": list(rows[0]),
        "split": split,
    }
    if level >= 4:  # the level definitions carry the admission facts of the published levels
        record["level_admitted"] = level not in NOT_ADMITTED_LEVELS
        record["difficulty_matched"] = (level, domain) not in NOT_DIFFICULTY_MATCHED
    return record


def build_release(
    output: str | os.PathLike[str], *, seed: int, configs: str = "all", rows: dict[str, int] | None = None
) -> dict[str, Any]:
    """Generate and publish a release directory; return a summary (registry hash, counts)."""
    counts = {"eval": 128, "dev": 0, "train": 0} | dict(rows or {})
    if not all(is_integer(n) and n >= 0 for n in counts.values()) or counts["eval"] <= 0:
        raise OptionError("release_rows", "rows must be positive for eval and nonnegative for dev and train")
    chosen = (
        all_configs() if configs == "all" else [name.strip() for name in configs.split(",") if name.strip()]
    )
    for name in chosen:
        parse_config(name)
    with atomic_directory(output, "release") as temp:
        records: list[dict[str, Any]] = []
        datasheets: dict[str, dict[str, Any]] = {}
        for config in chosen:
            level, domain = parse_config(config)
            produced = generate_rows(config, seed, counts)
            config_records = []
            for split in SPLITS:
                if not produced[split]:
                    continue
                data_file = f"data/level{level}/{domain}/{split}.parquet"
                _write_parquet(temp / data_file, produced[split])
                config_records.append(_record(config, split, produced[split], temp / data_file, data_file))
            records.extend(config_records)
            card_path = temp / "cards" / f"{config}.json"
            card_path.parent.mkdir(parents=True, exist_ok=True)
            datasheets[config] = datasheet(config, level, domain, config_records, seed)
            card_path.write_text(json.dumps(datasheets[config], indent=2) + "\n", encoding="utf-8")
        records.sort(key=lambda r: (r["config_name"], r["split"]))
        registry = {"schema": REGISTRY_SCHEMA, "splits": records}
        registry_text = json.dumps(registry, indent=2, sort_keys=True) + "\n"
        (temp / "registry.json").write_text(registry_text, encoding="ascii")
        # The same bytes as data/manifest.json make DIR/data a data root usable as it is.
        (temp / "data" / "manifest.json").write_text(registry_text, encoding="ascii")

        title, summary = build_title({"generator": f"modebench {__version__}", "seed": seed})
        write_card(temp, records, datasheets, title=title, summary=summary)
        files = sorted(p for p in temp.rglob("*") if p.is_file())
        manifest = {
            "schema": MANIFEST_SCHEMA,
            "generator": f"modebench {__version__}",
            "seed": seed,
            "files": {
                p.relative_to(temp).as_posix(): {"sha256": file_sha256(p), "bytes": p.stat().st_size}
                for p in files
            },
        }
        (temp / "manifest.json").write_text(
            json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="ascii"
        )
    return {
        "output": str(output),
        "registry": str(Path(output) / "registry.json"),
        "registry_sha256": file_sha256(Path(output) / "registry.json"),
        "configs": len(chosen),
        "splits": len(records),
        "rows": sum(r["rows"] for r in records),
    }


__all__ = ["all_configs", "build_release", "generate_rows", "parse_config"]
