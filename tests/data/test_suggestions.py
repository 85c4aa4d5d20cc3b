"""Errors that help a newcomer on: an unknown configuration names the closest ones, a download that
cannot reach the packaged registry's origin names the URL tried and the bundled release."""

from __future__ import annotations

import socket
import urllib.error
from pathlib import Path
from typing import Any

import pytest
from tests.data.conftest import Server, cache_files, publish

from modebench import cli, dataset_cache
from modebench._datasets.suggest import closest_configs, unknown_hint
from modebench.registries import DATA_ORIGIN
from modebench.validation import InputError


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_card_of_a_mistyped_config_keeps_the_old_line_and_names_the_closest(capsys: Any) -> None:
    code, out, err = run(capsys, "datasets", "card", "--config", "level1_countdonw")
    assert code == 2 and out == ""
    first, second = err.splitlines()
    assert first == "modebench: error: unknown dataset configuration; use datasets list"
    assert second.startswith("  no configuration named 'level1_countdonw'; closest: level1_countdown")


def test_prepare_of_a_mistyped_config_names_the_closest(tmp_path: Path, capsys: Any) -> None:
    output = tmp_path / "requests.jsonl"
    argv = ["prepare", "--registry", "bundled", "--config", "levl2_mathir", "--output", str(output)]
    code, _, err = run(capsys, *argv)
    assert code == 2 and not output.exists()
    assert err.splitlines()[0] == (
        "modebench: error: unknown dataset selection: levl2_mathir/eval; use datasets list"
    )
    assert "closest: level2_mathir" in err.splitlines()[1]


def test_a_known_config_without_the_split_lists_its_splits(capsys: Any) -> None:
    code, _, err = run(capsys, "datasets", "list", "--config", "level1_countdown", "--split", "dev")
    assert code == 2
    assert err.splitlines()[1] == "  'level1_countdown' has the splits: eval, train"


def test_hint_helpers() -> None:
    records = [{"config_name": "level1_countdown", "split": "eval"}]
    assert closest_configs("level1_countdwn", ["level1_countdown", "zzz"]) == ["level1_countdown"]
    assert (
        unknown_hint("nothing_alike", "eval", records)
        == "\n  no configuration named 'nothing_alike' in this registry"
    )
    assert unknown_hint("level1_countdown", "eval", records) == ""
    assert unknown_hint(None, "eval", records) == ""


def _no_network(url: str, timeout: float = 30) -> Any:
    raise urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))


def test_packaged_registry_without_network_names_url_and_bundled(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset_cache, "urlopen", _no_network)
    output = tmp_path / "requests.jsonl"
    argv = [
        "prepare",
        "--config",
        "level1_countdown",
        "--cache-dir",
        str(tmp_path / "c"),
        "--output",
        str(output),
    ]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and not output.exists()
    lines = err.splitlines()
    assert lines[0].startswith("modebench: error: dataset download failed: ")
    assert lines[0].endswith("; retry fetch or use a verified offline cache")
    assert lines[1] == f"  tried {DATA_ORIGIN}data/level1/countdown/eval.parquet"
    assert lines[2].endswith("--registry bundled")
    assert cache_files(tmp_path / "c") == []
    # the library raises 0.4.0's InputError with 0.4.0's message, and says the rest in its hint
    with pytest.raises(InputError) as caught:
        dataset_cache.fetch("level1_countdown", cache_dir=tmp_path / "c")
    assert type(caught.value) is InputError
    assert str(caught.value) == lines[0].removeprefix("modebench: error: ")
    assert caught.value.hint is not None and caught.value.hint.endswith("use the registry 'bundled'")


def test_packaged_registry_offline_miss_suggests_bundled(tmp_path: Path, capsys: Any) -> None:
    argv = [
        "datasets",
        "fetch",
        "--config",
        "level1_countdown",
        "--cache-dir",
        str(tmp_path / "c"),
        "--offline",
    ]
    code, _, err = run(capsys, *argv)
    assert code == 2
    lines = err.splitlines()
    assert lines[0].endswith(
        "dataset is not cached: level1_countdown/eval; run datasets fetch without --offline"
    )
    assert lines[1].endswith("--registry bundled")


def test_another_registry_names_the_url_but_not_the_bundled_release(
    server: Server, tmp_path: Path, capsys: Any
) -> None:
    pub = publish(server)
    del server.routes["/rel/" + pub.record["data_file"]]
    argv = ["datasets", "fetch", "--config", pub.config, "--registry", pub.registry_url]
    code, _, err = run(capsys, *argv, "--cache-dir", str(tmp_path / "c"))
    assert code == 2
    lines = err.splitlines()
    assert "dataset download failed: HTTP Error 404" in lines[0]
    assert lines[1] == f"  tried {server.url}rel/{pub.record['data_file']}"
    assert len(lines) == 2
