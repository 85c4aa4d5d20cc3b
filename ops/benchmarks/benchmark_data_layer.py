"""Data-layer timings on the bundled release: light rows, datasets.Dataset, and Hub fetches.

* ``load_rows`` (pyarrow only) and ``load_split`` (verified bytes handed to ``datasets`` in memory)
  over every bundled split, against ``datasets.Dataset.from_parquet`` on the same files (the
  0.4.0 way, which also builds an Arrow cache);
* fetching every bundled split from a loopback Hub (``HF_ENDPOINT``) with the real client: cold
  (one child download each) and warm (Hub cache, no requests).

    python ops/benchmarks/benchmark_data_layer.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _serve(files: dict[str, bytes]) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _answer(self, body: bool) -> None:
            name = self.path.split(f"/resolve/{COMMIT}/", 1)[-1]
            content = files.get(name)
            if content is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(content).hexdigest()}"')
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(True)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def _timed(action: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HF_HOME"] = str(Path(scratch) / "hf")
        os.environ["XDG_CACHE_HOME"] = str(Path(scratch) / "xdg")
        import datasets

        from modebench import data, dataset_cache

        release = dataset_cache.bundled_registry_path().parent
        records = dataset_cache.load_registry("bundled").select()
        root = release / "data"
        pairs = [(r["config_name"], r["split"]) for r in records]
        result: dict[str, Any] = {"splits": len(pairs), "rows": sum(r["rows"] for r in records)}
        result["load_rows_seconds"] = _timed(
            lambda: [data.load_rows(root, c, s) for c, s in pairs], args.repeat
        )
        result["load_split_seconds"] = _timed(
            lambda: [data.load_split(root, c, s) for c, s in pairs], args.repeat
        )
        cache = Path(scratch) / "arrow"
        datasets.disable_progress_bars()
        result["dataset_from_parquet_seconds"] = _timed(
            lambda: [
                datasets.Dataset.from_parquet(str(release / r["data_file"]), cache_dir=str(cache))
                for r in records
            ],
            args.repeat,
        )

        files = {p.relative_to(release).as_posix(): p.read_bytes() for p in release.rglob("*") if p.is_file()}
        httpd, url = _serve(files)
        os.environ["HF_ENDPOINT"] = url
        address = f"hf://datasets/bench/modebench@{COMMIT}"
        try:
            started = time.perf_counter()
            registry = dataset_cache.load_registry(address)
            for config, split in pairs:
                dataset_cache.fetch(config, split, registry=registry)
            result["hub_cold_fetch_seconds"] = time.perf_counter() - started
            result["hub_cold_fetch_per_file_seconds"] = result["hub_cold_fetch_seconds"] / (len(pairs) + 1)
            partition = dataset_cache.cache_data_root(registry=registry).parent
            for config, split in pairs:
                (partition / registry.select(config, split)[0]["data_file"]).unlink()
            started = time.perf_counter()
            registry = dataset_cache.load_registry(address, offline=True)
            for config, split in pairs:
                dataset_cache.fetch(config, split, registry=registry, offline=True)
            result["hub_warm_offline_fetch_seconds"] = time.perf_counter() - started
        finally:
            httpd.shutdown()
            httpd.server_close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
