"""The packaged 0.4.0 registry, ``datasets list``/``card``, cards, and cache layout."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest
from tests.reference_data import REFERENCE, reference_json

from modebench import cards, cli, dataset_cache, registries

CARDS_SHA256 = "bd36ab849483327f1ae71c20d69d9d23bb9186d09f62ece09ef18ce64da12e29"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_packaged_registry_renders_the_published_bytes() -> None:
    raw = dataset_cache.registry_bytes()
    assert len(raw) == 54_973
    assert hashlib.sha256(raw).hexdigest() == registries.PACKAGED_SHA256
    assert registries.packaged().sha256 == registries.PACKAGED_SHA256
    # stored compactly: the repository never holds a byte copy of the reference file
    stored = resources.files("modebench").joinpath(registries.PACKAGED_NAME).read_bytes()
    assert stored != raw and json.loads(stored) == json.loads(raw)


def test_packaged_registry_equals_reference_file() -> None:
    path = REFERENCE / "src" / "modebench" / "frozen_splits.json"
    reference_json("src/modebench/frozen_splits.json")  # skips with a clear reason when absent
    assert dataset_cache.registry_bytes() == path.read_bytes()


def test_list_json_gives_the_72_reference_identities(capsys) -> None:
    reference = reference_json("src/modebench/frozen_splits.json")["splits"]
    code, out, _ = run(capsys, "datasets", "list", "--json")
    assert code == 0
    listed = json.loads(out)
    assert listed == reference and len(listed) == 72
    assert out == json.dumps(reference, indent=2) + "\n"
    assert sum(record["rows"] for record in listed) == 15_552
    by_key = {(r["config_name"], r["split"]): r for r in listed}
    for record in reference:
        mine = by_key[(record["config_name"], record["split"])]
        assert (mine["parquet_sha256"], mine["rows_sha256"], mine["rows"]) == (
            record["parquet_sha256"],
            record["rows_sha256"],
            record["rows"],
        )


def test_list_inventory_without_reference(capsys) -> None:
    records = dataset_cache.discover()
    assert len(records) == 72 and len({r["config_name"] for r in records}) == 26
    assert sum(r["rows"] for r in records) == 15_552
    for record in records:
        if record["level"] == 4:
            assert record["level_admitted"] is False
            assert record["difficulty_matched"] is (record["domain"] != "mathir")
        elif record["level"] == 5:
            assert record["level_admitted"] is True and record["difficulty_matched"] is True
        else:
            assert "level_admitted" not in record
    code, out, _ = run(capsys, "datasets", "list")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 73
    assert lines[:4] == [
        "level domain config split rows",
        "1 countdown level1_countdown eval 128",
        "1 countdown level1_countdown train 384",
        "1 graph_coloring level1_graph_coloring eval 128",
    ]
    assert lines[-1] == "5 python_factors level5_python_factors train 384"
    code, out, _ = run(capsys, "datasets", "list", "--config", "level1_pantry_plan", "--split", "dev")
    assert out.splitlines() == ["level domain config split rows", "1 pantry_plan level1_pantry_plan dev 64"]


def test_cards_reproduce_the_published_document() -> None:
    raw = cards.cards_bytes()
    assert len(raw) == 58_204
    assert hashlib.sha256(raw).hexdigest() == CARDS_SHA256


def test_cards_equal_reference_file() -> None:
    assert cards.cards() == reference_json("src/modebench/dataset_cards.json")


def test_card_command_and_invariants(capsys) -> None:
    code, out, _ = run(capsys, "datasets", "card", "--config", "level1_countdown")
    card = json.loads(out)
    assert code == 0 and out == json.dumps(card, indent=2) + "\n"
    assert card["license"] == "CC-BY-4.0" and len(card["authors"]) == 5
    assert list(card)[:3] == ["config", "level", "domain"]
    document = cards.cards()
    assert len(document["cards"]) == 26
    for item in document["cards"]:
        for split, entry in item["splits"].items():
            (record,) = dataset_cache.discover(item["config"], split)
            assert entry == {"rows": record["rows"], "parquet_sha256": record["parquet_sha256"]}
        if item["level"] == 4:
            assert any("not admitted" in line for line in item["limitations"])
        if item["domain"] == "pantry_plan":
            assert item["upstream_license"] == "CC0-1.0"
    code, _, err = run(capsys, "datasets", "card", "--config", "level9_nothing")
    assert code == 2 and "unknown dataset configuration; use datasets list" in err


def test_cards_of_another_registry_follow_the_same_rules(tmp_path: Path) -> None:
    records = dataset_cache.discover("level4_countdown") + dataset_cache.discover("level4_mathir")
    for record in records:
        record["level"] = 3  # with the admission flags of level 4
        record["config_name"] = record["config_name"].replace("level4", "level3")
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"schema": registries.SCHEMA, "splits": records}))
    card = cards.card("level3_countdown", registry=path)
    assert (
        card["limitations"][-1]
        == "Level 3 as a whole is not admitted; Level 3 MathIR is not difficulty-matched."
    )
    assert card["source_records"] == ["provenance/levels123_manifest.json"]


def test_cache_data_root_layout(tmp_path: Path, monkeypatch) -> None:
    partition = registries.PACKAGED_SHA256
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert dataset_cache.cache_data_root() == (tmp_path / "xdg").resolve() / "modebench" / partition / "data"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (
        dataset_cache.cache_data_root()
        == (tmp_path / "home").resolve() / ".cache" / "modebench" / partition / "data"
    )
    assert (
        dataset_cache.cache_data_root(tmp_path / "explicit")
        == (tmp_path / "explicit").resolve() / partition / "data"
    )
    assert not (tmp_path / "explicit").exists()


def test_constants() -> None:
    assert dataset_cache.MAX_DOWNLOAD_BYTES == 33_554_432
    assert dataset_cache.DOWNLOAD_TIMEOUT_SECONDS == 30
    assert dataset_cache.DATA_REVISION == "94c45d1f66d3eb181fac2225dc04d62e08568b8e"
    assert (
        dataset_cache.DATA_ORIGIN
        == f"https://raw.githubusercontent.com/liv-daliberti/modeBench/{dataset_cache.DATA_REVISION}/"
    )
    (record,) = dataset_cache.discover("level1_countdown", "eval")
    assert (
        registries.packaged().url(record) == dataset_cache.DATA_ORIGIN + "data/level1/countdown/eval.parquet"
    )
