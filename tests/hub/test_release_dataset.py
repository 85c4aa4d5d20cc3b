"""Release directories are Hugging Face datasets, and ``load_split`` is 0.4.0's ``datasets.Dataset``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.hub.conftest import COMMIT, REPO, HubServer, files_under

from modebench import cli, data, dataset_cache
from modebench.api import export_dataset
from modebench.cards import cards
from modebench.hub import refresh_card
from modebench.hub.card import dataset_card
from modebench.registries import packaged
from modebench.suite.build import build_release
from modebench.validation import InputError

datasets = pytest.importorskip("datasets", reason="the 'data' extra (datasets) is not installed")
yaml = pytest.importorskip("yaml")

BUNDLED = dataset_cache.bundled_registry_path().parent


def header(directory: Path) -> dict[str, Any]:
    text = (directory / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    loaded: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    return loaded


def assert_loads_like_load_split(directory: Path, cache: Path) -> int:
    """``datasets.load_dataset(directory, config)`` equals ``load_split`` for every config and split."""
    registry = json.loads((directory / "registry.json").read_text())["splits"]
    expected = {(r["config_name"], r["split"]) for r in registry}
    configs = header(directory)["configs"]
    assert {(c["config_name"], f["split"]) for c in configs for f in c["data_files"]} == expected
    for config in sorted({name for name, _ in expected}):
        loaded = datasets.load_dataset(str(directory), config, cache_dir=str(cache))
        assert set(loaded) == {split for name, split in expected if name == config}
        for split, dataset in loaded.items():
            assert dataset.to_list() == data.load_split(directory / "data", config, split).to_list()
    return len(expected)


def test_a_fresh_build_loads_with_datasets_load_dataset(tmp_path: Path) -> None:
    configs = "level1_countdown,level2_mathir,level4_pantry_plan"
    build_release(tmp_path / "r", seed=11, configs=configs, rows={"eval": 4, "dev": 2, "train": 3})
    release = tmp_path / "r"
    manifest = json.loads((release / "manifest.json").read_text())
    assert "README.md" in manifest["files"]
    assert header(release)["license"] == "cc-by-4.0"
    assert assert_loads_like_load_split(release, tmp_path / "hf-datasets") == 9


def test_the_bundled_release_loads_with_datasets_load_dataset(tmp_path: Path) -> None:
    assert assert_loads_like_load_split(BUNDLED, tmp_path / "hf-datasets") == 25


def test_the_bundled_card_is_current_and_data_files_untouched(tmp_path: Path) -> None:
    copy = tmp_path / "bundled"
    shutil.copytree(BUNDLED, copy)
    refresh_card(copy)
    for path in files_under(BUNDLED):
        assert (copy / path.relative_to(BUNDLED)).read_bytes() == path.read_bytes(), path
    manifest = json.loads((BUNDLED / "manifest.json").read_text())
    listed = {name: entry["sha256"] for name, entry in manifest["files"].items()}
    on_disk = {p.relative_to(BUNDLED).as_posix() for p in files_under(BUNDLED)} - {"manifest.json"}
    assert set(listed) == on_disk
    registry = dataset_cache.load_registry("bundled")
    for record in registry.records:
        assert listed[record["data_file"]] == record["parquet_sha256"]


def test_the_card_of_the_published_registry_names_every_configuration() -> None:
    records = list(packaged().records)
    sheets = {card["config"]: card for card in cards()["cards"]}
    text = dataset_card(records, sheets, title="ModeBench 0.4.0", summary="Published splits.")
    configs = yaml.safe_load(text.split("---\n")[1])["configs"]
    assert len(configs) == 26 and sum(len(c["data_files"]) for c in configs) == 72
    diagnostic = next(c for c in configs if c["config_name"] == "level1_graph_coloring_unique_answer")
    assert diagnostic["data_files"] == [
        {"split": "eval", "path": "data/level1/graph_coloring/unique_answer/eval.parquet"}
    ]
    assert "Level 4 as a whole is not admitted" in text


SCRIPT_040 = """
import sys
from modebench.data import load_split

