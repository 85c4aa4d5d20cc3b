"""Cell tallies: status counts and per-cell accumulators of per-prompt results, and the v4 cells.

The evaluator tallies results as it grades them, ``merge`` as it joins shards, and the reader
recomputes a receipt's numbers from its journal: all three with these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from modebench import metrics
from modebench.diagnostics import UNSCORABLE
from modebench.failures import policy as unscorable
from modebench.receipt.notes import protocol_notes
from modebench.receipt.schema import SCORING_POLICY

#: A cell: ``(level, domain, k)``.
CellKey = tuple[int, str, int]
Cells = dict[CellKey, metrics.CellAccumulator]

__all__ = [
    "CellKey",
    "Cells",
    "StatusTally",
    "evaluation_block",
    "tally_counted",
    "tally_result",
    "tally_results",
    "v4_cells",
]


class StatusTally:
    """Attempt statuses over a run: the receipt's ``status_counts`` and whether every attempt scored.

    ``policy`` is the run's policy for unscorable attempts (``modebench.failures.policy``);
    ``counted`` tallies the attempts it scored as incorrect, by their original status.
    """

    def __init__(self, policy: str = unscorable.FAIL_RUN) -> None:
        self.counts: dict[str, int] = {}
        self.policy = policy
        self.counted: dict[str, int] = {}

    def add(self, result: Mapping[str, Any]) -> None:
        for attempt in result["draws"][0]["attempts"]:
            self.counts[attempt["status"]] = self.counts.get(attempt["status"], 0) + 1
            original = attempt.get(unscorable.ORIGINAL_STATUS)
            if original is not None:
                self.counted[original] = self.counted.get(original, 0) + 1

    @property
    def healthy(self) -> bool:
        """No attempt was unscorable (an evaluator failure suppresses every aggregate)."""
        return not any(status in UNSCORABLE for status in self.counts)

    def block(self, threshold: int) -> dict[str, Any]:
        block = evaluation_block("completed" if self.healthy else "failed", self.counts, threshold)
        block.update(unscorable.evaluation_extras(self.policy, self.counted))
        return block


def evaluation_block(status: str, status_counts: dict[str, int], threshold: int) -> dict[str, Any]:
    return {
        "status": status,
        "status_counts": dict(sorted(status_counts.items())),
        "scoring_policy": SCORING_POLICY,
        "aggregation": metrics.POOLED,
        "groups_per_prompt": 1,
        "prompt_weighting": "equal",
        "min_defined_prompts": threshold,
        "pass_at_k": "empirical_saved_group",
        "prompt_hash_semantics": "expected_registered_messages; does not attest generation",
    }


def tally_results(
    entries: Iterable[tuple[int, str, int, dict[str, Any]]],
    policy: str = unscorable.FAIL_RUN,
) -> tuple[StatusTally, Cells]:
    """Status tally and cell accumulators of ``(level, domain, k, prompt result)`` in input order."""
    tally = StatusTally(policy)
    cells: Cells = {}
    for level, domain, k, result in entries:
        tally_result(tally, cells, (level, domain, k), result)
    return tally, cells


def tally_result(tally: StatusTally, cells: Cells, cell: CellKey, result: Mapping[str, Any]) -> None:
    """Add one per-prompt result of ``cell`` (level, domain, k) to a running tally."""
    tally.add(result)
    accumulator = cells.get(cell)
    if accumulator is None:
        accumulator = cells[cell] = metrics.CellAccumulator()
    if result["accuracy"] is not None:
        accumulator.add(result)
    else:
        accumulator.prompts += 1


def tally_counted(
    tally: StatusTally,
    cells: Cells,
    cell: CellKey,
    statuses: tuple[Mapping[str, int], Mapping[str, int]],
    metrics_of: tuple[Any, Any, Any, Any],
) -> None:
    """Add one per-prompt result already reduced to what the tally reads (``isolation.assemble``):
    its attempt ``statuses`` (counts, and counted-as-incorrect originals) and its
    ``(accuracy, pass_at_k, distinct_at_k, pcmd)``; the same sums as :func:`tally_result`."""
    counts, counted = statuses
    for status, number in counts.items():
        tally.counts[status] = tally.counts.get(status, 0) + number
    for status, number in counted.items():
        tally.counted[status] = tally.counted.get(status, 0) + number
    accumulator = cells.get(cell)
    if accumulator is None:
        accumulator = cells[cell] = metrics.CellAccumulator()
    accuracy, passed, distinct, pcmd = metrics_of
    if accuracy is None:
        accumulator.prompts += 1
        return
    for value in (accuracy, passed):
        Fraction(value)  # a value the rational sum refuses is refused now, as in CellAccumulator.add
    accumulator.add_counted(
        1, {accuracy: 1}, {passed: 1}, distinct, 0 if pcmd is None else 1, {} if pcmd is None else {pcmd: 1}
    )


def v4_cells(cells: Cells, threshold: int, healthy: bool) -> list[dict[str, Any]]:
    """The cells of a v4 receipt, in receipt order."""
    out = []
    for (level, domain, k), accumulator in sorted(cells.items()):
        cell = {"level": level, "domain": domain, "k": k, **accumulator.summary(threshold, healthy)}
        cell["protocol_notes"] = protocol_notes(level, domain)
        out.append(cell)
    return out
