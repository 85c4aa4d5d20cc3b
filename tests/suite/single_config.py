"""One single-config prepare + evaluate on the bundled release, reduced to the bytes that must
never change when suites are added: stdout lines, the request file, the receipt (minus wall-clock
and software-identity fields, which change with every edit of the source) and the journal.

``python -m tests.suite.single_config OUT.json`` records the golden values (done once, on the code
before suites existed); ``tests/suite/test_single_config_unchanged.py`` compares against them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from modebench.cli import main

CONFIG = "level1_countdown"
RUN = {
    "model": {"id": "golden", "revision": "1"},
    "generation": {"draws_per_prompt": 3},
    "prompt_condition": "registered_hints_v1",
}
RESPONSES = ["\\boxed{1}", "bad", ""]


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(list(argv))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stable_receipt(path: Path) -> str:
    receipt: dict[str, Any] = json.loads(path.read_bytes())
    receipt.pop("created_at")
    receipt.pop("software")
    receipt["execution"].pop("identity_sha256")
    for entry in receipt["execution"]["history"]:
        entry.pop("started_at")
    return _sha(json.dumps(receipt, indent=2).encode())  # key order kept


def capture(directory: Path) -> dict[str, Any]:
    """Run prepare and evaluate in ``directory`` (relative paths) and describe their outputs."""
    previous = Path.cwd()
    os.chdir(directory)
    try:
        code, prepare_out = _cli(
            "prepare", "--registry", "bundled", "--config", CONFIG, "--output", "requests.jsonl"
        )
        assert code == 0, prepare_out
        lines = Path("requests.jsonl").read_text().splitlines()
        with open("responses.jsonl", "w") as handle:
            for line in lines:
                handle.write(json.dumps({**json.loads(line), "responses": RESPONSES}) + "\n")
        Path("run.json").write_text(json.dumps(RUN))
        argv = ["responses.jsonl", "--registry", "bundled", "--config", CONFIG, "--run", "run.json"]
        code, evaluate_out = _cli("evaluate", *argv, "--output", "report.json", "--progress-every", "0")
        assert code == 0, evaluate_out
        return {
            "prepare_stdout": prepare_out,
            "requests_sha256": _sha(Path("requests.jsonl").read_bytes()),
            "evaluate_stdout": evaluate_out.replace(str(Path.cwd()), "<DIR>"),
            "receipt_stable_sha256": _stable_receipt(Path("report.json")),
            "journal_sha256": _sha(Path("report.json.work/results.jsonl").read_bytes()),
            "work_files": sorted(os.listdir("report.json.work")),
        }
    finally:
        os.chdir(previous)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        found = capture(Path(scratch))
    Path(sys.argv[1]).write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")