ds = load_split(sys.argv[1], "level2_mathir", "eval")
print(type(ds).__name__, len(ds), ds.column_names)
df = ds.to_pandas()
print(df.shape, list(df.columns)[:3])
print(ds["problem"][0][:50], ds[3]["answer"][:40])
print(sorted(set(ds["mathir_family"]))[:3])
print(ds.filter(lambda r: r["answer_mode_count"] > 1).num_rows)
print(ds.map(lambda r: {"n": len(r["problem"])})["n"][:2])
"""


def test_a_script_written_against_040_load_split_runs_unchanged(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT_040)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, str(script), str(BUNDLED / "data")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = data.load_rows(BUNDLED / "data", "level2_mathir", "eval")
    columns = list(rows[0])
    expected = [
        f"Dataset {len(rows)} {columns}",
        f"({len(rows)}, {len(columns)}) {columns[:3]}",
        f"{rows[0]['problem'][:50]} {rows[3]['answer'][:40]}",
        str(sorted({row["mathir_family"] for row in rows})[:3]),
        str(sum(row["answer_mode_count"] > 1 for row in rows)),
        str([len(row["problem"]) for row in rows[:2]]),
    ]
    assert done.stdout.splitlines() == expected
    assert files_under(tmp_path / "hf") == []  # verified bytes go to datasets in memory: no cache


def test_without_datasets_load_split_asks_for_the_extra_and_load_rows_still_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(InputError, match=r"^dataset loading requires the 'data' extra"):
        data.load_split(BUNDLED / "data", "level1_countdown", "eval")
    rows = data.load_rows(BUNDLED / "data", "level1_countdown", "eval")
    assert len(rows) == 32 and isinstance(rows[0], dict)
    task = next(data.iter_tasks("level1_countdown", registry="bundled"))
    assert task.problem == rows[0]["problem"]


def test_load_split_verifies_before_loading(tmp_path: Path) -> None:
    copy = tmp_path / "bundled"
    shutil.copytree(BUNDLED, copy)
    target = copy / "data" / "level1" / "countdown" / "eval.parquet"
    target.write_bytes(target.read_bytes()[:-1] + b"\0")
    with pytest.raises(InputError, match="^dataset hash mismatch: level1_countdown/eval$"):
        data.load_split(copy / "data", "level1_countdown", "eval")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_export_writes_a_hub_dataset_that_loads_locally_and_from_the_hub(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "export"
    code, out, err = run(capsys, "datasets", "export", str(out_dir), "--registry", "bundled")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["configs"] == 25 and summary["splits"] == 25 and summary["rows"] == 800
    assert (out_dir / "registry.json").read_bytes() == dataset_cache.registry_bytes("bundled")
    assert (out_dir / "README.md").read_bytes() == (BUNDLED / "README.md").read_bytes()
    loaded = datasets.load_dataset(str(out_dir), "level2_mathir", cache_dir=str(tmp_path / "hf-datasets"))
    assert loaded["eval"].to_list() == data.load_split(BUNDLED / "data", "level2_mathir", "eval").to_list()

    # The same directory served as a Hub repository at a commit is a registry by its address.
    for path in files_under(out_dir):
        hub.files[path.relative_to(out_dir).as_posix()] = path.read_bytes()
    tasks = list(data.iter_tasks("level3_countdown", registry=hub.address()))
    assert [t.problem for t in tasks] == [
        row["problem"] for row in data.load_rows(BUNDLED / "data", "level3_countdown", "eval")
    ]

    code, out, err = run(capsys, "datasets", "export", str(out_dir), "--registry", "bundled")
    assert code == 2 and out == "" and err.strip().endswith(f"export destination already exists: {out_dir}")
    code, out, err = run(capsys, "datasets", "export", str(tmp_path / "x"), "--registry", hub.address("main"))
    assert code == 2 and "must be pinned to a commit" in err and not (tmp_path / "x").exists()


LOAD_BY_NAME = """
import json, sys
import datasets
datasets.disable_progress_bars()
loaded = datasets.load_dataset(sys.argv[1], sys.argv[2], revision=sys.argv[3], cache_dir=sys.argv[4])
print(json.dumps({split: dataset.to_list() for split, dataset in loaded.items()}))
"""


def test_an_export_pushed_to_the_hub_loads_by_repository_name(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path
) -> None:
    out_dir = tmp_path / "export"
    export_dataset(out_dir, registry="bundled")
    for path in files_under(out_dir):
        hub.files[path.relative_to(out_dir).as_posix()] = path.read_bytes()
    script = tmp_path / "load.py"
    script.write_text(LOAD_BY_NAME)
    # A fresh interpreter: huggingface_hub reads HF_ENDPOINT when it is first imported.
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(homes["home"]),
        "HF_HOME": str(homes["hf-home"]),
        "HF_ENDPOINT": hub.url,
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    for config in ("level2_mathir", "level5_pantry_plan"):
        done = subprocess.run(
            [sys.executable, str(script), REPO, config, COMMIT, str(tmp_path / "hf-datasets")],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        loaded = json.loads(done.stdout.splitlines()[-1])
        assert loaded == {"eval": data.load_split(BUNDLED / "data", config, "eval").to_list()}
    assert any("/api/datasets/" in path for _, path in hub.requests)
