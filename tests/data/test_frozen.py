"""Split lookup/loading, prepare/inspect, and frozen evaluation end to end over HTTP."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.data.conftest import Server, countdown_rows, parquet_bytes, publish, registry_bytes, split_record

from modebench import api, cli, data, dataset_cache
from modebench.domains import plugin
from modebench.streaming import evaluate_file
from modebench.validation import InputError

RUN = {
    "model": {"id": "toy-model", "revision": "r1"},
    "generation": {"draws_per_prompt": 4, "temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def responses_for(row: dict[str, Any]) -> list[str]:
    answer = json.loads(row["answer"])
    witnesses = plugin("countdown").witnesses(1, answer)  # type: ignore[misc]
    return [witnesses[0], witnesses[1], "1+1", "not a solution"]


def local_root(tmp_path: Path, records: list[dict[str, Any]], files: dict[str, bytes]) -> Path:
    """A checkout-style data directory: ``root/manifest.json`` and ``root/../<data_file>``."""
    root = tmp_path / "checkout" / "data"
    root.mkdir(parents=True)
    (root / "manifest.json").write_bytes(registry_bytes(records))
    for name, content in files.items():
        (root.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (root.parent / name).write_bytes(content)
    return root


# -- lookup and loading ---------------------------------------------------------------------------


def test_prompt_id() -> None:
    assert data.prompt_id("level1_countdown", "eval", 0) == "level1_countdown/eval/0"
    for bad in (-1, True, 1.0, "0"):
        with pytest.raises(InputError, match="prompt row index must be a nonnegative integer"):
            data.prompt_id("c", "eval", bad)  # type: ignore[arg-type]


def test_split_record_errors(tmp_path: Path) -> None:
    content = parquet_bytes(countdown_rows(2))
    good = split_record("level1_toy", "eval", content, 2)
    cases = [
        ({"schema": "x", "splits": []}, "unsupported dataset manifest schema"),
        (
            {"schema": "modebench-portable-data-v1", "splits": [1]},
            "dataset manifest requires a list of split objects",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [good, good]},
            "unknown or ambiguous split: level1_toy/eval",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [dict(good, rows=True)]},
            "dataset rows must be a positive integer",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [dict(good, parquet_sha256="A" * 64)]},
            "dataset requires a SHA-256 identity",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [dict(good, data_file=3)]},
            "dataset requires a data_file path",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [dict(good, data_file="/etc/passwd")]},
            "dataset file must be inside the data directory",
        ),
        (
            {"schema": "modebench-portable-data-v1", "splits": [dict(good, data_file="data/../../x")]},
            "dataset file must be inside the data directory",
        ),
    ]
    for index, (document, message) in enumerate(cases):
        root = tmp_path / str(index) / "data"
        root.mkdir(parents=True)
        (root / "manifest.json").write_text(json.dumps(document))
        with pytest.raises(InputError, match=message.replace("(", r"\(")):
            data.split_record(root, "level1_toy", "eval")
    with pytest.raises(FileNotFoundError):
        data.split_record(tmp_path / "missing", "level1_toy", "eval")


def test_load_split_verifies_hash_and_rows(tmp_path: Path) -> None:
    rows = countdown_rows(3)
    content = parquet_bytes(rows)
    good = split_record("level1_toy", "eval", content, 3)
    root = local_root(
        tmp_path,
        [
            good,
            dict(good, split="dev", rows=4, data_file="data/dev.parquet"),
            dict(good, split="train", data_file="data/train.parquet"),
        ],
        {good["data_file"]: content, "data/dev.parquet": content, "data/train.parquet": b"junk"},
    )
    loaded = data.load_split(root, "level1_toy", "eval")
    assert len(loaded) == 3 and loaded[1] == rows[1] and list(loaded[0]) == list(rows[0])
    with pytest.raises(InputError, match="dataset row count mismatch: level1_toy/dev"):
        data.load_split(root, "level1_toy", "dev")
    with pytest.raises(InputError, match="dataset hash mismatch: level1_toy/train"):
        data.load_split(root, "level1_toy", "train")
    with pytest.raises(InputError, match="dataset manifest does not match the packaged frozen registry"):
        data.load_split(root, "level1_toy", "eval", frozen=True)


def test_frozen_check_against_the_packaged_registry(tmp_path: Path) -> None:
    (record,) = dataset_cache.discover("level5_countdown", "eval")
    moved = dict(record, data_file="data/elsewhere/eval.parquet")  # layout may differ
    root = local_root(tmp_path, [moved], {moved["data_file"]: b"not the real file"})
    assert data.split_record(root, "level5_countdown", "eval", frozen=True) == moved
    with pytest.raises(InputError, match="dataset hash mismatch: level5_countdown/eval"):
        data.load_split(root, "level5_countdown", "eval", frozen=True)
    for change in ({"level_admitted": 1}, {"rows_sha256": "0" * 64}, {"rows": 127}):
        (root / "manifest.json").write_bytes(registry_bytes([dict(moved, **change)]))
        with pytest.raises(InputError, match="dataset manifest does not match the packaged frozen registry"):
            data.split_record(root, "level5_countdown", "eval", frozen=True)


def test_missing_data_extra_is_reported_first(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    message = "dataset loading requires the 'data' extra: pip install -e '.[data]' in the modebench checkout"
    with pytest.raises(InputError, match=r"'data' extra"):
        data.load_split(tmp_path / "missing", "level1_countdown", "eval")
    tasks = api.load_tasks("level1_countdown", cache_dir=tmp_path / "c", offline=True)
    with pytest.raises(InputError, match=r"'data' extra"):
        next(tasks)
    code, _, err = run(
        capsys, "datasets", "inspect", "--config", "level1_countdown", "--data-root", "missing"
    )
    assert code == 2 and message in err
    assert not (tmp_path / "c").exists()


def test_resolve_data_root_order(tmp_path: Path, server: Server) -> None:
    assert data.resolve_data_root("level1_countdown", data_root="explicit") == "explicit"
    Path("data").mkdir()
    Path("data/manifest.json").write_text("{}")
    assert data.resolve_data_root("level1_countdown") == "data"
    pub = publish(server)
    # an explicit cache or another registry never picks up the checkout in ./data
    cached = data.resolve_data_root(pub.config, registry=pub.registry_url)
    assert Path(cached).name == "data" and Path(cached).is_absolute()
    with pytest.raises(InputError, match="dataset is not cached: level1_countdown/eval"):
        data.resolve_data_root("level1_countdown", cache_dir=tmp_path / "c", offline=True)


# -- prepare / inspect / load_tasks over HTTP ---------------------------------------------------------


def test_prepare_inspect_and_load_tasks(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    cache = str(tmp_path / "cache")
    out_path = tmp_path / "requests.jsonl"
    common = ["--config", pub.config, "--registry", pub.registry_url, "--cache-dir", cache]
    code, out, err = run(capsys, "prepare", *common, "--output", str(out_path))
    assert code == 0, err
    assert json.loads(out) == {"output": str(out_path), "prompts": 3}
    lines = out_path.read_text().splitlines()
    first = json.loads(lines[0])
    assert list(first) == ["id", "level", "domain", "messages", "prompt_sha256", "dataset_sha256"]
    assert lines[0] == json.dumps(first)
    assert first["id"] == f"{pub.config}/eval/0" and first["dataset_sha256"] == pub.record["parquet_sha256"]
    assert first["messages"][1] == {"role": "user", "content": pub.rows[0]["problem"]}
    canonical = json.dumps(first["messages"], sort_keys=True, separators=(",", ":")).encode()
    assert first["prompt_sha256"] == hashlib.sha256(canonical).hexdigest()
    assert all("answer" not in json.loads(line) and "verifier" not in line for line in lines)
    code, _, err = run(capsys, "prepare", *common, "--output", str(out_path))
    assert code == 2 and f"output already exists: {out_path}" in err

    code, out, _ = run(capsys, "datasets", "inspect", *common, "--row", "2", "--offline")
    payload = json.loads(out)
    assert code == 0 and list(payload) == ["id", "rows", "level", "domain", "dataset_sha256", "messages"]
    assert payload["id"] == f"{pub.config}/eval/2" and payload["rows"] == 3
    code, out, _ = run(capsys, "datasets", "inspect", *common, "--show-reference")
    assert json.loads(out)["answer"] == json.loads(pub.rows[0]["answer"])
    code, _, err = run(capsys, "datasets", "inspect", *common, "--row", "3")
    assert code == 2 and "row must be between 0 and 2" in err

    lazy = api.load_tasks(pub.config, registry=server.url + "absent/registry.json", cache_dir=cache)
    with pytest.raises(InputError, match="registry download failed"):
        next(lazy)
    tasks = list(api.load_tasks(pub.config, cache_dir=cache, registry=pub.registry_url))
    assert [task.id for task in tasks] == [f"{pub.config}/eval/{i}" for i in range(3)]
    assert tasks[0].answer == json.loads(pub.rows[0]["answer"]) and tasks[0].level == 1
    assert tasks[0].domain == "countdown" and tasks[0].dataset_sha256 == pub.record["parquet_sha256"]


# -- frozen evaluation ----------------------------------------------------------------------------------


def _cells(receipt: dict[str, Any]) -> list[dict[str, Any]]:
    keys = ("level", "domain", "k", "accuracy", "pass_at_k", "distinct_at_k", "pcmd", "protocol_notes")
    return [{key: cell[key] for key in keys} for cell in receipt["cells"]]


def test_frozen_end_to_end_matches_custom_evaluation(server: Server, tmp_path: Path, capsys) -> None:
    pub = publish(server)
    cache = str(tmp_path / "cache")
    requests = tmp_path / "requests.jsonl"
    common = ["--config", pub.config, "--registry", pub.registry_url, "--cache-dir", cache]
    assert run(capsys, "prepare", *common, "--output", str(requests))[0] == 0
    answers = tmp_path / "responses.jsonl"
    with answers.open("w") as handle:
        for line, row in zip(requests.read_text().splitlines(), pub.rows):
            handle.write(json.dumps({**json.loads(line), "responses": responses_for(row)}) + "\n")
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps(RUN))
    receipt_path = tmp_path / "frozen.json"
    code, out, err = run(
        capsys,
        "evaluate",
        str(answers),
        *common,
        "--run",
        str(run_file),
        "--output",
        str(receipt_path),
        "--progress-every",
        "0",
    )
    assert code == 0, err
    summary = json.loads(out)
    assert (
        summary["dataset_kind"] == "frozen" and summary["status"] == "completed" and summary["prompts"] == 3
    )
    receipt = json.loads(receipt_path.read_text())
    block = receipt["dataset"]
    assert block["kind"] == "frozen" and block["references_authenticated"] is True
    assert block["complete"] is True and block["missing_prompt_ids"] == [] and block["draws_per_prompt"] == 4
    assert block["split_record"] == pub.record and block["registry"] == "modebench-portable-data-v1"
    assert block["manifest_sha256"] == hashlib.sha256(pub.raw).hexdigest()
    assert receipt["input_sha256"] == hashlib.sha256(answers.read_bytes()).hexdigest()
    code, out, _ = run(capsys, "report", str(receipt_path))
    assert code == 0 and "Evaluation completed" in out
    code, _, err = run(
        capsys, "evaluate", str(answers), *common, "--run", str(run_file), "--output", str(receipt_path)
    )
    assert code == 2 and "already exists" in err

    custom = tmp_path / "custom.jsonl"
    with custom.open("w") as handle:
        for index, row in enumerate(pub.rows):
            record = {
                "id": f"custom-{index}",
                "level": 1,
                "domain": "countdown",
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": responses_for(row),
            }
            handle.write(json.dumps(record) + "\n")
    custom_receipt = evaluate_file(custom, tmp_path / "custom.json", run=RUN)
    assert custom_receipt["dataset_kind"] == "custom"
    custom_cells = _cells(json.loads((tmp_path / "custom.json").read_text()))
    assert _cells(receipt) == custom_cells
    assert custom_cells[0]["accuracy"] == 0.5 and custom_cells[0]["distinct_at_k"] == 2.0

    # The typed API takes the same registry; a partial split is explicit.
    root = dataset_cache.fetch(pub.config, cache_dir=cache, registry=pub.registry_url)
    first_only = tmp_path / "first.jsonl"
    first_only.write_text(answers.read_text().splitlines()[0] + "\n")
    options = api.EvaluationOptions(
        run=RUN, config=pub.config, data_root=root, allow_partial=True, registry=pub.registry_url
    )  # type: ignore[arg-type]
    result = api.evaluate_file(first_only, tmp_path / "partial.json", options=options)
    partial = json.loads(result.output.read_text())["dataset"]
    assert partial["complete"] is False and partial["missing_prompt_ids"] == [
        f"{pub.config}/eval/1",
        f"{pub.config}/eval/2",
    ]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda r, i: {**r, "id": r["id"][:-1] + "7"} if i == 0 else r,
            "line 1, prompt 'level1_toy_countdown/eval/7': unknown frozen prompt ID: level1_toy_countdown/eval/7",
        ),
        (
            lambda r, i: {**r, "answer": {"verifier": "countdown"}},
            "frozen evaluation resolves answer from the dataset; omit supplied answer",
        ),
        (lambda r, i: {**r, "level": "level2"}, "level/domain does not match the frozen configuration"),
        (lambda r, i: {**r, "domain": "pantry"}, "level/domain does not match the frozen configuration"),
        (lambda r, i: {**r, "level": 9}, "level must be 1, 2, 3, 4, or 5"),
        (lambda r, i: {**r, "problem": "other"}, "problem does not match the frozen row"),
        (lambda r, i: {**r, "dataset_sha256": "0" * 64}, "dataset_sha256 does not match the frozen split"),
        (
            lambda r, i: {**r, "responses": r["responses"][:3]} if i == 1 else r,
            "line 2, prompt 'level1_toy_countdown/eval/1': frozen evaluation requires the same number of draws"
            " per prompt; retain failed draws (expected 4, as in the first prompt; found 3",
        ),
        (lambda r, i: {**r, "id": 0}, "unknown frozen prompt ID: 0"),
    ],
)
def test_frozen_record_errors(server: Server, tmp_path: Path, mutate, message) -> None:
    pub = publish(server)
    root = dataset_cache.fetch(pub.config, cache_dir=tmp_path / "c", registry=pub.registry_url)
    records = [
        {"id": f"{pub.config}/eval/{i}", "problem": row["problem"], "responses": responses_for(row)}
        for i, row in enumerate(pub.rows)
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(mutate(r, i)) + "\n" for i, r in enumerate(records)))
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        evaluate_file(
            path, tmp_path / "out.json", run=RUN, config=pub.config, data_root=root, registry=pub.registry_url
        )
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("keep", "run_metadata", "message"),
    [
        (3, None, "frozen evaluation requires run metadata (model, generation, prompt_condition)"),
        (
            3,
            {**RUN, "prompt_condition": "python_level3_neutral_v1"},
            "frozen evaluation requires registered_hints_v1; use custom mode for changed conditions",
        ),
        (
            2,
            RUN,
            "incomplete frozen split: missing 1 of 3 prompts; explicitly allow_partial to evaluate a subset",
        ),
    ],
)
def test_frozen_whole_input_errors(server: Server, tmp_path: Path, keep, run_metadata, message) -> None:
    pub = publish(server)
    root = dataset_cache.fetch(pub.config, cache_dir=tmp_path / "c", registry=pub.registry_url)
    path = tmp_path / "in.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"{pub.config}/eval/{i}", "responses": responses_for(row)}) + "\n"
            for i, row in enumerate(pub.rows[:keep])
        )
    )
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate_file(
            path,
            tmp_path / "out.json",
            run=run_metadata,
            config=pub.config,
            data_root=root,
            registry=pub.registry_url,
        )


def test_frozen_requires_the_registry_that_published_the_split(
    server: Server, tmp_path: Path, capsys
) -> None:
    pub = publish(server)
    root = dataset_cache.fetch(pub.config, cache_dir=tmp_path / "c", registry=pub.registry_url)
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": f"{pub.config}/eval/0", "responses": ["x"]}) + "\n")
    with pytest.raises(InputError, match="does not match the packaged frozen registry"):
        evaluate_file(path, tmp_path / "out.json", run=RUN, config=pub.config, data_root=root)
    with pytest.raises(InputError, match="registry requires a dataset config"):
        evaluate_file(path, tmp_path / "out.json", run=RUN, registry=pub.registry_url)
    code, _, err = run(
        capsys, "evaluate", str(path), "--output", str(tmp_path / "o.json"), "--registry", pub.registry_url
    )
    assert code == 2 and "--registry requires --config" in err
