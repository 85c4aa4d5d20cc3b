"""Trusting a checkpoint: verify the ledger, its plug-ins and its pending prompts, and repair the journal.

The ledger is authoritative; the journal is a second copy of the committed results. Everything an
earlier invocation wrote is verified before this one builds on it, and anything edited in one copy
only is refused by its sequence number.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench import domains
from modebench.backends import Grader
from modebench.diagnostics import VerifierExecutionError
from modebench.engine import ledger as _ledger
from modebench.engine.preflight import PLUGINS_KEY, PREFLIGHT_KEYS
from modebench.engine.spec import RunSpec
from modebench.identity import canonical, digest_json, sha256_text
from modebench.intake.preflight import Preflight
from modebench.intake.shards import Shard
from modebench.publish import atomic_output
from modebench.receipt.writer import journal_line
from modebench.validation import InputError

__all__ = ["check_ledger", "check_plugins", "graded_rows", "plugins_of", "rederive_pending", "repair_journal"]


def check_ledger(ledger: _ledger.Ledger, selection: Shard) -> int:
    """Verify the checkpoint before trusting it; return the number of prompts.

    Committed results are verified against the digest chain of their journal lines, so an
    edited result is refused by its sequence number even when its other hashes were recomputed.
    """
    if ledger.db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        raise InputError("checkpoint integrity check failed")
    meta = {key: ledger.get(key) for key in PREFLIGHT_KEYS}
    if ledger.has(PLUGINS_KEY):
        meta[PLUGINS_KEY] = ledger.get(PLUGINS_KEY)
    if digest_json(meta) != ledger.get("preflight_sha256"):
        raise InputError("checkpoint preflight metadata identity mismatch")
    records = hashlib.sha256(b"[")
    position = 0
    pending_seen = False
    link = _ledger.CHAIN_START
    for seq, level, domain, k, prepared_json, prepared_sha, result_json, stored_link in ledger.rows(
        "level, domain, k, prepared, prepared_sha, result, chain"
    ):
        if seq != position or prepared_sha != _ledger.text_sha(prepared_json):
            raise InputError("checkpoint prepared-record identity mismatch")
        prepared = json.loads(prepared_json)
        if (level, domain, k) != (prepared["level"], prepared["domain"], len(prepared["raw"]["responses"])):
            raise InputError("checkpoint cell identity mismatch")
        raw_text = canonical(prepared["raw"])
        if sha256_text(raw_text) != prepared["record_sha256"]:
            raise InputError("checkpoint input snapshot mismatch")
        records.update((b"," if position else b"") + raw_text.encode("utf-8"))
        if result_json is None:
            if stored_link is not None:
                raise InputError("checkpoint incomplete result identity")
            pending_seen = pending_seen or selection.contains(seq)
        elif pending_seen or not selection.contains(seq):
            raise InputError("checkpoint result identity or ordering mismatch")
        else:
            link = _ledger.chain_link(link, journal_line(seq, prepared, result_json))
            if stored_link != link:
                raise InputError(
                    f"checkpoint result identity or ordering mismatch: sequence {seq} does not match its digest chain"
                )
        position += 1
    records.update(b"]")
    if position != meta["count"] or records.hexdigest() != meta["records_sha256"]:
        raise InputError("checkpoint input record digest mismatch")
    return position


def plugins_of(ledger: _ledger.Ledger) -> list[str]:
    """The third-party domains this checkpoint graded (recorded at the end of preflight)."""
    return sorted(ledger.get(PLUGINS_KEY)) if ledger.has(PLUGINS_KEY) else []


def check_plugins(ledger: _ledger.Ledger) -> None:
    """A resumed run must grade with the very plug-ins its first invocation validated with."""
    if ledger.has(PLUGINS_KEY) and domains.origins(plugins_of(ledger)) != ledger.get(PLUGINS_KEY):
        raise InputError("resume identity mismatch: input, configuration, dataset, or evaluator changed")


class _NoDuplicates:
    """The seen-set of a re-derivation: duplicates were refused when the records were first read."""

    def __contains__(self, key: object) -> bool:
        return False

    def add(self, key: object) -> None:
        pass


def rederive_pending(
    ledger: _ledger.Ledger, spec: RunSpec, frozen: Any, grader: Grader, selection: Shard
) -> None:
    """Re-derive every prompt still to grade from its raw record and compare with the stored one.

    What grading reads (parsed reference, binding) must follow from the raw record, whatever the
    checkpoint says; a prepared record that does not is refused by its sequence number.
    """
    preflight = Preflight(
        spec.options,
        frozen,
        validate=grader.reference_check,
        seen=_NoDuplicates(),
        prompt_ids=spec.prompt_ids,
    )
    preflight.run, preflight.run_digest = ledger.get("run"), ledger.get("run_sha256")
    for seq, prepared_json in ledger.rows("prepared", f"result IS NULL AND {selection.where()}"):
        stored = json.loads(prepared_json)
        try:
            derived = preflight.bind(preflight.accept(stored["raw"], "checkpoint"))
        except (InputError, VerifierExecutionError, KeyError, TypeError):
            derived = None
        if derived is not None:
            derived["label"] = stored.get("label")  # where the record was read: messages only
            derived["record_sha256"] = sha256_text(canonical(stored["raw"]))
        if derived is None or canonical(derived) != prepared_json:
            raise InputError(
                f"checkpoint prepared-record identity mismatch: sequence {seq} does not follow from its raw record"
            )


def repair_journal(ledger: _ledger.Ledger, journal: Path) -> tuple[Any, bytes]:
    """Rewrite the journal from committed ledger rows (the ledger is authoritative).

    The ledger check has already proved every committed result (its digest chain), so whatever
    the old journal holds — a cut tail after a kill, a deleted file, an edited line — is replaced
    by the lines rebuilt from the ledger, as ``docs/evaluation.md`` specifies for every invocation.
    Returns the running journal digest and the last chain link.
    """
    _ledger.sweep_temporaries(journal)  # a rewrite cut short by a kill
    digest = hashlib.sha256()
    link = _ledger.CHAIN_START
    with atomic_output(journal, replace=True) as handle:
        for seq, prepared_json, result_json in ledger.rows("prepared, result", "result IS NOT NULL"):
            line = journal_line(seq, json.loads(prepared_json), result_json)
            data = line.encode("utf-8")
            handle.write(line)
            digest.update(data)
            link = _ledger.chain_link(link, line)
    return digest, link


def graded_rows(ledger: _ledger.Ledger) -> Iterator[tuple[int, str, int, dict[str, Any]]]:
    """``(level, domain, k, result)`` of every committed result, in input order."""
    for _seq, level, domain, k, result_json in ledger.rows("level, domain, k, result", "result IS NOT NULL"):
        yield level, domain, k, json.loads(result_json)
