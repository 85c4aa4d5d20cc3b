"""Registered requests of the bundled ``level1_countdown`` split, the prompts sources carry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main


@pytest.fixture(scope="session")
def requests(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    pytest.importorskip("pyarrow")
    path = tmp_path_factory.mktemp("requests") / "requests.jsonl"
    argv = ["prepare", "--registry", "bundled", "--config", "level1_countdown", "--output", str(path)]
    assert main(argv) == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def chatml(messages: list[dict[str, str]]) -> str:
    """The prompt as a ChatML-templated trainer logs it."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``modebench ARGV``: exit code, stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]
