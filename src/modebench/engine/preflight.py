"""Preflight of a file evaluation: every record validated, bound and stored in the ledger.

One pass over the input lines. A line a worker prepared (``modebench.isolation.prepare``) is
stored as it came back; any other line takes the in-process path (``Preflight.accept`` and
``bind``). Phase C's first error (prompt binding) is raised only after Phases A and B passed
for the whole input — the same error, in the same order, as three separate passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modebench import domains
from modebench.backends import Grader
from modebench.engine import ledger as _ledger
from modebench.engine.spec import ProgressCallback, RunSpec
from modebench.identity import canonical, digest_json, sha256_text
from modebench.intake.lines import decoded, raw_lines, record_id
from modebench.intake.preflight import Preflight, prepared_text
from modebench.intake.shards import WHOLE, Shard
from modebench.isolation.prepare import assumed_run_digest
from modebench.validation import InputError

#: Ledger info key of the origins of the third-party plug-ins a run uses (absent for built-ins).
PLUGINS_KEY = "plugins"
#: Ledger info written at the end of preflight and bound by ``preflight_sha256``.
PREFLIGHT_KEYS = ("records_sha256", "run", "generation_metadata_status", "run_sha256", "dataset", "count")

#: Where preflight hands each stored prompt: ``offer(seq, domain, prepared_json)``.
Offer = Callable[[int, str, str], None]

__all__ = ["PLUGINS_KEY", "Offer", "PREFLIGHT_KEYS", "domains_of", "event", "run_preflight"]


def event(progress: ProgressCallback | None, phase: str, done: int, total: int | None) -> None:
    if progress is not None:
        progress({"phase": phase, "completed_prompts": done, "total_prompts": total})


class _Store:
    """The records of one preflight on their way into the ledger: sequence, digest, first binding error."""

    def __init__(
        self,
        ledger: _ledger.Ledger,
        preflight: Preflight,
        progress: ProgressCallback | None,
        offer: Offer | None,
        selection: Shard,
    ) -> None:
        self.ledger = ledger
        self.offer = offer
        self.selection = selection
        self.preflight = preflight
        self.progress = progress
        self.seq = 0
        self.records_digest = hashlib.sha256(b"[")
        self.binding_error: InputError | None = None
        self.wanted = preflight.prompt_ids
        self.found: set[str] = set()

    def record(self, number: int, record: Any) -> None:
        """Validate, bind and store one record in process (the reference path)."""
        if self.wanted is not None:
            ident = record_id(record)
            if ident is not None and ident not in self.wanted:
                return  # not selected: neither validated nor graded
            if ident is not None:
                self.found.add(ident)
        try:
            prepared = self.preflight.accept(record, f"line {number}")
            raw_text = canonical(record)
        except RecursionError:
            raise InputError(f"line {number}: record is nested too deeply") from None
        self._digest(raw_text)
        try:
            bound = self.preflight.bind(prepared)
        except InputError as exc:
            self.binding_error = self.binding_error or exc  # the run fails with it: nothing to store
        else:
            bound["record_sha256"] = sha256_text(raw_text)
            plugin_origin = domains.origin(bound["domain"])
            if plugin_origin is not None:  # a third-party domain: its journal lines name the plug-in
                bound["plugin"] = plugin_origin
            text = prepared_text(bound, raw_text)
            self.ledger.insert(self.seq, bound["level"], bound["domain"], len(record["responses"]), text)
            self._offer(bound["domain"], text)
        self._stored()

    def prepared(self, number: int, reply: Any) -> bool:
        """Store a line a worker prepared; False if it must take the in-process path after all."""
        level, domain, rid, k, text, start, end = reply
        try:
            claimed = self.preflight.accept_prepared((level, domain, rid))
        except UnicodeEncodeError as exc:  # a lone surrogate in the id: 0.4.0's message, with its line
            raise InputError(f"line {number}, prompt {rid!r}: {exc}") from None
        if not claimed:
            return False  # a duplicate: the in-process path reports it
        self._digest(text[start:end])
        self.ledger.insert(self.seq, level, domain, k, text)
        self._offer(domain, text)
        self._stored()
        return True

    def _offer(self, domain: str, text: str) -> None:
        """Hand a stored prompt of this shard to grading while preflight goes on."""
        if self.offer is not None and self.selection.contains(self.seq):
            self.offer(self.seq, domain, text)

    def _digest(self, raw_text: str) -> None:
        self.records_digest.update((b"," if self.seq else b"") + raw_text.encode("utf-8"))

    def _stored(self) -> None:
        self.seq += 1
        if self.seq % 100 == 0:
            self.ledger.commit()
            event(self.progress, "validating", self.seq, None)


def run_preflight(
    ledger: _ledger.Ledger,
    spec: RunSpec,
    source: Path,
    frozen: Any,
    input_sha: str,
    grader: Grader,
    offer: Offer | None = None,
) -> None:
    """Validate every record of ``source`` into ``ledger`` and record the preflight metadata.

    ``offer(seq, domain, prepared_json)``, if given, receives each stored prompt of the run's shard as
    soon as it is stored, in input order, so that grading can start before preflight ends.
    """
    progress = spec.execution.progress
    event(progress, "validating", 0, None)
    ledger.reset_prompts()
    # References are validated on the pool's first worker: no extra process to start.
    preflight = Preflight(
        spec.options,
        frozen,
        validate=grader.reference_check,
        seen=_ledger.SeenSet(ledger.db),
        prompt_ids=spec.prompt_ids,
    )
    store = _Store(ledger, preflight, progress, offer, spec.shard or WHOLE)
    input_digest = hashlib.sha256()
    ledger.staging = True  # progress commits pack their records on the ledger's helper thread
    lines = raw_lines(source, input_digest)
    if frozen is None and store.wanted is None:
        # Workers preflight the lines; what needs the whole input's state stays here, in input
        # order. A line a worker did not prepare, or prepared under a run this preflight no
        # longer has, takes the in-process path.
        assumed = assumed_run_digest(spec.run)
        for number, line, reply in grader.prepared_lines(spec.run, lines):
            if reply is None or preflight.run_digest != assumed or not store.prepared(number, reply):
                store.record(number, decoded(number, line))
    else:
        for number, line in lines:
            store.record(number, decoded(number, line))
    ledger.staging = False
    store.records_digest.update(b"]")
    if input_digest.hexdigest() != input_sha:
        raise InputError("input changed while validation was running; use a fresh checkpoint")
    if store.wanted is not None:
        store.wanted.require_within(store.found, "the input")
    preflight.finish()
    if store.binding_error is not None:
        raise store.binding_error
    meta = {
        "records_sha256": store.records_digest.hexdigest(),
        **preflight.run_block(),
        "dataset": preflight.dataset_block(),
        "count": store.seq,
    }
    used = domains.origins(domains_of(ledger))
    if used:  # kept out of built-in-only checkpoints, so theirs stay as they were
        meta[PLUGINS_KEY] = used
    for key, value in meta.items():
        ledger.put(key, value)
    ledger.put("preflight_sha256", digest_json(meta))
    ledger.put("phase", "grading")
    ledger.commit()
    event(progress, "validated", store.seq, store.seq)


def domains_of(ledger: _ledger.Ledger) -> list[str]:
    ledger.flush()
    return [row[0] for row in ledger.db.execute("SELECT DISTINCT domain FROM prompts")]
