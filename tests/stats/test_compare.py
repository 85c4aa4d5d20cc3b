"""``compare`` on real receipts: a run against itself, a constructed collapse, refusals, coverage."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.cli import main
from modebench.stats.mcnemar import mcnemar
from modebench.validation import InputError
from tests.reference_data import needs_reference

PAIRED = ("accuracy", "first_draw_pass", "pass_at_draws", "pass_at_k", "distinct_at_k", "pcmd")


def _overall(table: Any) -> dict[tuple[str, int | None], dict[str, Any]]:
    groups = {(r["level"], r["domain"]) for r in table.rows}
    level = None if len(groups) > 1 else next(iter(groups))[0]
    return {(r["metric"], r["k"]): r for r in table.rows if r["level"] == level}


@pytest.mark.parametrize("name", ["walkthrough", pytest.param("conformance", marks=needs_reference)])
def test_a_run_against_itself(receipts: dict[str, Path], name: str) -> None:
    table = api.compare(receipts[name], receipts[name])
    assert table.meta["coverage"]["only_a"] == table.meta["coverage"]["only_b"] == 0
    for row in table.rows:
        if row["metric"] in PAIRED:
            assert row["a"] == row["b"] or row["a"] is None
            assert row["estimate"] in (0.0, None)
            assert row["ci_low"] in (0.0, None) and row["ci_high"] in (0.0, None)
        if row["metric"] in ("first_draw_pass", "pass_at_draws"):
            assert row["a_only"] == row["b_only"] == 0
            assert row["mcnemar_p"] == row["mcnemar_mid_p"] == 1.0
        if row["metric"] in ("mode_retention",) and row["estimate"] is not None:
            assert row["estimate"] == 1.0
        if row["metric"] in ("lost_draw_share", "modes_lost", "modes_gained") and row["estimate"] is not None:
            assert row["estimate"] == 0.0
    retention = [r for r in table.rows if r["metric"] == "mode_retention"]
    assert retention and any(r["estimate"] == 1.0 for r in retention)


def test_constructed_collapse_is_reported_exactly(receipts: dict[str, Path]) -> None:
    # A finds two modes per prompt (of two verified draws); B repeats the first mode twice.
    table = api.compare(receipts["walkthrough"], receipts["collapsed"])
    rows = _overall(table)
    assert rows[("mode_retention", 4)]["estimate"] == 0.5
    assert rows[("modes_retained", 4)]["estimate"] == 1.0
    assert rows[("modes_lost", 4)]["estimate"] == 1.0
    assert rows[("modes_gained", 4)]["estimate"] == 0.0
    assert rows[("modes_union", 4)]["estimate"] == 2.0
    assert rows[("lost_draw_share", 4)]["estimate"] == 0.5
    assert rows[("accuracy", None)]["estimate"] == 0.0  # same correctness ...
    distinct = rows[("distinct_at_k", 4)]
    assert (distinct["a"], distinct["b"], distinct["estimate"]) == (2.0, 1.0, -1.0)  # ... fewer modes
    assert rows[("pcmd", None)]["b"] == 0.0 and rows[("pcmd", None)]["estimate"] == -1.0
    assert table.meta["coverage"] == {"paired": 5, "only_a": 0, "only_b": 0, "prompts_a": 5, "prompts_b": 5}
    records = list(api.prompt_retention(receipts["walkthrough"], receipts["collapsed"]))
    assert len(records) == 5
    for record in records:
        assert len(record["modes_a"]) == 2 and len(record["modes_b"]) == 1
        assert record["retained"] == record["modes_b"] and len(record["lost"]) == 1
        assert record["gained"] == [] and record["lost_draw_share"] == 0.5


def test_coverage_of_a_subset_and_refusal_of_different_prompts(receipts: dict[str, Path]) -> None:
    table = api.compare(receipts["walkthrough"], receipts["subset"])
    assert table.meta["coverage"] == {"paired": 3, "only_a": 2, "only_b": 0, "prompts_a": 5, "prompts_b": 3}
    with pytest.raises(
        InputError, match=r"different prompts under the same id: 'level1_countdown/walkthrough/0'"
    ):
        api.compare(receipts["walkthrough"], receipts["altered"])


def test_mcnemar_exact_and_mid_p() -> None:
    assert mcnemar(0, 0).p_value == 1.0
    assert mcnemar(4, 4).mid_p_value == 1.0
    test = mcnemar(10, 2)  # P(X <= 2 | 12, 1/2) = 79/4096
    assert test.p_value == 2 * 79 / 4096
    assert test.mid_p_value == 2 * (13 + 66 / 2) / 4096
    large = mcnemar(1100, 1000)  # past the exact limit: log-space sum, same answer
    assert large.p_value == pytest.approx(0.030720707864, rel=1e-9)
    with pytest.raises(ValueError):
        mcnemar(-1, 2)


def test_cli_formats_and_power_from_compare(
    receipts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = str(receipts["walkthrough"]), str(receipts["collapsed"])
    assert main(["compare", a, b, "--format", "json", "--resamples", "200", "--seed", "5"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "modebench-compare-v2"
    assert document["bootstrap"] == {
        "method": "percentile, prompt pairs resampled with replacement",
        "engine": "numpy-pcg64",
        "seed": 5,
        "resamples": 200,
        "level": 0.95,
    }
    assert document["rows"] == api.compare(a, b, seed=5, resamples=200).to_records()
    assert main(["compare", a, b, "--format", "csv", "--k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run_a,run_b,level,domain,draws_a,draws_b,metric,k,a,b,estimate")
    assert any(",,,4,4,mode_retention,4,,,0.5," in line for line in lines)
    assert main(["compare", a, b, "--per-prompt"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 5
    # Power sizes the next experiment from an observed discordant rate.
    saved = tmp_path / "compare.json"
    saved.write_text(json.dumps({**document, "rows": [
        {**r, "a_only": 30, "b_only": 10, "prompts": 200} if r["metric"] == "pass_at_draws" else r
        for r in document["rows"]
    ]}))  # fmt: skip
    assert main(["power", "--from-compare", str(saved), "--delta", "0.1", "--json"]) == 0
    sized = json.loads(capsys.readouterr().out)
    assert sized["discordant"] == 0.2
    assert api.observed_discordant(saved) == 0.2 and sized["items"] == 155  # items_needed(0.1, 0.2)
    with pytest.raises(SystemExit) as exit_info:
        main(["power", "--from-compare", b, "--delta", "0.1"])
    assert exit_info.value.code == 2
    assert "not a comparison" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["power", "--from-compare", str(saved), "--discordant", "0.2", "--delta", "0.1"])
    assert "exactly one of --discordant or --from-compare" in capsys.readouterr().err


def test_without_numpy_the_python_engine_gives_the_same_estimates(
    receipts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = api.compare(receipts["walkthrough"], receipts["collapsed"], resamples=200, seed=9)
    monkeypatch.setitem(sys.modules, "numpy", None)
    slow = api.compare(receipts["walkthrough"], receipts["collapsed"], resamples=200, seed=9)
    assert slow.meta["bootstrap"]["engine"] == "python-mt19937"
    assert (
        slow.rows == api.compare(receipts["walkthrough"], receipts["collapsed"], resamples=200, seed=9).rows
    )
    for a, b in zip(fast.rows, slow.rows):
        assert {k: v for k, v in a.items() if not k.startswith("ci_")} == {
            k: v for k, v in b.items() if not k.startswith("ci_")
        }


def test_power_rejects_a_comparison_without_discordant_prompts(
    receipts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "self.json"
    saved.write_text(json.dumps(api.compare(receipts["walkthrough"], receipts["walkthrough"]).to_dict()))
    with pytest.raises(InputError, match="no discordant prompts for pass_at_draws"):
        api.observed_discordant(saved)
    with pytest.raises(InputError, match="has no nonsense rows"):
        api.observed_discordant(saved, "nonsense")
