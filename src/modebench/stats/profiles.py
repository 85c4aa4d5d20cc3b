"""Per-prompt summaries read from a receipt: what every statistic here is a function of.

A prompt reduces to its *profile*: ``n`` saved draws, ``c`` verified, the verified mode counts
(sorted, without names) and whether the first draw was verified. Every per-prompt metric of
``docs/statistics.md`` is a function of the profile, so a cell of 100k prompts collapses to the
few dozen profiles that occur and their frequencies; means, standard errors and the bootstrap
then work on those frequencies (resampling prompts is a multinomial draw over profiles).

Mode *names* are kept only where a comparison needs them (retention), one prompt at a time.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from modebench.diagnostics import VerifierExecutionError
from modebench.metrics import verified_mode_counts
from modebench.receipt.records import Receipt
from modebench.stats import chunks
from modebench.stats.journal import Entry, fast_modes, open_receipt
from modebench.validation import InputError

__all__ = [
    "CellKey",
    "Profile",
    "PromptSummary",
    "cell_profiles",
    "completed_receipt",
    "entry_summary",
    "summarize_prompt",
]

CellKey = tuple[int, str, int]  # (level, domain, draws per prompt as recorded in the receipt)


class Profile(NamedTuple):
    """Everything the per-prompt metrics depend on (a tuple: cheap to hash as a Counter key)."""

    n: int
    c: int
    counts: tuple[int, ...]  # verified draws per mode, largest first
    first: bool  # the first saved draw is verified


@dataclass(frozen=True)
class PromptSummary:
    id: str
    reference_sha256: str
    cell: CellKey
    profile: Profile
    modes: Mapping[str, int]  # verified draws per canonical key

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by field (a parallel pass sends every summary to the parent, stats/chunks.py):
        # a frozen dataclass's default pickling costs five times as much.
        return PromptSummary, (self.id, self.reference_sha256, self.cell, self.profile, self.modes)


def summarize_prompt(
    cell: CellKey, result: Mapping[str, Any], known: Mapping[str, int] | None = None
) -> PromptSummary:
    """Reduce one per-prompt result (all its groups pooled) to a summary.

    ``known``: the result's verified mode counts when a reader already checked them
    (:func:`modebench.stats.journal.fast_modes`); otherwise the metrics module checks every attempt.
    """
    ident = result.get("id") if isinstance(result, Mapping) else None
    try:
        draws = result["draws"]
        attempts = [attempt for group in draws for attempt in group["attempts"]]
        if known is None:
            known = fast_modes(result)
        modes = known if known is not None else verified_mode_counts(attempts)
        if not attempts:
            raise ValueError("prompt has no attempts")
        first = bool(attempts[0]["verified"])
    except VerifierExecutionError:
        raise InputError(
            f"prompt {ident!r} has an unscorable attempt: no statistics for a failed run"
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"prompt {ident!r}: invalid prompt result ({exc})") from None
    if not isinstance(ident, str) or not isinstance(result.get("reference_sha256"), str):
        raise InputError(f"prompt {ident!r}: prompt result lacks an id or reference hash")
    counts = tuple(sorted(modes.values(), reverse=True))
    profile = Profile(len(attempts), sum(counts), counts, first)
    return PromptSummary(ident, result["reference_sha256"], cell, profile, dict(modes))


def entry_summary(entry: Entry) -> PromptSummary:
    """The summary of one journal entry (its mode counts as the reader checked them)."""
    modes, result = entry.modes, entry.result
    if modes is not None:
        # fast_modes checked the shape (groups of attempts, boolean ``verified``): only the
        # counts are left to take, as summarize_prompt takes them.
        ident, reference = result.get("id"), result.get("reference_sha256")
        if type(ident) is str and type(reference) is str:
            attempts = 0
            first = None
            for group in result["draws"]:
                found = group["attempts"]
                if found and first is None:
                    first = found[0]["verified"]
                attempts += len(found)
            if first is not None:
                counts = tuple(sorted(modes.values(), reverse=True))
                cell = (entry.level, entry.domain, entry.draws)
                return PromptSummary(ident, reference, cell, _profile(attempts, counts, first), modes)
    return summarize_prompt((entry.level, entry.domain, entry.draws), result, modes)


_PROFILES: dict[tuple[int, tuple[int, ...], bool], Profile] = {}


def _profile(n: int, counts: tuple[int, ...], first: bool) -> Profile:
    """One shared Profile per distinct value (few per receipt; bounded all the same)."""
    found = _PROFILES.get((n, counts, first))
    if found is None:
        if len(_PROFILES) > 65536:
            _PROFILES.clear()
        found = _PROFILES[(n, counts, first)] = Profile(n, sum(counts), counts, first)
    return found


def completed_receipt(path: str | os.PathLike[str]) -> Receipt:
    """A receipt whose evaluation completed (a failed one has no statistics)."""
    receipt = open_receipt(path)
    if not receipt.completed:
        raise InputError(f"{os.fspath(path)}: the evaluation failed, so it has no statistics")
    return receipt


def cell_profiles(path: str | os.PathLike[str]) -> dict[CellKey, Counter[Profile]]:
    """Profile frequencies per cell, in receipt order of first appearance.

    Counted where the journal is read (each worker of a parallel pass counts its chunk), so no
    per-prompt summary leaves the reading process; the counts of consecutive chunks add up.
    """
    cells: dict[CellKey, Counter[Profile]] = {}
    for part in chunks.folded(completed_receipt(path), entry_summary, _count_profiles, light=True):
        for cell, counts in part.items():
            cells.setdefault(cell, Counter()).update(counts)
    return cells


def _count_profiles(summaries: Iterable[PromptSummary]) -> dict[CellKey, Counter[Profile]]:
    cells: dict[CellKey, Counter[Profile]] = {}
    for summary in summaries:
        cells.setdefault(summary.cell, Counter())[summary.profile] += 1
    return cells
