"""The verified cache against a real HTTP server on 127.0.0.1 (``datasets.md`` §4)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from tests.data.conftest import Server, cache_files, publish, registry_bytes, split_record

from modebench import cli, dataset_cache


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # parser.error
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def fetch_args(url: str, config: str, cache: Path, *extra: str) -> list[str]:
    return ["datasets", "fetch", "--config", config, "--registry", url, "--cache-dir", str(cache), *extra]


def test_verified_fetch_installs_file_and_registry_manifest(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    cache = tmp_path / "cache"
    code, out, err = run(capsys, *fetch_args(pub.registry_url, pub.config, cache))
    assert code == 0, err
    summary = json.loads(out)
    partition = hashlib.sha256(pub.raw).hexdigest()
    root = cache.resolve() / partition / "data"
    assert summary == {"data_root": str(root), "config": pub.config, "split": "eval", "verified": True}
    assert (root / "manifest.json").read_bytes() == pub.raw
    assert (root.parent / pub.record["data_file"]).read_bytes() == pub.data
    assert not [path for path in cache_files(cache) if path.name.startswith(".")]  # no temporary file left


def test_each_registry_gets_its_own_partition(server: Server, tmp_path: Path) -> None:
    first = publish(server, prefix="one")
    second = publish(server, prefix="two", count=2)
    a = dataset_cache.fetch(first.config, cache_dir=tmp_path / "c", registry=first.registry_url)
    b = dataset_cache.fetch(second.config, cache_dir=tmp_path / "c", registry=second.registry_url)
    assert a != b and a.parent.parent == b.parent.parent


def test_cache_reuse_is_reverified_and_works_offline(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    cache = tmp_path / "cache"
    assert run(capsys, *fetch_args(pub.registry_url, pub.config, cache))[0] == 0
    data_requests = [path for path in server.requests if path.endswith(".parquet")]
    assert len(data_requests) == 1
    assert run(capsys, *fetch_args(pub.registry_url, pub.config, cache))[0] == 0
    assert len([path for path in server.requests if path.endswith(".parquet")]) == 1  # reused
    # offline reuse needs no server at all when the registry is a local file
    local = tmp_path / "registry.json"
    local.write_bytes(pub.raw)
    root = dataset_cache.fetch(pub.config, cache_dir=cache, offline=True, registry=local)
    assert root == cache.resolve() / hashlib.sha256(pub.raw).hexdigest() / "data"


def test_local_registry_path_resolves_data_beside_it(tmp_path: Path) -> None:
    from tests.data.conftest import countdown_rows, parquet_bytes

    data = parquet_bytes(countdown_rows(2))
    record = split_record("level1_local", "eval", data, 2)
    (tmp_path / "pub" / Path(record["data_file"]).parent).mkdir(parents=True)
    (tmp_path / "pub" / record["data_file"]).write_bytes(data)
    (tmp_path / "pub" / "registry.json").write_bytes(registry_bytes([record]))
    root = dataset_cache.fetch(
        "level1_local", cache_dir=tmp_path / "c", registry=str(tmp_path / "pub" / "registry.json")
    )
    assert (root.parent / record["data_file"]).read_bytes() == data


@pytest.mark.parametrize(
    ("serve", "mode", "message"),
    [
        (
            b"not the parquet file at all",
            "ok",
            "download hash mismatch: level1_toy_countdown/eval; cache not modified",
        ),
        (None, "truncate", "download hash mismatch: level1_toy_countdown/eval; cache not modified"),
        (None, "short", "dataset download failed: "),
        (None, "missing", "dataset download failed: HTTP Error 404"),
    ],
    ids=["corrupt-bytes", "wrong-size", "short-body", "not-found"],
)
def test_bad_download_leaves_no_cache_entry(
    server: Server, tmp_path: Path, capsys, serve, mode, message
) -> None:
    pub = publish(server)
    target = "/rel/" + pub.record["data_file"]
    if mode == "truncate":
        server.routes[target].body = pub.data[:-7]
    elif mode == "missing":
        del server.routes[target]
    elif serve is not None:
        server.routes[target].body = serve
    else:
        server.routes[target].mode = mode
    cache = tmp_path / "cache"
    code, out, err = run(capsys, *fetch_args(pub.registry_url, pub.config, cache))
    assert code == 2 and out == ""
    assert message in err
    assert "Traceback" not in err
    assert cache_files(cache) == []


@pytest.mark.parametrize("mode", ["ok", "no_length"])
def test_oversize_download_is_refused(server: Server, tmp_path: Path, capsys, monkeypatch, mode) -> None:
    pub = publish(server, mode=mode)
    monkeypatch.setattr(dataset_cache, "MAX_DOWNLOAD_BYTES", len(pub.data) - 1)
    code, _, err = run(capsys, *fetch_args(pub.registry_url, pub.config, tmp_path / "cache"))
    assert code == 2 and "dataset download exceeds byte limit" in err
    assert cache_files(tmp_path / "cache") == []


@pytest.mark.parametrize("mode", ["stall_headers", "stall_body", "trickle"])
def test_stalled_server_hits_the_overall_deadline(
    server: Server, tmp_path: Path, capsys, monkeypatch, mode
) -> None:
    pub = publish(server, mode=mode)
    monkeypatch.setattr(dataset_cache, "DOWNLOAD_TIMEOUT_SECONDS", 1)
    started = time.monotonic()
    code, _, err = run(capsys, *fetch_args(pub.registry_url, pub.config, tmp_path / "cache"))
    elapsed = time.monotonic() - started
    assert code == 2
    assert "deadline exceeded" in err
    assert elapsed < 6.0, elapsed  # deadline 1 s; the stalled server gives up only after 8 s
    assert cache_files(tmp_path / "cache") == []


def test_offline_miss(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    local = tmp_path / "registry.json"
    local.write_bytes(pub.raw)
    code, _, err = run(capsys, *fetch_args(str(local), pub.config, tmp_path / "cache", "--offline"))
    assert code == 2
    assert f"dataset is not cached: {pub.config}/eval; run datasets fetch without --offline" in err
    assert cache_files(tmp_path / "cache") == []
    code, _, err = run(capsys, *fetch_args(pub.registry_url, pub.config, tmp_path / "cache", "--offline"))
    assert (
        code == 2
        and f"registry is not cached: {pub.registry_url}; run datasets fetch without --offline" in err
    )
    assert server.requests == []
    assert not [path for path in server.requests if path.endswith(".parquet")]


def test_packaged_registry_offline_miss_names_the_split(tmp_path: Path, capsys) -> None:
    code, _, err = run(
        capsys,
        "datasets",
        "fetch",
        "--config",
        "level1_countdown",
        "--cache-dir",
        str(tmp_path / "c"),
        "--offline",
    )
    assert code == 2
    assert "dataset is not cached: level1_countdown/eval; run datasets fetch without --offline" in err


@pytest.mark.parametrize(
    "data_file",
    [
        "../../escape.parquet",
        "/tmp/escape.parquet",
        "data/../../escape.parquet",
        "data/./x.parquet",
        "data\\..\\x",
        "elsewhere/x.parquet",
        "data",
    ],
)
def test_registry_paths_cannot_escape_the_cache(
    server: Server, tmp_path: Path, capsys, data_file: str
) -> None:
    pub = publish(server)
    record = dict(pub.record, data_file=data_file)
    url = server.add("/evil/registry.json", registry_bytes([record]))
    code, _, err = run(capsys, *fetch_args(url, pub.config, tmp_path / "cache"))
    assert code == 2
    assert "dataset file must be inside the data directory" in err
    assert cache_files(tmp_path / "cache") == []
    assert not (tmp_path / "escape.parquet").exists()
    assert not [path for path in server.requests if path.endswith(".parquet")]


def test_corrupt_cache_entry_is_reported_with_its_path(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    cache = tmp_path / "cache"
    root = dataset_cache.fetch(pub.config, cache_dir=cache, registry=pub.registry_url)
    entry = root.parent / pub.record["data_file"]
    entry.write_bytes(b"tampered")
    for extra in ((), ("--offline",)):
        code, _, err = run(capsys, *fetch_args(pub.registry_url, pub.config, cache, *extra))
        assert code == 2
        assert f"cached dataset hash mismatch: {entry}; remove this file and fetch again" in err
        assert entry.read_bytes() == b"tampered"  # never silently replaced
    entry.unlink()
    assert run(capsys, *fetch_args(pub.registry_url, pub.config, cache))[0] == 0
    assert entry.read_bytes() == pub.data


def test_unknown_selection(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    code, _, err = run(capsys, *fetch_args(pub.registry_url, "level9_nothing", tmp_path / "cache"))
    assert code == 2 and "unknown dataset selection: level9_nothing/eval; use datasets list" in err
    code, _, err = run(capsys, "datasets", "list", "--config", "nope")
    assert code == 2 and "unknown dataset selection: nope/*; use datasets list" in err


def test_urlopen_is_looked_up_at_call_time(server: Server, tmp_path: Path, monkeypatch) -> None:
    pub = publish(server)
    registry = tmp_path / "registry.json"
    registry.write_bytes(pub.raw)
    calls = []

    class Fake:
        def __init__(self, payload: bytes) -> None:
            self.payload = payload

        def __enter__(self) -> Fake:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def read1(self, size: int) -> bytes:
            chunk, self.payload = self.payload[:size], self.payload[size:]
            return chunk

    def fake_urlopen(url: str, timeout: float) -> Fake:
        calls.append((url, timeout))
        return Fake(pub.data)

    monkeypatch.setattr(dataset_cache, "urlopen", fake_urlopen)
    root = dataset_cache.fetch(pub.config, cache_dir=tmp_path / "c", registry=registry)
    assert calls == [(registry.parent.as_uri() + "/" + pub.record["data_file"], 30)]
    assert (root.parent / pub.record["data_file"]).read_bytes() == pub.data


def test_invalid_registries_are_rejected(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    bad = [
        b"[]",
        b'{"schema": "other", "splits": []}',
        registry_bytes([dict(pub.record, rows=0)]),
        registry_bytes([dict(pub.record, parquet_sha256="ABC")]),
        registry_bytes([pub.record, pub.record]),
        b"{not json",
    ]
    for index, raw in enumerate(bad):
        url = server.add(f"/bad{index}/registry.json", raw)
        code, _, err = run(capsys, *fetch_args(url, pub.config, tmp_path / "cache"))
        assert code == 2 and "modebench: error: " in err, raw
    assert cache_files(tmp_path / "cache") == []
    code, _, err = run(
        capsys, *fetch_args(server.url + "nowhere/registry.json", pub.config, tmp_path / "cache")
    )
    assert code == 2 and "registry download failed: HTTP Error 404" in err


def test_concurrent_fetches_share_one_verified_entry(server: Server, tmp_path: Path) -> None:
    import threading

    pub = publish(server)
    registry = dataset_cache.load_registry(pub.registry_url)
    roots: list[Path] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            roots.append(dataset_cache.fetch(pub.config, cache_dir=tmp_path / "c", registry=registry))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not errors and len(set(roots)) == 1 and len(roots) == 4
    files = cache_files(tmp_path / "c")
    data_files = [path for path in files if path.parent.name != "registries"]  # remembered registry
    assert sorted(path.name for path in data_files) == ["eval.parquet", "manifest.json"]
    assert not [path for path in files if path.name.startswith(".")]  # no temporary file left


def test_data_files_resolve_against_the_registry_directory() -> None:
    from modebench import registries

    raw = registry_bytes([split_record("level1_x", "eval", b"x", 1)])
    parsed = registries.parse(raw, "https://host/rel/registry.json", "https://host/rel/")
    assert parsed.url(parsed.records[0]) == "https://host/rel/data/level1/level1_x/eval.parquet"
    (record,) = dataset_cache.discover("level1_countdown", "eval")
    assert (
        registries.packaged()
        .url(record)
        .endswith("/94c45d1f66d3eb181fac2225dc04d62e08568b8e/data/level1/countdown/eval.parquet")
    )


def test_temporary_files_of_killed_fetches_are_swept(server: Server, tmp_path: Path, capsys) -> None:
    """Hardening item 10: a download killed mid-way leaves a temp file; the next fetch removes it."""
    import os

    pub = publish(server)
    cache = tmp_path / "cache"
    assert run(capsys, *fetch_args(pub.registry_url, pub.config, cache))[0] == 0
    partition = cache.resolve() / hashlib.sha256(pub.raw).hexdigest()
    data_dir = (partition / pub.record["data_file"]).parent
    data_name = Path(pub.record["data_file"]).name
    stale = [data_dir / f".{data_name}-00112233aabb", partition / "data" / ".manifest.json-ffeeddccbbaa"]
    fresh = data_dir / f".{data_name}-0123456789ab"  # a fetch running right now: left alone
    old = time.time() - 3600
    for path in [*stale, fresh]:
        path.write_bytes(b"partial")
    for path in stale:
        os.utime(path, (old, old))
    assert run(capsys, *fetch_args(pub.registry_url, pub.config, cache))[0] == 0
    assert [path.exists() for path in stale] == [False, False] and fresh.exists()


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (TimeoutError("timed out"), "dataset download failed: timed out"),
        (
            ConnectionResetError(104, "Connection reset by peer"),
            "dataset download failed: [Errno 104] Connection reset by peer",
        ),
    ],
    ids=["server-timeout", "reset"],
)
def test_network_errors_are_0_4_0_s_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, message: str
) -> None:
    """A network failure of ``fetch`` is 0.4.0's ``InputError`` with 0.4.0's message; a timeout that
    is not our own overall deadline (a server's, or a replaced ``urlopen``'s) fails the download."""
    from modebench.validation import InputError

    def unreachable(url: str, timeout: float = 0) -> object:
        raise error

    monkeypatch.setattr(dataset_cache, "urlopen", unreachable)
    with pytest.raises(InputError) as caught:
        dataset_cache.fetch("level1_countdown", cache_dir=tmp_path / "c")
    assert type(caught.value) is InputError
    assert str(caught.value) == f"{message}; retry fetch or use a verified offline cache"
    assert caught.value.hint is not None and caught.value.hint.startswith("tried ")
