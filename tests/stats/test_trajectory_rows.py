"""Trajectory rows: the first step's baseline beside retention, bands, and refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from modebench.stats.trajectory import trajectory_table
from modebench.validation import InputError
from tests.stats.conftest import evaluate_records, walkthrough_records


def test_a_step_without_common_prompts_is_refused(receipts: dict[str, Path], tmp_path: Path) -> None:
    renamed = [{**r, "id": f"other/{r['id']}"} for r in walkthrough_records()]
    other = evaluate_records(tmp_path, "renamed", renamed)
    with pytest.raises(
        InputError, match=r"step 1 \(.*renamed.json\) has no prompt in common with the first step"
    ):
        trajectory_table([(0, receipts["walkthrough"]), (1, other)])


def test_retention_rows_carry_the_baseline_and_intervals(receipts: dict[str, Path]) -> None:
    table = trajectory_table([(0, receipts["walkthrough"]), (5, receipts["collapsed"])])
    later = {(r["metric"], r["k"]): r for r in table.rows if r["step"] == 5 and r["domain"] == "countdown"}
    first = {(r["metric"], r["k"]): r for r in table.rows if r["step"] == 0 and r["domain"] == "countdown"}
    # step 0: its own split-half baseline (stats rows), no retention against itself
    assert ("retention_baseline", 2) in first and not any(m == "retention_share" for m, _ in first)
    # later steps: retention at the common draws and at the baseline's draws, beside the baseline
    assert later[("retention_share", 4)]["estimate"] == 0.5
    baseline = later[("first_step_baseline", 2)]
    assert baseline["estimate"] == first[("retention_baseline", 2)]["estimate"]
    gap = later[("retention_vs_baseline", 2)]
    assert gap["estimate"] == pytest.approx(later[("retention_share", 2)]["estimate"] - baseline["estimate"])
    # one prompt per cell: no normal test; the exact sign-flip test of one prompt (one-sided "below zero")
    assert gap["prompts"] == 1 and gap["p_value"] == (0.5 if gap["estimate"] < 0 else 1.0)
    # every estimate of the stats rows has its bootstrap band
    assert all(r["ci_low"] is not None for r in table.rows if r["metric"] == "accuracy")
    assert all(r["reportable"] is not None for r in table.rows if r["metric"] == "pcmd")
