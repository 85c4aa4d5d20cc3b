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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from modebench.diagnostics import STATUSES, UNSCORABLE, VerifierExecutionError
from modebench.metrics import verified_mode_counts
from modebench.reporting import iter_cell_results, read_report
from modebench.validation import InputError

__all__ = ["CellKey", "Profile", "PromptSummary", "cell_profiles", "iter_summaries", "summarize_prompt"]

_WRONG = frozenset(STATUSES) - UNSCORABLE - {"correct"}  # scorable statuses of unverified attempts
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


def _fast_counts(attempts: list[Any]) -> dict[str, int] | None:
    """Mode counts of well-formed attempts, or None to let ``verified_mode_counts`` judge them.

    The journal's common case, checked with plain dict operations; anything unusual goes to the
    metrics module's own validation, so errors are exactly its errors.
    """
    modes: dict[str, int] = {}
    for attempt in attempts:
        if type(attempt) is not dict:
            return None
        status = attempt.get("status")
        if status == "correct" and attempt.get("verified") is True:
            key = attempt.get("canonical_key")
            if type(key) is not str or not key:
                return None
            modes[key] = modes.get(key, 0) + 1
        elif status not in _WRONG or attempt.get("verified") is not False:
            return None
    return modes


def summarize_prompt(cell: CellKey, result: Mapping[str, Any]) -> PromptSummary:
    """Reduce one per-prompt result (all its groups pooled) to a summary."""
    ident = result.get("id") if isinstance(result, Mapping) else None
    try:
        draws = result["draws"]
        attempts = [attempt for group in draws for attempt in group["attempts"]]
        fast = _fast_counts(attempts)
        modes = fast if fast is not None else verified_mode_counts(attempts)
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


def _check_completed(path: str | os.PathLike[str]) -> int:
    payload = read_report(path, verify_results=False)
    if payload["evaluation"]["status"] != "completed":
        raise InputError(f"{os.fspath(path)}: the evaluation failed, so it has no statistics")
    records = payload.get("prompt_results", {}).get("records") if payload["schema"].endswith("v4") else None
    return int(records) if records is not None else -1


def iter_summaries(path: str | os.PathLike[str]) -> Iterator[PromptSummary]:
    """Summaries of every prompt of a completed receipt (v4: its verified journal), streamed."""
    expected = _check_completed(path)
    seen = 0
    for level, domain, k, result in iter_cell_results(path):
        seen += 1
        yield summarize_prompt((level, domain, k), result)
    if expected >= 0 and seen != expected:
        raise InputError(f"{os.fspath(path)}: detailed-result count mismatch")


def cell_profiles(path: str | os.PathLike[str]) -> dict[CellKey, Counter[Profile]]:
    """Profile frequencies per cell, in receipt order of first appearance."""
    cells: dict[CellKey, Counter[Profile]] = {}
    for summary in iter_summaries(path):
        cells.setdefault(summary.cell, Counter())[summary.profile] += 1
    return cells
