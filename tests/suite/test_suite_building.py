"""Power analysis, calibration from a pilot receipt, and fresh release builds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main
from modebench.domains import plugin
from modebench.domains._pipeline import grade_in_process
from modebench.streaming import evaluate_file
from modebench.suite.build import build_release, generate_rows
from modebench.suite.calibrate import calibrate, stratum
from modebench.suite.power import detectable_delta, items_needed
from modebench.validation import InputError


@pytest.mark.parametrize(("delta", "items"), [(0.10, 194), (0.08, 305), (0.05, 783)])
def test_mcnemar_items(delta: float, items: int) -> None:
    assert items_needed(delta, 0.25).items == items


def test_power_inverse_and_validation(capsys: pytest.CaptureFixture[str]) -> None:
    for items in (194, 305, 783):
        delta = detectable_delta(items, 0.25)
        assert items_needed(delta, 0.25).items <= items < items_needed(delta * 0.999, 0.25).items
    assert items_needed(0.1, 0.25, draws=8).responses == 194 * 8
    with pytest.raises(InputError):
        items_needed(0.6, 0.25)
    assert main(["power", "--delta", "0.05", "--discordant", "0.25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 783
    assert main(["power", "--items", "194", "--discordant", "0.25"]) == 0
    assert "with 194 items: 0.1000" in capsys.readouterr().out


def test_strata() -> None:
    assert [stratum(x) for x in (1.0, 0.81, 0.8, 0.4, 0.39, 0.0)] == [
        "easy",
        "easy",
        "medium",
        "medium",
        "hard",
        "hard",
    ]


def _pilot(tmp_path: Path) -> Path:
    answer = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
    patterns = [
        ["1+2+3"] * 4,
        ["1+2+3", "x", "x", "x"],
        ["1+2+3", "3*2*1", "x", "x"],
        ["x"] * 4,
        ["1+2+3"] * 3 + ["x"],
    ]
    records = []
    for index in range(20):
        records.append(
            {
                "id": f"t{index}",
                "level": 1,
                "domain": "countdown",
                "answer": answer,
                "responses": patterns[index % 5],
            }
        )
    source = tmp_path / "pilot.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    evaluate_file(source, tmp_path / "pilot.json")
    return tmp_path / "pilot.json"


def test_calibration_on_a_made_pilot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    receipt = _pilot(tmp_path)
    result = calibrate(receipt, seed=3)
    (cell,) = result["cells"]
    assert (cell["tasks"], cell["easy"], cell["medium"], cell["hard"], cell["non_discriminating"]) == (
        20,
        4,
        8,
        8,
        8,
    )
    flagged = {t["id"] for t in result["tasks"] if not t["discriminating"]}
    assert flagged == {f"t{i}" for i in range(20) if i % 5 in (0, 3)}
    selection = result["selection"]
    assert not set(selection["dev"]) & set(selection["test"])
    assert set(selection["dev"]) | set(selection["test"]) == {f"t{i}" for i in range(20)} - flagged
    assert calibrate(receipt, seed=3)["selection"] == selection  # recorded seed → same split
    assert calibrate(receipt, seed=4)["selection"] != selection
    assert main(["calibrate", str(receipt), "--seed", "3", "--output", str(tmp_path / "cal.json")]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "1 countdown 4 20 4 8 8 8 0.5"
    assert json.loads((tmp_path / "cal.json").read_text())["selection"] == selection


def test_release_is_deterministic_disjoint_and_graded(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    configs = "level1_countdown,level2_graph_coloring,level3_python_factors,level4_pantry_plan"
    sizes = {"eval": 12, "dev": 4, "train": 6}
    first = build_release(tmp_path / "a", seed=9, configs=configs, rows=sizes)
    second = build_release(tmp_path / "b", seed=9, configs=configs, rows=sizes)
    assert first["registry_sha256"] == second["registry_sha256"]
    for path in sorted((tmp_path / "a").rglob("*.parquet")):
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(twin.read_bytes()).digest()
    with pytest.raises(InputError, match="already exists"):
        build_release(tmp_path / "a", seed=9, configs=configs)
    registry = json.loads((tmp_path / "a" / "registry.json").read_text())
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["files"]["registry.json"]["sha256"] == first["registry_sha256"]
    by_config: dict[str, set[str]] = {}
    for record in registry["splits"]:
        table = pq.read_table(tmp_path / "a" / record["data_file"]).to_pylist()
        assert len(table) == record["rows"] == sizes[record["split"]]
        problems = {row["problem"] for row in table}
        assert not problems & by_config.get(record["config_name"], set())  # disjoint across splits
        by_config.setdefault(record["config_name"], set()).update(problems)
        level, domain = record["level"], record["domain"]
        found = plugin(domain)
        assert found.witnesses is not None
        for row in table[:3]:
            answer = json.loads(row["answer"])
            for text in found.witnesses(level, answer)[:2]:
                assert grade_in_process(level, domain, row, text)["status"] == "correct"
        if level == 4:
            assert record["level_admitted"] is False
    assert (tmp_path / "a" / "cards" / "level1_countdown.json").is_file()


def test_generate_rows_counts() -> None:
    rows: dict[str, Any] = generate_rows("level1_graph_coloring", 1, {"eval": 5, "dev": 2, "train": 3})
    assert [len(rows[s]) for s in ("eval", "dev", "train")] == [5, 2, 3]
    assert rows == generate_rows("level1_graph_coloring", 1, {"eval": 5, "dev": 2, "train": 3})
    with pytest.raises(InputError, match="unknown configuration"):
        generate_rows("level9_countdown", 1, {"eval": 1})


def test_bundled_release_is_reproducible_and_self_described(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyarrow")
    from modebench.dataset_cache import load_registry

    bundled = {r["config_name"]: r for r in load_registry("bundled").records}
    assert len(bundled) == 25 and all(r["rows"] >= 32 and r["split"] == "eval" for r in bundled.values())
    manifest = json.loads(
        (Path(load_registry("bundled").local_root or ".").parent / "manifest.json").read_text()
    )
    seed = manifest["seed"]
    configs = "level1_countdown,level3_mathir,level5_pantry_plan"
    rebuilt = build_release(tmp_path / "again", seed=seed, configs=configs, rows={"eval": 32})
    assert rebuilt["rows"] == 96
    for record in json.loads((tmp_path / "again" / "registry.json").read_text())["splits"]:
        assert record["parquet_sha256"] == bundled[record["config_name"]]["parquet_sha256"]
    assert main(["datasets", "card", "--registry", "bundled", "--config", "level1_countdown"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["authors"] == ["modebench contributors"] and "never-published" in card["motivation"]
    assert card["task"].startswith("Exact integer arithmetic")
