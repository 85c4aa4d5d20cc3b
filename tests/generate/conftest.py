"""A loopback OpenAI-compatible server per test (``openai_server.py``), stopped at teardown."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Endpoint:
    base_url: str
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[Callable[..., Endpoint]]:
    processes: list[subprocess.Popen[str]] = []

    def start(**config: Any) -> Endpoint:
        log = tmp_path / f"server-{len(processes)}.jsonl"
        config = {"model": "test-model", "log": str(log), **config}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.generate.openai_server", json.dumps(config)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        assert process.stdout is not None
        port = int(process.stdout.readline())
        return Endpoint(f"http://127.0.0.1:{port}/v1", log)

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
