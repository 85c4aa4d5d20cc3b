"""What the recorder, the shaping and the trainer callback need of a bank: :class:`RolloutBank`.

:class:`~modebench.rl.bank.ModeBank` implements it; so may any other bank (a Re:Max-style bank
storing token ids, say). The recorder and the callback use a bank only through these methods:

``offer(prompt_id, *, level, domain, answer, reference_sha256, text, status, canonical_key,
prompt=None, completion_ids=None, truncated=None) -> bool``
    one graded completion, offered after its whole group was gathered from every rank (so every
    rank offers the same rows in the same order). ``completion_ids`` is the token id list the
    trainer generated (TRL's ``completion_ids``; None when the trainer gave none) and
    ``truncated`` is True when the completion hit the generation budget without an end of
    sequence, False when it ended by itself, None when unknown (see ``docs/rl.md``). A bank
    admits what its own rule says (``ModeBank`` ignores both fields); True when the bank changed.
``seal() -> object``
    the rows offered since the previous seal were one batch (the return value is ignored): the
    recorder calls it once after offering each gathered reward call's training rows (one
    generation batch, every rank's rows), on every rank alike, so batches are the same on every
    rank whatever else reads the bank. A bank whose rule depends on batches (``ReMaxBank``: a
    mode's exemplar is the smallest candidate of the batch that found it) closes its batch
    there; ``ModeBank`` does nothing.
``modes(prompt_id) -> list[str]``
    the canonical keys banked for a prompt (empty when none): bank coverage and
    ``NoveltyBonus(scope="bank")`` read it.
``save(path) -> None``
    write the whole state (replay cursor included) as one file at ``path``, atomically (a
    temporary file beside it, then ``os.replace``), so a crash never leaves half a file.
``load(path) -> None``
    replace the state with the one saved at ``path``.
``identity() -> dict[str, Any]``
    JSON-able settings that must match for a saved state to be resumed into this bank
    (``ModeBank``: its schema and capacity). A resume compares the saved identity with the live
    bank's and refuses a mismatch with a clear error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["RolloutBank", "offer_rows"]


@runtime_checkable
class RolloutBank(Protocol):
    """A bank the recorder offers graded completions to and the callback checkpoints."""

    def offer(  # noqa: PLR0913 - one graded completion's fields, all keyword-only
        self,
        prompt_id: str,
        *,
        level: int,
        domain: str,
        answer: Any,
        reference_sha256: str,
        text: str,
        status: str,
        canonical_key: str | None,
        prompt: Any = None,
        completion_ids: Sequence[int] | None = None,
        truncated: bool | None = None,
    ) -> bool: ...

    def seal(self) -> object: ...

    def modes(self, prompt_id: str) -> list[str]: ...

    def save(self, path: Path) -> None: ...

    def load(self, path: Path) -> None: ...

    def identity(self) -> dict[str, Any]: ...


def offer_rows(bank: RolloutBank, rows: Iterable[Mapping[str, Any]]) -> int:
    """Offer ``rows`` (mappings with :meth:`RolloutBank.offer`'s fields and ``prompt_id``) to
    ``bank`` one by one; how many of them the bank took (each bank's ``offer_graded``)."""
    return sum(
        bank.offer(
            row["prompt_id"],
            level=row["level"],
            domain=row["domain"],
            answer=row["answer"],
            reference_sha256=row["reference_sha256"],
            text=row["text"],
            status=row["status"],
            canonical_key=row["canonical_key"],
            prompt=row.get("prompt"),
            completion_ids=row.get("completion_ids"),
            truncated=row.get("truncated"),
        )
        for row in rows
    )
