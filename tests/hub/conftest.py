"""A minimal Hugging Face Hub on 127.0.0.1: one dataset repository at one commit.

It answers what ``huggingface_hub.hf_hub_download`` asks for a pinned commit —
``HEAD``/``GET /datasets/{repo}/resolve/{revision}/{filename}`` with ``X-Repo-Commit``, ``ETag`` and
``Content-Length`` — plus the repository info and tree listing ``datasets.load_dataset`` reads, so
the tests run the real clients (``HF_ENDPOINT`` points here). Each test gets
its own ``HOME``, ``HF_HOME`` and ``XDG_CACHE_HOME`` under ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("huggingface_hub", reason="the 'data' extra (huggingface-hub) is not installed")
pytest.importorskip("pyarrow", reason="the 'data' extra (pyarrow) is not installed")

STALL_SECONDS = 15.0  # a stalled handler gives up by itself even if a test never releases it
COMMIT = "3f1c2b9a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"
REPO = "acme/modebench-toy"


@dataclass
class HubServer:
    url: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, str] = field(
        default_factory=dict
    )  # filename -> ok | stall_body | stall_headers | understate (HEAD claims 10 bytes)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    release: threading.Event = field(default_factory=threading.Event)

    def address(self, commit: str = COMMIT) -> str:
        return f"hf://datasets/{REPO}@{commit}"


def _handler(hub: HubServer) -> type[http.server.BaseHTTPRequestHandler]:
    prefix = f"/datasets/{REPO}/resolve/"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
            pass

        def _json(self, document: Any, body: bool) -> None:
            content = json.dumps(document).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def _api(self, path: str, query: str, body: bool) -> bool:
            """``/api/datasets/{repo}/revision/{commit}`` and ``/tree/{commit}/{dir}``: what
            ``datasets.load_dataset`` asks before it downloads through ``resolve``."""
            api = f"/api/datasets/{REPO}"
            if path == f"{api}/revision/{COMMIT}":
                siblings = [{"rfilename": name} for name in sorted(hub.files)]
                self._json({"id": REPO, "sha": COMMIT, "private": False, "siblings": siblings}, body)
                return True
            if not path.startswith(f"{api}/tree/{COMMIT}"):
                return False
            folder = path[len(f"{api}/tree/{COMMIT}") :].strip("/")
            recursive = urllib.parse.parse_qs(query).get("recursive", ["false"])[0] in ("true", "True", "1")
            entries: dict[str, dict[str, Any]] = {}
            for name in sorted(hub.files):
                if folder and not name.startswith(folder + "/"):
                    continue
                parts = name[len(folder) + 1 :].split("/") if folder else name.split("/")
                base = f"{folder}/" if folder else ""
                for depth in range(1, len(parts) if recursive else min(len(parts), 2)):
                    directory = base + "/".join(parts[:depth])
                    entries[directory] = {"type": "directory", "oid": "0" * 40, "size": 0, "path": directory}
                if recursive or len(parts) == 1:
                    content = hub.files[name]
                    oid = hashlib.sha1(content).hexdigest()
                    entries[name] = {"type": "file", "oid": oid, "size": len(content), "path": name}
            self._json(list(entries.values()), body)
            return True

        def _answer(self, body: bool) -> None:
            hub.requests.append((self.command, self.path))
            split = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(split.path)
            if path.startswith("/api/") and self._api(path, split.query, body):
                return
            revision, _, filename = (
                path[len(prefix) :].partition("/") if path.startswith(prefix) else ("", "", "")
            )
            content = hub.files.get(filename)
            if revision != COMMIT or content is None:
                self.send_response(404)
                self.send_header(
                    "X-Error-Code", "EntryNotFound" if revision == COMMIT else "RevisionNotFound"
                )
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            mode = hub.modes.get(filename, "ok")
            if mode == "stall_headers" and body:
                hub.release.wait(STALL_SECONDS)
                return
            etag = hashlib.sha256(content).hexdigest()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{etag}"')
            declared = 10 if mode == "understate" and not body else len(content)
            self.send_header("Content-Length", str(declared))
            self.end_headers()
            if not body:
                return
            if mode == "stall_body":
                self.wfile.write(content[:10])
                self.wfile.flush()
                hub.release.wait(STALL_SECONDS)
                self.close_connection = True
                return
            self.wfile.write(content)

        def do_HEAD(self) -> None:  # noqa: N802 - http.server API
            self._answer(body=False)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            self._answer(body=True)

    return Handler


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    state = HubServer()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", state.url)
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fresh HOME, HF_HOME and XDG cache; no proxy, token or offline switch from the caller."""
    for name in (
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "HF_HUB_OFFLINE",
        "HF_HUB_CACHE",
        "HF_TOKEN",
        "HF_DATASETS_OFFLINE",
    ):
        monkeypatch.delenv(name, raising=False)
    places = {name: tmp_path / name for name in ("home", "hf-home", "xdg", "work")}
    for place in places.values():
        place.mkdir()
    monkeypatch.setenv("HOME", str(places["home"]))
    monkeypatch.setenv("HF_HOME", str(places["hf-home"]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(places["xdg"]))
    monkeypatch.chdir(places["work"])
    return places


def files_under(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file() or path.is_symlink())
