"""Inspect logs stream: a log far larger than its responses is ingested in bounded memory.

Each generated sample carries a large transcript (as real agent logs do) that ingest never keeps;
the ingest runs in a fresh interpreter whose peak RSS growth must stay a small fraction of the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from modebench.api import ingest
from modebench.cli import main
from tests.ingest.conftest import read_jsonl

SAMPLES = 60
EPOCHS = 4
TRANSCRIPT = 200_000  # characters of events per sample epoch

DRIVER = """
import json, resource, sys
from modebench.ingest import ingest
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
summary = ingest("inspect", sys.argv[1], sys.argv[2])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grown_kib": after - before, "responses": summary["responses"]}))
"""


def _ingest(capsys: pytest.CaptureFixture[str], log: Path, out: Path) -> tuple[int, str]:
    try:
        code = main(["ingest", "inspect", str(log), "--output", str(out)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def _sample(ident: Any, epoch: int) -> dict[str, Any]:
    # The bulk sits in fields ingest ignores; epochs are listed out of order on purpose.
    return {
        "id": ident,
        "epoch": epoch,
        "input": f"prompt {ident}",
        "events": [{"event": "model", "text": "é" * TRANSCRIPT}],
        "messages": [{"role": "user", "content": f"prompt {ident}"}],
        "output": {"completion": f"answer {ident}/{epoch}", "choices": []},
        "scores": {"x": {"value": 1}},
    }


def _order() -> list[tuple[Any, int]]:
    # Mixed integer and string ids; Inspect lists samples by epoch, then id (integers zero-padded).
    ids: list[Any] = [*range(SAMPLES // 2), *(f"s{n}" for n in range(SAMPLES // 2))]
    return [(ident, epoch) for epoch in (3, 1, 4, 2) for ident in reversed(ids)]


def _expected() -> list[dict[str, Any]]:
    ids = sorted(
        [*range(SAMPLES // 2), *(f"s{n}" for n in range(SAMPLES // 2))],
        key=lambda i: i if isinstance(i, str) else str(i).zfill(20),
    )
    return [{"id": str(i), "responses": [f"answer {i}/{e}" for e in range(1, EPOCHS + 1)]} for i in ids]


def _json_log(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [')
        for number, (ident, epoch) in enumerate(_order()):
            handle.write(("," if number else "") + json.dumps(_sample(ident, epoch), ensure_ascii=False))
        handle.write('], "results": {"scores": []}, "reductions": null}')
    return path


def _eval_log(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
        for ident, epoch in _order():
            archive.writestr(f"samples/{ident}_epoch_{epoch}.json", json.dumps(_sample(ident, epoch)))
        archive.writestr("summaries.json", "[]")
    return path


@pytest.mark.parametrize("make", [_json_log, _eval_log], ids=["json", "eval"])
def test_large_inspect_log_streams_in_bounded_memory(tmp_path: Path, make: Any) -> None:
    log = make(tmp_path / f"big.{make.__name__[1:5]}")
    out = tmp_path / "out.jsonl"
    result = subprocess.run(
        [sys.executable, "-c", DRIVER, str(log), str(out)], capture_output=True, text=True, check=True
    )
    measured = json.loads(result.stdout)
    assert measured["responses"] == SAMPLES * EPOCHS
    assert read_jsonl(out) == _expected()
    # The transcripts alone are ~48 MB of text (~100 MB as a .json file); parsing the whole log
    # would grow the process by more than that. Streaming holds about one sample plus the output.
    transcript_kib = SAMPLES * EPOCHS * TRANSCRIPT // 1024
    assert measured["grown_kib"] < transcript_kib // 4, measured


def test_json_and_eval_logs_of_the_same_samples_ingest_alike(tmp_path: Path) -> None:
    json_out, eval_out = tmp_path / "j.jsonl", tmp_path / "e.jsonl"
    ingest("inspect", _json_log(tmp_path / "log.json"), json_out)
    ingest("inspect", _eval_log(tmp_path / "log.eval"), eval_out)
    assert json_out.read_bytes() == eval_out.read_bytes()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"samples": [{"id": 1, "output": {"completion": "a"}}, {"id": 2,', "invalid JSON"),
        ('{"samples": [{"id": 1, "output": {"completion": "a"}} {"id": 2}]}', "invalid JSON (expected ','"),
        ("[1, 2]", "not an Inspect log (no samples list)"),
        ('{"version": 2}', "not an Inspect log (no samples list)"),
        ('{"samples": 3}', "not an Inspect log (no samples list)"),
        ('{"samples": [{"id": 1, "output": {}}]}', "sample 1: missing field: output.completion"),
        ('{"samples": [{"output": {"completion": "a"}}]}', "sample 1: missing field: id"),
        ('{"samples": []} trailing', "invalid JSON (extra data"),
    ],
)
def test_malformed_json_logs_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    log = tmp_path / "log.json"
    log.write_text(text)
    code, err = _ingest(capsys, log, tmp_path / "o.jsonl")
    assert code == 2 and f"{log}: {message}" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.json"]


def test_malformed_eval_logs_name_the_file_and_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("samples/1_epoch_1.json", json.dumps(_sample(1, 1)))
        archive.writestr("samples/2_epoch_1.json", '{"id": 2, "output": ')
    code, err = _ingest(capsys, log, tmp_path / "o.jsonl")
    assert code == 2 and f"{log}: samples/2_epoch_1.json: not a readable sample" in err
    log.write_bytes(b"not a zip")
    code, err = _ingest(capsys, log, tmp_path / "o.jsonl")
    assert code == 2 and f"{log}: not a readable Inspect log" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.eval"]
