"""Dataset cards generated from a registry (``docs/datasets.md``, "Dataset cards").

For the packaged 0.4.0 registry the generated document is byte-identical to the published
``dataset_cards.json`` (``json.dumps(obj, indent=2) + "\\n"``). For other registries the same
rules apply; the admission limitation is derived from the records' admission flags (which is
what singles out Level 4 in 0.4.0) rather than from a hard-coded level.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from modebench._datasets.suggest import unknown_hint
from modebench.contracts import BENCHMARK_CONTRACT, normalize_domain
from modebench.dataset_cache import RegistryLike, load_registry
from modebench.domains import plugin
from modebench.validation import InputError, loads

__all__ = ["CARDS_SCHEMA", "SHARED_LIMITATIONS", "card", "card_head", "cards", "cards_bytes", "domain_text"]

CARDS_SCHEMA = "modebench-dataset-cards-v1"
INTENDED_USE = (
    "Reproducible correctness and solution-mode-diversity evaluation with saved generations; "
    "train/dev use only where supplied."
)
AUTHORS = [
    "Liv G. d'Aliberti",
    "Marwa Abdulhai",
    "Sofiia Druchyna",
    "Peter Henderson",
    "Manoel Horta Ribeiro",
]
FIELDS = {
    "problem": "Task text; render through the registered prompt interface.",
    "answer": "Executable reference; never send to the model.",
    "answer_mode_count": "Certified mode count metadata; never send to the model.",
    "answer_mode_split": "Original split/category metadata.",
}
#: Limitations every card states, whoever made the data.
SHARED_LIMITATIONS = (
    "Mode identities are prompt-local.",
    "Report correctness and PCMD eligibility alongside diversity.",
)
COMMON_LIMITATIONS = [
    *SHARED_LIMITATIONS,
    "Full higher-level construction and calibration are not consolidated into a single public generator.",
]
UNIQUE_LIMITATION = "Single-answer diagnostic, separate from the main benchmark."


def domain_text(domain: str) -> dict[str, Any]:
    """The card sentences of a domain (``task``, ``canonical_identity``, ``source``, …), from its plug-in."""
    return dataclasses.asdict(plugin(normalize_domain(domain)).card)


def card_head(config: str, level: int, domain: str) -> dict[str, Any]:
    """The fields every card opens with: which configuration, and what its domain asks and keys."""
    text = domain_text(domain)
    return {
        "config": config,
        "level": level,
        "domain": domain,
        "task": text["task"],
        "canonical_identity": text["canonical_identity"],
    }


def _admission_note(level: int, records: list[dict[str, Any]]) -> str | None:
    """``Level L as a whole is not admitted[; Level L <Domain> is not difficulty-matched].``"""
    at_level = [record for record in records if record["level"] == level]
    if not any(record.get("level_admitted") is False for record in at_level):
        return None
    unmatched = sorted({record["domain"] for record in at_level if record.get("difficulty_matched") is False})
    parts = [f"Level {level} as a whole is not admitted"]
    parts += [
        f"Level {level} {domain_text(domain)['name']} is not difficulty-matched" for domain in unmatched
    ]
    return "; ".join(parts) + "."


def _card(config: str, splits: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    first = splits[0]
    level, domain = first["level"], first["domain"]
    text = domain_text(domain)
    limitations = list(COMMON_LIMITATIONS)
    if config.endswith("_unique_answer"):
        limitations.append(UNIQUE_LIMITATION)
    note = _admission_note(level, records)
    if note is not None:
        limitations.append(note)
    if text["limitation"] is not None:
        limitations.append(text["limitation"])
    return {
        **card_head(config, level, domain),
        "intended_use": INTENDED_USE,
        "source": text["source"],
        "license": "CC-BY-4.0",
        "upstream_license": text["upstream_license"],
        "authors": list(AUTHORS),
        "citation_key": "dAliberti:etal:ModeCollapse:2027",
        "prompt_condition": "registered_hints_v1",
        "verifier_contract": BENCHMARK_CONTRACT,
        "splits": {
            record["split"]: {"rows": record["rows"], "parquet_sha256": record["parquet_sha256"]}
            for record in sorted(splits, key=lambda r: r["split"])
        },
        "fields": dict(FIELDS),
        "limitations": limitations,
        "privacy": "No human-subject data are intentionally collected by these synthetic generators.",
        "maintenance": "https://github.com/liv-daliberti/modeBench/issues",
        "source_records": [
            "provenance/levels123_manifest.json" if level <= 3 else "provenance/levels45_manifest.json"
        ],
    }


def cards(registry: RegistryLike = None) -> dict[str, Any]:
    """The cards document of a registry (one card per configuration, ordered by name)."""
    records = load_registry(registry).select()
    by_config: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_config.setdefault(record["config_name"], []).append(record)
    return {
        "schema": CARDS_SCHEMA,
        "cards": [_card(config, by_config[config], records) for config in sorted(by_config)],
    }


def cards_bytes(registry: RegistryLike = None) -> bytes:
    """The serialized cards document (for 0.4.0: the published ``dataset_cards.json``)."""
    return (json.dumps(cards(registry), indent=2) + "\n").encode("ascii")


def card(config: str, registry: RegistryLike = None) -> dict[str, Any]:
    """One configuration's card; unknown → ``unknown dataset configuration; use datasets list``.

    A local release made by ``modebench build`` (the bundled one included) carries its own
    datasheets in ``cards/``; those are shown, so generated data is never attributed to the
    authors of the published 0.4.0 release.
    """
    chosen = load_registry(registry)
    if chosen.local_root is not None and chosen.select(config):
        own = chosen.local_root.parent / "cards" / f"{config}.json"
        if own.is_file():
            datasheet: dict[str, Any] = loads(own.read_bytes())
            return datasheet
    found: list[dict[str, Any]] = cards(chosen)["cards"]
    for item in found:
        if item["config"] == config:
            return item
    raise InputError(
        "unknown dataset configuration; use datasets list" + unknown_hint(config, None, chosen.records)
    )
