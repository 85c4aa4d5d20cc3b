"""One streaming pass over a receipt, keeping only what the HTML report shows.

A page must stay a few MB for a receipt of any size, so nothing here grows with the number of
prompts: per cell the status counts, the profile frequencies the statistics work on
(:func:`modebench.stats.profiles.summarize_prompt` reduces each prompt, exactly as ``stats`` does),
and a bounded handful of example prompts (most and fewest modes). A failed receipt keeps its
status counts and the first few unscorable attempts, never a score.
"""

from __future__ import annotations

import functools
import heapq
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modebench._words import counted
from modebench.diagnostics import UNSCORABLE
from modebench.receipt.records import Receipt
from modebench.stats import chunks
from modebench.stats.journal import Entry, open_receipt
from modebench.stats.profiles import CellKey, Profile, PromptSummary, entry_summary

__all__ = ["CellDigest", "Diagnostic", "DigestBuilder", "ExamplePrompt", "ModeExample", "RunDigest", "digest"]

#: Example prompts kept per cell and side (most modes, fewest modes).
EXAMPLES = 2
#: Unscorable attempts listed for a failed receipt.
DIAGNOSTICS = 20
#: Characters of graded text shown per example (the page stays small whatever the model wrote).
TEXT_LIMIT = 600
#: Modes listed per example prompt (the most frequent); the rest are counted ("n more").
MODES_SHOWN = 20
#: Characters of a canonical key or prompt id kept per example.
KEY_LIMIT = 300


@dataclass(frozen=True)
class ModeExample:
    key: str
    draws: int
    text: str  # one graded text that produced this canonical key (possibly shortened)


@dataclass(frozen=True)
class ExamplePrompt:
    id: str
    draws: int
    verified: int
    modes: tuple[ModeExample, ...]  # the MODES_SHOWN most frequent, most frequent first
    more: int = 0  # verified modes not listed
    more_draws: int = 0  # their verified draws


@dataclass(frozen=True)
class Diagnostic:
    id: str
    level: int
    domain: str
    status: str
    detail: str


@dataclass
class CellDigest:
    level: int
    domain: str
    draws: int
    prompts: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    profiles: Counter[Profile] = field(default_factory=Counter)
    # heaps of (order key, tie-break, example); bounded to EXAMPLES entries each
    _most: list[tuple[int, int, ExamplePrompt]] = field(default_factory=list)
    _fewest: list[tuple[int, int, ExamplePrompt]] = field(default_factory=list)

    @property
    def most_modes(self) -> list[ExamplePrompt]:
        return [e for _, _, e in sorted(self._most, key=lambda t: (-t[0], -t[1]))]

    @property
    def fewest_modes(self) -> list[ExamplePrompt]:
        return [e for _, _, e in sorted(self._fewest, key=lambda t: (-t[0], -t[1]))]


@dataclass
class RunDigest:
    path: str
    payload: dict[str, Any]
    cells: dict[CellKey, CellDigest]
    diagnostics: list[Diagnostic]
    label: str | None = None  # the name given on the command line (--label), if any

    @property
    def completed(self) -> bool:
        return bool(self.payload["evaluation"]["status"] == "completed")


def _shorten(text: Any, limit: int = TEXT_LIMIT) -> str:
    value = text if isinstance(text, str) else repr(text)
    return (
        value
        if len(value) <= limit
        else f"{value[:limit]}… [{counted(len(value) - limit, 'more character', 'more characters', grouped=True)}]"
    )


def _example(ident: str, attempts: list[Mapping[str, Any]], modes: Mapping[str, int]) -> ExamplePrompt:
    ordered = sorted(modes.items(), key=lambda item: (-item[1], item[0]))
    listed, rest = ordered[:MODES_SHOWN], ordered[MODES_SHOWN:]
    wanted = {key for key, _ in listed}
    texts: dict[str, str] = {}
    for attempt in attempts:
        key = attempt.get("canonical_key")
        if attempt.get("verified") is True and key in wanted and key not in texts:
            texts[key] = _shorten(attempt.get("graded_text"))
    found = tuple(ModeExample(_shorten(key, KEY_LIMIT), count, texts.get(key, "")) for key, count in listed)
    return ExamplePrompt(_shorten(ident, KEY_LIMIT), len(attempts), sum(modes.values()), found,
                         len(rest), sum(count for _, count in rest))  # fmt: skip


