"""A real HTTP server on 127.0.0.1 serving registries and Parquet splits built by the tests."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow", reason="the 'data' extra (pyarrow) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="the 'data' extra (pyarrow) is not installed")

from tests.samples import sample_row  # noqa: E402

STALL_SECONDS = 8.0  # a stalled handler gives up by itself even if a test never releases it


def countdown_rows(count: int, level: int = 1) -> list[dict[str, Any]]:
    """Rows in the reference schema (``answer`` is a JSON string), from the project's generator."""
    rows = []
    for seed in range(1, count + 1):
        row = sample_row("countdown", level, seed)
        rows.append(
            {
                "problem": row["problem"],
                "answer": json.dumps(row["answer"], sort_keys=True),
                "modebench_task": row["modebench_task"],
                "answer_mode_count": row["answer_mode_count"],
                "answer_mode_split": row["answer_mode_split"],
            }
        )
    return rows


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def split_record(
    config: str, split: str, data: bytes, rows: int, *, level: int = 1, **extra: Any
) -> dict[str, Any]:
    domain = "countdown"
    return {
        "config_name": config,
        "data_file": f"data/level{level}/{config}/{split}.parquet",
        "domain": domain,
        "level": level,
        "original_datasetdict_split": "multi_answer",
        "parquet_sha256": hashlib.sha256(data).hexdigest(),
        "rows": rows,
        "rows_sha256": hashlib.sha256(b"rows").hexdigest(),
        "source_column_order": [
            "problem",
            "answer",
            "modebench_task",
            "answer_mode_count",
            "answer_mode_split",
        ],
        "split": split,
        **extra,
    }


def registry_bytes(records: list[dict[str, Any]]) -> bytes:
    document = {"schema": "modebench-portable-data-v1", "splits": records}
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("ascii")


@dataclass
class Route:
    body: bytes
    mode: str = "ok"  # ok | stall_body | stall_headers | short | no_length | trickle


@dataclass
class Server:
    """Routes by path; records every requested path."""

    url: str = ""
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def add(self, path: str, body: bytes, mode: str = "ok") -> str:
        self.routes[path] = Route(body, mode)
        return self.url + path.lstrip("/")


def _handler(server: Server) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            server.requests.append(self.path)
            route = server.routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            if route.mode == "stall_headers":
                server.release.wait(STALL_SECONDS)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if route.mode == "short":
                self.send_header("Content-Length", str(len(route.body) + 100))
            elif route.mode != "no_length":
                self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            if route.mode == "stall_body":
                self.wfile.write(route.body[:10])
                self.wfile.flush()
                server.release.wait(STALL_SECONDS)
                return
            if route.mode == "trickle":
                for index in range(len(route.body)):
                    if server.release.wait(0.2):
                        return
                    self.wfile.write(route.body[index : index + 1])
                    self.wfile.flush()
                return
            self.wfile.write(route.body)
            self.close_connection = True

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test runs in its own directory with its own cache and no proxy."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@dataclass
class Published:
    """A registry with one served split."""

    registry_url: str
    config: str
    split: str
    rows: list[dict[str, Any]]
    data: bytes
    raw: bytes
    record: dict[str, Any]


def publish(
    server: Server,
    *,
    config: str = "level1_toy_countdown",
    split: str = "eval",
    count: int = 3,
    serve: bytes | None = None,
    mode: str = "ok",
    prefix: str = "rel",
    **extra: Any,
) -> Published:
    """Serve ``<prefix>/registry.json`` and its split; ``serve`` replaces the file bytes served."""
    rows = countdown_rows(count)
    data = parquet_bytes(rows)
    record = split_record(config, split, data, count, **extra)
    raw = registry_bytes([record])
    url = server.add(f"/{prefix}/registry.json", raw)
    server.add(f"/{prefix}/{record['data_file']}", data if serve is None else serve, mode)
    return Published(url, config, split, rows, data, raw, record)


def cache_files(base: Path) -> list[Path]:
    """Every file under a cache base (directories alone are not cache entries)."""
    return sorted(path for path in base.rglob("*") if path.is_file()) if base.exists() else []
