"""The data files 0.4.0 shipped at the package root, from this project's own data.

``frozen_splits.json`` is the stored form of the packaged 0.4.0 registry
(``modebench.registries.packaged`` reads it) and ``dataset_cards.json`` its cards: both hold
0.4.0's JSON values in compact form, never the published bytes, which
``dataset_cache.registry_bytes()`` and ``cards.cards_bytes()`` render exactly.
``data-sources.json`` states this project's data sources in 0.4.0's layout (the Pantry source
from ``domains/pantry_plan/ingredients.json``, the licences from ``DATA_LICENSE``).
``ops/release/make_package_data.py`` writes the generated ones and a test holds them equal to what these
functions produce, so the copies cannot drift from their sources.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: Package-root files written by ``ops/release/make_package_data.py`` (see :func:`generated_bytes`).
GENERATED = ("dataset_cards.json", "data-sources.json")


def dataset_cards_bytes() -> bytes:
    """The cards document as compact JSON: 0.4.0's value, not its published bytes."""
    from modebench.cards import cards  # noqa: PLC0415 - up a floor at call time: the cards load only when 0.4.0's package-data name is read

    return json.dumps(cards(), separators=(",", ":")).encode("ascii")


def data_sources() -> dict[str, Any]:
    pantry = json.loads(
        resources.files("modebench")
        .joinpath("domains/pantry_plan/ingredients.json")
        .read_text(encoding="utf-8")
    )["source"]
    return {
        "dataset_specific_license": "CC-BY-4.0 for the task data this project generates and ships (DATA_LICENSE); "
        "upstream public-domain elements retain their original status.",
        "pantry_ingredient_source": {
            "archive_name": pantry["archive"],
            "archive_sha256": pantry["archive_sha256"],
            "dataset": f"USDA FoodData Central {pantry['dataset']}",
            "license": pantry["license"],
            "release": pantry["release"],
            "url": pantry["license_url"],
            "citation": f"{pantry['publisher']}. {pantry['dataset']}, {pantry['release']} release.",
        },
        "source_code": "Apache-2.0 (LICENSE).",
        "project_dataset_license": {
            "spdx": "CC-BY-4.0",
            "url": "https://creativecommons.org/licenses/by/4.0/",
            "notice": "DATA_LICENSE",
            "attribution": ["modebench contributors"],
            "scope": "The bundled frozen release, the walkthrough tasks and releases made with `modebench build`; "
            "the ModeBench 0.4.0 splits that `datasets fetch` downloads are the ModeBench authors' data.",
        },
    }


def data_sources_bytes() -> bytes:
    return (json.dumps(data_sources(), indent=2) + "\n").encode("utf-8")


def generated_bytes(name: str) -> bytes:
    """The bytes a generated package-root file must hold."""
    producers = {
        "dataset_cards.json": dataset_cards_bytes,
        "data-sources.json": data_sources_bytes,
    }
    return producers[name]()


__all__ = ["GENERATED", "data_sources", "generated_bytes"]
