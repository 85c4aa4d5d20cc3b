"""The draw ledger: every finished draw, appended durably, keyed by (prompt id, draw index).

SQLite in WAL mode with ``synchronous=NORMAL``. Finished draws are committed in groups: at the
latest ``FLUSH_SECONDS`` after the first draw of a group arrived (the sending loop calls
:meth:`DrawLedger.tick` that often even when nothing arrives), or once ``FLUSH_DRAWS`` are waiting,
and always on close. A commit survives the process being killed at any moment; a kill loses at
most the uncommitted group (a power cut also the last commits), and those draws are simply sent
again on resumption, with the same seeds. One transaction per request cost a fifth of the
per-draw CPU of modebench's own work at high rates (``docs/generate.md``). The ledger carries the
digest of the run identity it was written for and refuses to be resumed under any other.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from modebench.validation import InputError

__all__ = ["Draw", "DrawLedger", "LEDGER_SCHEMA"]

LEDGER_SCHEMA = "modebench-draw-ledger-v1"
#: A group of finished draws is committed at the latest this many seconds after its first draw...
FLUSH_SECONDS = 0.05
#: ... or as soon as this many draws wait.
FLUSH_DRAWS = 256

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS draws (
    prompt TEXT NOT NULL,
    draw INTEGER NOT NULL,
    seed INTEGER,
    ok INTEGER NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    model TEXT,
    fingerprint TEXT,
    retries INTEGER,
    error TEXT,
    PRIMARY KEY (prompt, draw)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Draw:
    """One draw's outcome. A failed draw has ``ok=False``, ``text=""`` and its ``error``."""

    prompt: str
    draw: int
    seed: int | None
    ok: bool
    text: str
    finish_reason: str | None = None
    #: Token usage of the request; with several choices per request it sits on the first draw.
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = None
    fingerprint: str | None = None
    retries: int | None = None
    error: str | None = None

    def sidecar(self) -> dict[str, Any]:
        """The draw's line in the ``.draws.jsonl`` sidecar (``docs/generate.md``)."""
        return {
            "id": self.prompt,
            "draw": self.draw,
            "status": "ok" if self.ok else "failed",
            "seed": self.seed,
            "finish_reason": self.finish_reason,
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens},
            "model": self.model,
            "system_fingerprint": self.fingerprint,
            "retries": self.retries,
            "error": self.error,
        }


_COLUMNS = (
    "prompt, draw, seed, ok, text, finish_reason, prompt_tokens, completion_tokens, model, fingerprint, "
    "retries, error"
)


class DrawLedger:
    """An open ledger; use as a context manager."""

    def __init__(self, path: str | os.PathLike[str], identity: dict[str, Any]) -> None:
        self.path = os.fspath(path)
        self._pending: list[tuple[Any, ...]] = []
        self._since = 0.0
        expected = json.dumps(identity, sort_keys=True, separators=(",", ":"))
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_TABLES)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"unreadable draw ledger: {self.path}: {exc}") from None
        if row is None:
            self._db.execute(
                "INSERT INTO meta VALUES ('schema', ?), ('identity', ?)", (LEDGER_SCHEMA, expected)
            )
        elif row[0] != expected:
            self._db.close()
            raise InputError(
                f"draw ledger {self.path} was written for other generation settings or prompts; "
                "use the same settings to resume, or remove it to start over"
            )

    def __enter__(self) -> DrawLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.flush()  # Ctrl-C and errors keep every draw that arrived
        finally:
            self._db.close()

    def record(self, draws: Iterable[Draw]) -> None:
        """Add the draws of one request to the group committed next (see the module docstring)."""
        if not self._pending:
            self._since = time.monotonic()
        self._pending.extend(
            (
                d.prompt, d.draw, d.seed, int(d.ok), d.text, d.finish_reason, d.prompt_tokens,
                d.completion_tokens, d.model, d.fingerprint, d.retries, d.error,
            )
            for d in draws
        )  # fmt: skip
        if len(self._pending) >= FLUSH_DRAWS:
            self.flush()
        else:
            self.tick()

    def tick(self) -> None:
        """Commit the waiting group if its first draw arrived ``FLUSH_SECONDS`` ago."""
        if self._pending and time.monotonic() - self._since >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Commit every waiting draw in one transaction."""
        if not self._pending:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                f"INSERT OR REPLACE INTO draws ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", self._pending
            )
        self._pending = []

    def done(self) -> set[tuple[str, int]]:
        self.flush()
        return {(p, d) for p, d in self._db.execute("SELECT prompt, draw FROM draws")}

    def forget_failed(self) -> int:
        """Drop failed draws so they are sent again; returns how many."""
        self.flush()
        with self._db:
            self._db.execute("BEGIN")
            return self._db.execute("DELETE FROM draws WHERE ok = 0").rowcount

    def draws(self, prompt: str) -> list[Draw]:
        """The recorded draws of one prompt in draw order."""
        self.flush()
        cursor = self._db.execute(f"SELECT {_COLUMNS} FROM draws WHERE prompt = ? ORDER BY draw", (prompt,))
        return [_draw(row) for row in cursor]

    def all_draws(self, prompts: Iterable[str]) -> Iterator[Draw]:
        for prompt in prompts:
            yield from self.draws(prompt)


def _draw(row: tuple[Any, ...]) -> Draw:
    prompt, draw, seed, ok, text, finish, ptok, ctok, model, fingerprint, retries, error = row
    return Draw(prompt, draw, seed, bool(ok), text, finish, ptok, ctok, model, fingerprint, retries, error)