def _offer(heap: list[tuple[int, int, ExamplePrompt]], order: int, tie: int, build: Any) -> None:
    # Min-heap of the best EXAMPLES; the example itself is built only when it gets in.
    if len(heap) < EXAMPLES:
        heapq.heappush(heap, (order, tie, build()))
    elif (order, tie) > heap[0][:2]:
        heapq.heapreplace(heap, (order, tie, build()))


def _attempts(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [a for group in result.get("draws", []) for a in group.get("attempts", [])]


class DigestBuilder:
    """Accumulates a :class:`RunDigest` from a receipt's entries (and, when completed, summaries)."""

    def __init__(self, receipt: Receipt) -> None:
        self.receipt = receipt
        self.cells: dict[CellKey, CellDigest] = {}
        self.diagnostics: list[Diagnostic] = []

    def add(self, entry: Entry, summary: PromptSummary | None) -> None:
        level, domain, draws, result = entry.level, entry.domain, entry.draws, entry.result
        index = entry.index  # ties between examples go to the earlier prompt
        cell = self.cells.get((level, domain, draws))
        if cell is None:
            cell = self.cells[(level, domain, draws)] = CellDigest(level, domain, draws)
        cell.prompts += 1
        attempts = _attempts(result)
        cell.statuses.update(str(a.get("status")) for a in attempts)
        if summary is None:
            for attempt in attempts:
                if attempt.get("status") in UNSCORABLE and len(self.diagnostics) < DIAGNOSTICS:
                    self.diagnostics.append(
                        Diagnostic(str(result.get("id")), level, domain, str(attempt["status"]),
                                   str(attempt.get("detail") or ""))
                    )  # fmt: skip
            return
        cell.profiles[summary.profile] += 1
        count = len(summary.modes)
        build = functools.partial(_example, summary.id, attempts, summary.modes)
        # Most modes: ties go to the earlier prompt; fewest modes: among prompts with a verified mode.
        _offer(cell._most, count, -index, build)
        if count:
            _offer(cell._fewest, -count, -index, build)

    def observe(self, entry: Entry) -> PromptSummary | None:
        """Summarize (a completed run) and add one entry; the summary is returned for reuse."""
        summary = entry_summary(entry) if self.receipt.completed else None
        self.add(entry, summary)
        return summary

    def merge(self, part: Part) -> None:
        """Add the digest of the receipt's next consecutive prompts (``part`` of a later builder)."""
        cells, diagnostics = part
        for key, found in cells.items():
            mine = self.cells.get(key)
            if mine is None:
                self.cells[key] = found
                continue
            mine.prompts += found.prompts
            mine.statuses.update(found.statuses)
            mine.profiles.update(found.profiles)
            # Each heap keeps the EXAMPLES greatest (order, tie) offered, whatever the order of offers.
            for order, tie, example in found._most:
                _offer(mine._most, order, tie, lambda example=example: example)
            for order, tie, example in found._fewest:
                _offer(mine._fewest, order, tie, lambda example=example: example)
        self.diagnostics.extend(diagnostics[: max(0, DIAGNOSTICS - len(self.diagnostics))])

    def fresh(self) -> DigestBuilder:
        return DigestBuilder(self.receipt)

    def part(self) -> Part:
        return self.cells, self.diagnostics

    def fill(self) -> None:
        """Observe every entry of the receipt: one verified pass, split over processes where that
        pays (stats/chunks.py), each worker building the digest of its chunk."""
        observe = functools.partial(_observed, self.receipt.completed)
        for part in chunks.folded(self.receipt, observe, functools.partial(_part, self.receipt), light=True):
            self.merge(part)

    def build(self) -> RunDigest:
        return RunDigest(self.receipt.path, self.receipt.payload, self.cells, self.diagnostics)


Part = tuple[dict[CellKey, CellDigest], list[Diagnostic]]


def _observed(completed: bool, entry: Entry) -> tuple[Entry, PromptSummary | None]:
    # The summary is the pass's reduction, so its errors come after the receipt's checks.
    return entry, entry_summary(entry) if completed else None


def _part(receipt: Receipt, observed: Iterable[tuple[Entry, PromptSummary | None]]) -> Part:
    builder = DigestBuilder(receipt)
    for entry, summary in observed:
        builder.add(entry, summary)
    return builder.part()


def digest(path: str | os.PathLike[str]) -> RunDigest:
    """Read and validate a receipt, then reduce its journal to what the report shows (one pass)."""
    builder = DigestBuilder(open_receipt(path))
    builder.fill()
    return builder.build()
