"""The CLI is a skin over ``modebench.api.evaluate_file``: same options, same checks, same bytes."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from modebench.api import EvaluationOptions, InputError, evaluate_file
from modebench.cli import main
from modebench.suite.build import build_release
from modebench.suite.calibrate import calibrate
from modebench.suite.power import plan
from modebench.validation import OptionError

# Wall-clock fields: the only receipt bytes two runs of the same inputs do not share.
TIMESTAMPS = ("created_at",)


def _stable(path: Path) -> dict[str, Any]:
    receipt: dict[str, Any] = json.loads(path.read_bytes())
    for key in TIMESTAMPS:
        assert isinstance(receipt.pop(key), str)
    for entry in receipt["execution"]["history"]:
        assert isinstance(entry.pop("started_at"), str)
    return receipt


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _same_receipts(cli_dir: Path, api_dir: Path) -> None:
    cli_receipt, api_receipt = cli_dir / "report.json", api_dir / "report.json"
    assert _stable(cli_receipt) == _stable(api_receipt)
    # Apart from the two timestamps the files are byte-identical, journals included.
    assert cli_receipt.read_bytes().count(b"\n") == api_receipt.read_bytes().count(b"\n")
    journal = Path("report.json.work") / "results.jsonl"
    assert (cli_dir / journal).read_bytes() == (api_dir / journal).read_bytes()


def test_custom_run_cli_and_api_give_the_same_receipt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = tmp_path / "demo"
    assert main(["walkthrough", "--directory", str(demo)]) == 0
    capsys.readouterr()
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    cli_dir.mkdir()
    api_dir.mkdir()
    inputs = demo / "responses.jsonl"
    code, out, _ = _cli(
        capsys,
        "evaluate",
        str(inputs),
        "--run",
        str(demo / "run.json"),
        "--output",
        str(cli_dir / "report.json"),
        "--progress-every",
        "0",
    )
    assert code == 0
    receipt = evaluate_file(
        inputs, api_dir / "report.json", options=EvaluationOptions(run_file=demo / "run.json")
    )
    assert json.loads(out)["dataset_kind"] == receipt.dataset_kind == "custom"
    _same_receipts(cli_dir, api_dir)
    # run given as a value or as a file: the same receipt
    again = tmp_path / "again"
    again.mkdir()
    run = json.loads((demo / "run.json").read_bytes())
    evaluate_file(inputs, again / "report.json", options=EvaluationOptions(run=run))
    _same_receipts(api_dir, again)


@pytest.fixture
def frozen_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """Responses for every prompt of the bundled ``level1_countdown`` split and their run file."""
    pytest.importorskip("pyarrow")
    requests = tmp_path / "requests.jsonl"
    assert (
        main(["prepare", "--registry", "bundled", "--config", "level1_countdown", "--output", str(requests)])
        == 0
    )
    capsys.readouterr()
    responses = tmp_path / "responses.jsonl"
    with responses.open("w") as handle:
        for line in requests.read_text().splitlines():
            handle.write(
                json.dumps({"id": json.loads(line)["id"], "responses": ["\\boxed{1}", "none"]}) + "\n"
            )
    run = tmp_path / "run.json"
    run.write_text(
        json.dumps(
            {
                "model": {"id": "parity-test", "revision": "1"},
                "generation": {"draws_per_prompt": 2},
                "prompt_condition": "registered_hints_v1",
            }
        )
    )
    return responses, run


def test_frozen_run_cli_and_api_give_the_same_receipt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], frozen_inputs: tuple[Path, Path]
) -> None:
    responses, run = frozen_inputs
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    cli_dir.mkdir()
    api_dir.mkdir()
    code, out, _ = _cli(
        capsys,
        "evaluate",
        str(responses),
        "--registry",
        "bundled",
        "--config",
        "level1_countdown",
        "--run",
        str(run),
        "--output",
        str(cli_dir / "report.json"),
        "--progress-every",
        "0",
    )
    assert code == 0 and json.loads(out)["dataset_kind"] == "frozen"
    # The reproduction of the issue: a frozen run from Python with the bundled registry.
    options = EvaluationOptions(
        config="level1_countdown", registry="bundled", run=json.loads(run.read_bytes())
    )
    receipt = evaluate_file(responses, api_dir / "report.json", options=options)
    assert receipt.status == "completed" and receipt.dataset_kind == "frozen" and receipt.prompts == 32
    _same_receipts(cli_dir, api_dir)


def test_failed_preflight_leaves_no_work_dir(tmp_path: Path, frozen_inputs: tuple[Path, Path]) -> None:
    responses, run = frozen_inputs
    output = tmp_path / "api.json"
    work = tmp_path / "api.json.work"
    missing = tmp_path / "nowhere"
    options = EvaluationOptions(config="level1_countdown", data_root=missing, run_file=run)
    with pytest.raises(OSError):  # no manifest under the given data root
        evaluate_file(responses, output, options=options)
    assert not work.exists() and not output.exists()
    bad_run = tmp_path / "bad-run.json"
    bad_run.write_text('{"model": {}}')
    with pytest.raises(InputError, match="run metadata missing fields"):
        evaluate_file(
            responses,
            output,
            options=EvaluationOptions(config="level1_countdown", registry="bundled", run_file=bad_run),
        )
    assert not work.exists() and not output.exists()
    # Nothing left behind, so the corrected call simply works — no "resume" needed.
    options = EvaluationOptions(config="level1_countdown", registry="bundled", run_file=run)
    assert evaluate_file(responses, output, options=options).status == "completed"


def test_library_errors_name_options_and_the_cli_names_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = tmp_path / "demo"
    assert main(["walkthrough", "--directory", str(demo)]) == 0
    capsys.readouterr()
    inputs, output = demo / "responses.jsonl", tmp_path / "out.json"
    cases = [
        (
            EvaluationOptions(registry="bundled"),
            ["--registry", "bundled"],
            "registry requires a dataset config",
            "--registry requires --config",
        ),
        (
            EvaluationOptions(offline=True),
            ["--offline"],
            "cache_dir and offline require a dataset config",
            "--cache-dir and --offline require --config",
        ),
    ]
    for options, flags, library, cli in cases:
        with pytest.raises(OptionError) as error:
            evaluate_file(inputs, output, options=options)
        assert str(error.value) == library and "--" not in str(error.value)
        code, _, err = _cli(capsys, "evaluate", str(inputs), "--output", str(output), *flags)
        assert code == 2 and f"error: {cli}\n" in err
    work = tmp_path / "taken"
    work.mkdir()
    with pytest.raises(OptionError) as error:
        evaluate_file(inputs, output, options=EvaluationOptions(run_file=demo / "run.json"), work_dir=work)
    assert str(error.value) == f"checkpoint already exists: {work}; resume it or use a new destination"
    code, _, err = _cli(
        capsys,
        "evaluate",
        str(inputs),
        "--run",
        str(demo / "run.json"),
        "--output",
        str(output),
        "--work-dir",
        str(work),
    )
    assert code == 2 and f"checkpoint already exists: {work}; use --resume or a new destination" in err
    assert not output.exists()


@pytest.mark.parametrize(
    ("call", "argv", "library", "cli"),
    [
        (
            partial(plan, discordant=0.25),
            ["power", "--discordant", "0.25"],
            "give exactly one of delta (items needed) or items (detectable difference)",
            "give exactly one of --delta (items needed) or --items (detectable difference)",
        ),
        (
            partial(plan, discordant=0.25, delta=0.1, alpha=2),
            ["power", "--discordant", "0.25", "--delta", "0.1", "--alpha", "2"],
            "alpha must be between 0 and 1",
            "--alpha must be between 0 and 1",
        ),
        (
            partial(plan, discordant=0.25, items=0),
            ["power", "--discordant", "0.25", "--items", "0"],
            "items must be a positive integer",
            "--items must be a positive integer",
        ),
        (
            partial(calibrate, "r.json", dev_fraction=1.0),
            ["calibrate", "r.json", "--dev-fraction", "1"],
            "dev_fraction must be between 0 and 1",
            "--dev-fraction must be between 0 and 1",
        ),
        (
            partial(build_release, "out", seed=1, rows={"eval": 0}),
            ["build", "--output", "out", "--seed", "1", "--rows-eval", "0"],
            "rows must be positive for eval and nonnegative for dev and train",
            "--rows-eval must be positive and --rows-dev/--rows-train nonnegative",
        ),
    ],
)
def test_suite_library_errors_name_parameters_and_the_cli_names_flags(
    call: Any, argv: list[str], library: str, cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(OptionError) as error:
        call()
    assert str(error.value) == library
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and err.endswith(f"error: {cli}\n")
