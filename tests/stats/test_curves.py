"""``curves`` on real receipts: at k = n the estimates are the receipt's own numbers."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.reporting import read_report
from modebench.stats import Bootstrap, bootstrap
from modebench.stats.profiles import Profile
from modebench.stats.summary import curves_from_profiles
from modebench.validation import InputError, OptionError
from tests.reference_data import needs_reference


def _rows(table: Any, level: int, domain: str, draws: int) -> dict[tuple[str, int | None], dict[str, Any]]:
    return {
        (r["metric"], r["k"]): r
        for r in table.rows
        if (r["level"], r["domain"], r["draws"]) == (level, domain, draws)
    }


@pytest.mark.parametrize(
    "name", ["walkthrough", "collapsed", pytest.param("conformance", marks=needs_reference)]
)
def test_at_k_equal_draws_the_curve_is_the_receipt(receipts: dict[str, Path], name: str) -> None:
    receipt = receipts[name]
    table = api.curves(receipt)
    cells = read_report(receipt)["cells"]
    per_cell = [r for r in table.rows if r["level"] is not None]
    assert len({(r["level"], r["domain"], r["draws"]) for r in per_cell}) == len(cells)
    for cell in cells:
        rows = _rows(table, cell["level"], cell["domain"], cell["k"])
        # Bit-identical: the same exact sums and the same single rounding as the receipt.
        assert rows[("accuracy", None)]["estimate"] == cell["accuracy"]
        assert rows[("pass_at_k", cell["k"])]["estimate"] == cell["pass_at_k"]
        assert rows[("distinct_at_k", cell["k"])]["estimate"] == cell["distinct_at_k"]
        assert rows[("pcmd", None)]["estimate"] == cell["pcmd"]["d_mode"]
        assert rows[("pcmd", None)]["prompts"] == cell["pcmd"]["defined_prompts"]
        expected_error = cell["pcmd"]["standard_error"]
        found_error = rows[("pcmd", None)]["standard_error"]
        assert (found_error is None) == (expected_error is None)
        if expected_error is not None:
            assert math.isclose(found_error, expected_error, rel_tol=1e-12, abs_tol=1e-15)
        # pass@1 is accuracy; the curves are monotone in k.
        assert rows[("pass_at_k", 1)]["estimate"] == pytest.approx(cell["accuracy"], rel=1e-12)
        passes = [
            r["estimate"] for (m, _), r in sorted(rows.items(), key=lambda i: str(i[0])) if m == "pass_at_k"
        ]
        assert passes == sorted(passes)


def _cell() -> dict[tuple[int, str, int], Counter[Profile]]:
    profiles = Counter(
        {
            Profile(8, 0, (), False): 40,
            Profile(8, 2, (1, 1), True): 25,
            Profile(8, 5, (3, 2), False): 20,
            Profile(8, 8, (8,), True): 15,
        }
    )
    return {(2, "domain_x", 8): profiles}


def test_standard_errors_and_intervals_are_sensible() -> None:
    table = curves_from_profiles(_cell(), [1, 4, 8], Bootstrap(seed=3, resamples=2000))
    rows = {(r["metric"], r["k"]): r for r in table.rows}
    accuracy = rows[("accuracy", None)]
    values = [0.0] * 40 + [0.25] * 25 + [0.625] * 20 + [1.0] * 15
    mean = sum(values) / 100
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 99)
    assert accuracy["estimate"] == pytest.approx(mean)
    assert accuracy["standard_error"] == pytest.approx(sd / 10)
    for row in table.rows:
        if row["ci_low"] is not None and row["metric"] != "effective_modes":
            assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    # A 95 % percentile interval of a mean is about ±1.96 standard errors wide.
    assert accuracy["ci_high"] - accuracy["ci_low"] == pytest.approx(
        2 * 1.96 * accuracy["standard_error"], rel=0.15
    )
    effective = rows[("effective_modes", None)]
    pcmd = rows[("pcmd", None)]
    assert effective["estimate"] == pytest.approx(1 / (1 - pcmd["estimate"]))
    assert effective["ci_low"] == pytest.approx(1 / (1 - pcmd["ci_low"]))


def test_bootstrap_is_reproducible_from_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    first = curves_from_profiles(_cell(), None, Bootstrap(seed=11, resamples=300))
    again = curves_from_profiles(_cell(), None, Bootstrap(seed=11, resamples=300))
    other = curves_from_profiles(_cell(), None, Bootstrap(seed=12, resamples=300))
    assert first.rows == again.rows
    assert first.rows != other.rows
    assert first.meta["bootstrap"]["engine"] == "numpy-pcg64"
    # Without NumPy the pure-Python engine is used, also reproducible, and says so.
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert bootstrap.engine() == "python-mt19937"
    slow = curves_from_profiles(_cell(), None, Bootstrap(seed=11, resamples=300))
    assert slow.rows == curves_from_profiles(_cell(), None, Bootstrap(seed=11, resamples=300)).rows
    assert slow.meta["bootstrap"]["engine"] == "python-mt19937"
    for fast_row, slow_row in zip(first.rows, slow.rows):
        assert fast_row["estimate"] == slow_row["estimate"]
        if fast_row["ci_low"] is not None:
            assert slow_row["ci_low"] == pytest.approx(fast_row["ci_low"], abs=0.05)


def test_records_pandas_and_json(receipts: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    table = api.curves(receipts["walkthrough"], [1, 2])
    document = json.loads(json.dumps(table.to_dict()))
    assert document["schema"] == "modebench-stats-v2"
    assert document["rows"] == table.to_records()
    assert {(r["metric"], r["k"]) for r in document["rows"]} >= {("pass_at_k", 1), ("distinct_at_k", 2)}
    frame = table.to_pandas()
    assert list(frame.columns) == list(table.columns) and len(frame) == len(table.rows)
    # k is an integer column with nulls (accuracy has no k), never float with NaN
    assert str(frame["k"].dtype) == "Int64" and frame["k"].dropna().tolist()[:2] == [1, 2]
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        table.to_pandas()


def test_invalid_settings_and_failed_receipts(receipts: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="^level must be between 0 and 1$"):
        api.curves(receipts["walkthrough"], level=1.5)
    with pytest.raises(OptionError, match="^resamples must be a positive integer$"):
        api.curves(receipts["walkthrough"], resamples=0)
    with pytest.raises(OptionError, match="^seed must be a nonnegative integer$"):
        api.curves(receipts["walkthrough"], seed=-1)
    failed = tmp_path / "failed.json"
    failed.write_text(
        json.dumps(
            {"schema": "modebench-saved-responses-v3", "evaluation": {"status": "failed"}, "cells": []}
        )
    )
    with pytest.raises(InputError, match="the evaluation failed"):
        api.curves(failed)


def test_stats_command(receipts: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from modebench.cli import main

    receipt = str(receipts["walkthrough"])
    # A k above the saved draws is refused, not dropped silently.
    with pytest.raises(SystemExit) as refused:
        main(["stats", receipt, "--k", "1,2,99"])
    assert refused.value.code == 2
    assert "k = 99 exceeds the 4 saved draws per prompt" in capsys.readouterr().err
    assert main(["stats", receipt, "--k", "1,2", "--format", "json", "--seed", "4"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "modebench-stats-v2"
    assert document["source"]["receipt"] == receipt
    assert {r["k"] for r in document["rows"]} == {None, 1, 2}
    assert all(isinstance(r["estimate"], float) for r in document["rows"] if r["estimate"] is not None)
    assert main(["stats", receipt, "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| level | domain | draws | metric | k | estimate |")
    assert main(["stats", receipt]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == [
        "1",
        "countdown",
        "4",
        "accuracy",
        "-",
        "0.5",
        "0.5",
        "0.5",
        "1",
        "-",
    ]
    for bad in (["--k", "0"], ["--k", "x"], ["--format", "html"], ["--level", "1"], ["--seed", "-1"],
                ["--resamples", "1"]):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            main(["stats", receipt, *bad])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        if bad[0] in ("--level", "--seed"):  # the library's option names become the CLI's flags
            assert (
                err.endswith(f"error: {bad[0]} must be between 0 and 1\n")
                or "--seed must be a nonnegative" in err
            )


def test_the_python_engine_keeps_its_draw_sequence() -> None:
    """The pure-Python bootstrap resamples exactly as before for a seed (the RNG stream is part of
    reproducibility): the weights are still one ``choices`` draw per prompt, counted."""
    import math
    import random

    from modebench.stats.bootstrap import _python_statistics
    from modebench.stats.ratio import Column

    freqs = [5, 0, 3, 9, 1]
    columns = [Column(((1, 2), (0, 1), (3, 4), (1, 1), (0, 1)), (1, 1, 1, 1, 1)),
               Column(((2, 3), (1, 1), (0, 1), (5, 7), (1, 3)), (1, 0, 1, 2, 1))]  # fmt: skip
    settings = Bootstrap(seed=5, resamples=40)
    rng = random.Random(settings.seed)
    cumulative = [5, 5, 8, 17, 18]
    expected: list[list[float]] = [[] for _ in columns]
    for _ in range(settings.resamples):
        weights = [0] * len(freqs)
        for index in rng.choices(range(len(freqs)), cum_weights=cumulative, k=sum(freqs)):
            weights[index] += 1
        for column, series in zip(columns, expected):
            values = column.values()
            num = math.fsum(w * x for w, x, d in zip(weights, values, column.dens) if w and d)
            den = sum(w * d for w, d in zip(weights, column.dens))
            series.append(num / den if den else math.nan)
    assert _python_statistics(freqs, columns, settings) == expected


def test_help_states_each_default_once(capsys: pytest.CaptureFixture[str]) -> None:
    from modebench.cli import main

    for command in ("stats", "compare", "report"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "(default text) (default" not in text and text.count("(default: 1000)") == 1
        assert "bootstrap seed" in text and "(default: 0)" in text  # a default of 0 is still said
