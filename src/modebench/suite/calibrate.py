"""Difficulty calibration from a pilot evaluation, and a stratified dev/test selection.

Each task's pass rate is its accuracy in the pilot (the share of its saved draws that verified).
Tasks are stratified easy (> 0.8), medium (0.4–0.8) and hard (< 0.4); tasks always or never solved
are flagged non-discriminating — they cannot separate two models. The dev/test firewall: the
selection splits each (cell, stratum) group with a recorded seed, so a team tunes on dev and
reports on test, and anyone can re-derive the split from the receipt and the seed.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from typing import Any

from modebench.identity import file_sha256
from modebench.intake.ids import natural_key, write_ids
from modebench.publish import atomic_output
from modebench.stats import chunks
from modebench.stats.journal import Entry, open_receipt
from modebench.validation import InputError, output_exists, unit_fraction

EASY_ABOVE = 0.8
HARD_BELOW = 0.4
SCHEMA = "modebench-calibration-v1"


def stratum(pass_rate: float) -> str:
    if pass_rate > EASY_ABOVE:
        return "easy"
    if pass_rate < HARD_BELOW:
        return "hard"
    return "medium"


def calibrate(
    receipt: str | os.PathLike[str],
    *,
    seed: int = 0,
    dev_fraction: float = 0.5,
    keep_non_discriminating: bool = False,
    output: str | os.PathLike[str] | None = None,
    dev_ids: str | os.PathLike[str] | None = None,
    test_ids: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Per-task strata, per-cell summaries and a seeded stratified dev/test selection.

    With ``output`` the calibration JSON is also published there; with ``dev_ids``/``test_ids`` the
    selection's id lists, one id per line in numeric order, for ``prepare``/``evaluate``'s ``ids``
    (each atomically, never overwriting: an existing destination fails before anything is written).
    """
    unit_fraction(dev_fraction, "dev_fraction")
    destinations = [path for path in (output, dev_ids, test_ids) if path is not None]
    for path in destinations:
        if os.path.lexists(path):
            raise output_exists(path)
    if len({os.path.abspath(path) for path in destinations}) < len(destinations):
        raise InputError("the calibration outputs must be different files")
    # One verified pass over the journal (stats/journal.py): the receipt's checks, in read_report's
    # order, come before the completed-status check, as when the receipt was read first.
    opened = open_receipt(receipt)
    completed = opened.completed
    tasks = [
        task
        for task in chunks.entries(opened, _task if completed else _nothing, light=True)
        if task is not None
    ]
    if not completed:
        raise InputError("calibration requires a completed receipt: scores of a failed run are unavailable")
    cells: dict[tuple[int, str, int], dict[str, Any]] = {}
    for task in tasks:
        cell = cells.setdefault(
            (task["level"], task["domain"], task["k"]),
            {
                "level": task["level"],
                "domain": task["domain"],
                "k": task["k"],
                "tasks": 0,
                "easy": 0,
                "medium": 0,
                "hard": 0,
                "non_discriminating": 0,
                "pass_rate_sum": 0.0,
            },
        )
        cell["tasks"] += 1
        cell[task["stratum"]] += 1
        cell["non_discriminating"] += not task["discriminating"]
        cell["pass_rate_sum"] += task["pass_rate"]
    summaries = []
    for key in sorted(cells):
        cell = cells[key]
        cell["mean_pass_rate"] = cell.pop("pass_rate_sum") / cell["tasks"]
        summaries.append(cell)
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "receipt_sha256": file_sha256(receipt),
        "thresholds": {"easy_above": EASY_ABOVE, "hard_below": HARD_BELOW},
        "cells": summaries,
        "tasks": tasks,
        "selection": select(
            tasks, seed=seed, dev_fraction=dev_fraction, keep_non_discriminating=keep_non_discriminating
        ),
    }
    if output is not None:
        with atomic_output(output) as handle:
            handle.write(json.dumps(result, indent=2) + "\n")
    selection = result["selection"]
    for part, destination in (("dev", dev_ids), ("test", test_ids)):
        if destination is not None:
            comment = (
                f"modebench calibrate: {part} prompts of receipt sha256 {result['receipt_sha256']}, "
                f"seed {seed}, dev fraction {format(dev_fraction, 'g')}"
            )
            write_ids(destination, selection[part], comment)
    return result


def _task(entry: Entry) -> dict[str, Any]:
    result = entry.result
    try:
        rate = result["accuracy"]
        return {
            "id": result["id"],
            "level": entry.level,
            "domain": entry.domain,
            "k": entry.draws,
            "pass_rate": rate,
            "stratum": stratum(rate),
            "discriminating": 0.0 < rate < 1.0,
        }
    except (KeyError, TypeError) as exc:  # raised after every check of the receipt (ResultError)
        raise InputError(f"prompt {result.get('id')!r}: invalid prompt result ({exc})") from None


def _nothing(entry: Entry) -> None:
    return None


def select(
    tasks: list[dict[str, Any]], *, seed: int, dev_fraction: float, keep_non_discriminating: bool
) -> dict[str, Any]:
    """Split every (level, domain, k, stratum) group into dev and test with ``Random(seed)``."""
    groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for task in tasks:
        if task["discriminating"] or keep_non_discriminating:
            groups[(task["level"], task["domain"], task["k"], task["stratum"])].append(task["id"])
    rng = random.Random(seed)
    dev: list[str] = []
    test: list[str] = []
    for key in sorted(groups):
        ids = sorted(groups[key])
        rng.shuffle(ids)
        cut = round(len(ids) * dev_fraction)
        dev.extend(ids[:cut])
        test.extend(ids[cut:])
    return {
        "seed": seed,
        "dev_fraction": dev_fraction,
        "non_discriminating_excluded": not keep_non_discriminating,
        "dev": sorted(dev, key=natural_key),  # numeric order: …/eval/2 before …/eval/10
        "test": sorted(test, key=natural_key),
    }


def render(calibration: dict[str, Any]) -> str:
    """Plain-text report: one line per cell."""
    lines = ["level domain k tasks easy medium hard non_discriminating mean_pass_rate"]
    for cell in calibration["cells"]:
        lines.append(
            f"{cell['level']} {cell['domain']} {cell['k']} {cell['tasks']} {cell['easy']} {cell['medium']} "
            f"{cell['hard']} {cell['non_discriminating']} {format(cell['mean_pass_rate'], 'g')}"
        )
    selection = calibration["selection"]
    lines.append(
        f"selection seed {selection['seed']}: {len(selection['dev'])} dev, {len(selection['test'])} test tasks"
    )
    return "\n".join(lines)


__all__ = ["calibrate", "render", "select", "stratum"]
