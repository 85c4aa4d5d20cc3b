"""The Hub as a data origin, end to end with the real ``huggingface_hub`` client and a loopback Hub."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.data.conftest import countdown_rows, parquet_bytes, registry_bytes, split_record
from tests.hub.conftest import COMMIT, HubServer, files_under

from modebench import cli, data, dataset_cache

CONFIG = "level1_toy_countdown"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def serve_split(hub: HubServer, *, served: bytes | None = None) -> tuple[dict[str, Any], bytes, bytes]:
    """Put a registry and its split in the repository; ``served`` replaces the split's bytes."""
    rows = countdown_rows(3)
    content = parquet_bytes(rows)
    record = split_record(CONFIG, "eval", content, 3)
    raw = registry_bytes([record])
    hub.files["registry.json"] = raw
    hub.files[record["data_file"]] = content if served is None else served
    return record, content, raw


def local_registry(tmp_path: Path, record: dict[str, Any], origin: str) -> Path:
    """A registry JSON kept locally whose data files live in the Hub repository."""
    document = {"origin": origin, "schema": "modebench-portable-data-v1", "splits": [record]}
    path = tmp_path / "trusted" / "registry.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="ascii")
    return path


def test_verified_fetch_from_the_hub_and_offline_reuse(
    hub: HubServer,
    homes: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record, content, raw = serve_split(hub)
    address = hub.address()
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", address)
    assert code == 0, err
    root = Path(json.loads(out)["data_root"])
    partition = homes["xdg"] / "modebench" / hashlib.sha256(raw).hexdigest()
    assert root == (partition / "data").resolve()
    assert (root / "manifest.json").read_bytes() == raw
    assert (root.parent / record["data_file"]).read_bytes() == content
    snapshot = homes["hf-home"] / "hub" / "datasets--acme--modebench-toy" / "snapshots" / COMMIT
    assert (snapshot / record["data_file"]).read_bytes() == content
    assert {method for method, _ in hub.requests} == {"HEAD", "GET"}
    assert all(f"/resolve/{COMMIT}/" in path for _, path in hub.requests)
    # The split is now usable as 0.4.0's Dataset, verified.
    assert data.load_split(root, CONFIG, "eval").to_list() == countdown_rows(3)

    # Offline reuse straight from the Hub cache: the modebench copy is gone, the server never asked.
    (root.parent / record["data_file"]).unlink()
    seen = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", address)
    assert code == 0, err
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert (root.parent / record["data_file"]).read_bytes() == content
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", address, "--offline")
    assert code == 0, err
    assert len(hub.requests) == seen
    # Nothing outside the two caches: HOME and the working directory stay empty.
    assert files_under(homes["home"]) == [] and files_under(homes["work"]) == []
    for path in files_under(homes["hf-home"]):
        assert path.relative_to(homes["hf-home"]).parts[0] == "hub"


def test_offline_without_a_cached_copy_is_refused(
    hub: HubServer,
    homes: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    serve_split(hub)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", hub.address())
    assert code == 2 and out == ""
    assert (
        err.strip().splitlines()[-1]
        == f"modebench: error: registry is not cached: {hub.address()}; run datasets fetch without --offline"
    )
    assert hub.requests == []


def test_wrong_hash_is_refused_and_nothing_is_kept(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, content, _ = serve_split(hub, served=parquet_bytes(countdown_rows(4)))
    registry = local_registry(tmp_path, record, hub.address())
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", str(registry))
    assert code == 2 and out == ""
    assert (
        err.strip().splitlines()[-1]
        == f"modebench: error: download hash mismatch: {CONFIG}/eval; cache not modified"
    )
    assert [method for method, _ in hub.requests] == ["HEAD", "HEAD", "GET"]  # checked, downloaded, refused
    storage = homes["hf-home"] / "hub" / "datasets--acme--modebench-toy"
    assert not list(storage.glob("blobs/*")) and not list(storage.glob("snapshots/**/*.parquet"))
    assert not [path for path in files_under(homes["xdg"]) if path.suffix == ".parquet"]
    assert files_under(homes["home"]) == []


def test_a_trusted_local_registry_fetches_its_files_from_the_hub(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path
) -> None:
    record, content, _ = serve_split(hub)
    del hub.files["registry.json"]  # only the data lives there
    registry = local_registry(tmp_path, record, hub.address())
    root = dataset_cache.fetch(CONFIG, registry=str(registry), cache_dir=tmp_path / "cache")
    assert (root.parent / record["data_file"]).read_bytes() == content
    # With an explicit cache directory the Hub cache lives inside it too.
    assert (tmp_path / "cache" / "hf-hub" / "datasets--acme--modebench-toy").is_dir()
    assert files_under(homes["hf-home"]) == [] and files_under(homes["home"]) == []


@pytest.mark.parametrize("revision", ["main", "v1.0", COMMIT[:12], COMMIT.upper()])
def test_a_moving_revision_is_refused_before_any_request(
    hub: HubServer, revision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_split(hub)
    address = f"hf://datasets/acme/modebench-toy@{revision}"
    code, out, err = run(capsys, "datasets", "list", "--registry", address)
    assert code == 2 and out == ""
    assert "must be pinned to a commit (40 hexadecimal digits)" in err and "Traceback" not in err
    assert hub.requests == []


def test_an_origin_that_is_not_a_pinned_hub_repository_is_refused(
    hub: HubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, _, _ = serve_split(hub)
    registry = local_registry(tmp_path, record, "hf://datasets/acme/modebench-toy@main")
    code, out, err = run(capsys, "datasets", "fetch", "--config", CONFIG, "--registry", str(registry))
    assert code == 2 and "must be pinned to a commit" in err and hub.requests == []


def test_a_stalled_hub_hits_the_deadline_and_leaves_nothing(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _, _ = serve_split(hub)
    hub.modes[record["data_file"]] = "stall_body"
    registry = local_registry(tmp_path, record, hub.address())
    monkeypatch.setattr(dataset_cache, "DOWNLOAD_TIMEOUT_SECONDS", 6)
    started = time.monotonic()
    with pytest.raises(Exception, match="^dataset download deadline exceeded$"):
        dataset_cache.fetch(CONFIG, registry=str(registry))
    elapsed = time.monotonic() - started
    assert 6 <= elapsed < 14, elapsed  # the stalled server itself gives up only after 15 s
    assert ("GET", f"/datasets/acme/modebench-toy/resolve/{COMMIT}/{record['data_file']}") in hub.requests
    storage = homes["hf-home"] / "hub" / "datasets--acme--modebench-toy"
    assert not list(storage.glob("blobs/*")) and not list(storage.glob("snapshots/**/*.parquet"))
    assert not [path for path in files_under(homes["xdg"]) if path.suffix == ".parquet"]


def test_the_byte_cap_applies_to_hub_downloads(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, content, _ = serve_split(hub)
    registry = local_registry(tmp_path, record, hub.address())
    monkeypatch.setattr(dataset_cache, "MAX_DOWNLOAD_BYTES", len(content) - 1)
    with pytest.raises(Exception, match="^dataset download exceeds byte limit$"):
        dataset_cache.fetch(CONFIG, registry=str(registry))
    assert [method for method, _ in hub.requests] == ["HEAD"]  # the declared size already refused it
    assert not list((homes["hf-home"] / "hub").rglob("blobs/*"))


def test_a_body_larger_than_declared_is_stopped_at_the_cap(
    hub: HubServer, homes: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, content, _ = serve_split(hub)
    hub.modes[record["data_file"]] = "understate"
    registry = local_registry(tmp_path, record, hub.address())
    monkeypatch.setattr(dataset_cache, "MAX_DOWNLOAD_BYTES", len(content) - 1)
    with pytest.raises(Exception, match="^dataset download exceeds byte limit$"):
        dataset_cache.fetch(CONFIG, registry=str(registry))
    assert [method for method, _ in hub.requests] == ["HEAD", "HEAD", "GET"]
    assert not list((homes["hf-home"] / "hub").rglob("blobs/*"))
    assert not list((homes["hf-home"] / "hub").rglob("*.parquet"))


def test_without_huggingface_hub_a_hub_registry_asks_for_the_extra(
    hub: HubServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_split(hub)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    code, out, err = run(capsys, "datasets", "list", "--registry", hub.address())
    assert code == 2 and out == "" and hub.requests == []
    assert err.strip().splitlines()[-1] == (
        "modebench: error: fetching from the Hugging Face Hub requires the 'data' extra: "
        "pip install -e '.[data]' in the modebench checkout"
    )
