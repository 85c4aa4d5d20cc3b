"""SQLite checkpoint of a file evaluation: prepared records, results, run metadata.

Layout (private to this project): ``info`` (canonical-JSON values), ``seen`` (the duplicate-prompt
set, so memory stays flat), and ``prompts`` with one row per input record holding the prepared
record once (the raw record lives inside it) and, once graded, the canonical per-prompt result and
its link of the journal digest chain (see ``docs/checkpoints.md``). Record and result texts are
stored zlib-compressed and digests as raw bytes: the ledger is a private working copy, and model
responses compress several-fold. Grading commits in bounded groups; the journal is appended only
after its group is committed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import sqlite3
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from modebench.identity import canonical
from modebench.isolation.packing import pack_text, text_sha
from modebench.validation import InputError, OptionError, loads

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS seen (level INTEGER, domain TEXT, rid TEXT,
                                 PRIMARY KEY(level, domain, rid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS prompts (
    seq INTEGER PRIMARY KEY, level INTEGER NOT NULL, domain TEXT NOT NULL, k INTEGER NOT NULL,
    prepared BLOB NOT NULL, prepared_sha BLOB NOT NULL, result BLOB, chain BLOB);
"""
LEDGER_NAME = "ledger.sqlite3"
#: Files of the ledger itself (SQLite's WAL companions included); the journal is not among them.
LEDGER_FILES = (LEDGER_NAME, LEDGER_NAME + "-wal", LEDGER_NAME + "-shm", "lock")
#: The copy of an input read from standard input (``docs/evaluation.md``): written completely
#: into the checkpoint before the checkpoint is opened, removed with the ledger when done.
SPOOL_NAME = "stdin.jsonl"
PAGE = 512
#: The link before sequence 0 of the journal digest chain.
CHAIN_START = hashlib.sha256(b"modebench-journal-chain-v1").digest()
_TEXT_COLUMNS = {"prepared", "result"}


def chain_link(previous: bytes, line: str) -> bytes:
    """The chain link of a journal line: SHA-256 of the previous link and the line's bytes."""
    return hashlib.sha256(previous + line.encode("utf-8")).digest()


_INSERT = "INSERT INTO prompts (seq, level, domain, k, prepared, prepared_sha) VALUES (?, ?, ?, ?, ?, ?)"


def _pack_rows(
    rows: list[tuple[int, int, str, int, str]],
) -> list[tuple[int, int, str, int, bytes, bytes]]:
    return [(seq, level, domain, k, pack_text(text), text_sha(text)) for seq, level, domain, k, text in rows]


def _unpack(blob: Any) -> str | None:
    if blob is None:
        return None
    try:
        return zlib.decompress(blob).decode("utf-8")
    except (zlib.error, TypeError, UnicodeDecodeError):
        raise InputError("checkpoint record is not readable") from None


class SeenSet:
    """The duplicate-prompt set of Phase A, kept on disk."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    def __contains__(self, key: tuple[int, str, str]) -> bool:
        return (
            self._db.execute("SELECT 1 FROM seen WHERE level=? AND domain=? AND rid=?", key).fetchone()
            is not None
        )

    def add(self, key: tuple[int, str, str]) -> None:
        self._db.execute("INSERT INTO seen VALUES (?, ?, ?)", key)

    def claim(self, key: tuple[int, str, str]) -> bool:
        """Add ``key``; False (and nothing added) when it was already there. One statement."""
        try:
            self._db.execute("INSERT INTO seen VALUES (?, ?, ?)", key)
        except sqlite3.IntegrityError:
            return False
        return True


class Ledger:
    """One open checkpoint database."""

    def __init__(self, connection: sqlite3.Connection, directory: Path) -> None:
        self.db = connection
        self.directory = directory
        # Prompt inserts and result updates wait here and go to SQLite in one ``executemany``
        # at the next commit or read of the prompts table: fewer round trips, same transaction.
        self._inserts: list[tuple[int, int, str, int, str]] = []
        self._results: list[tuple[bytes, bytes, int]] = []
        # Preflight batches are packed (zlib, which releases the GIL) on a helper thread while
        # the caller reads on; a packed batch is inserted before anything after it.
        self._packer: ThreadPoolExecutor | None = None
        self._packing: Future[list[tuple[int, int, str, int, bytes, bytes]]] | None = None
        self.staging = False

    def flush(self) -> None:
        """Send every waiting prompt insert and result update to SQLite (uncommitted)."""
        self._join()
        if self._inserts:
            self.db.executemany(_INSERT, _pack_rows(self._inserts))
            self._inserts.clear()
        if self._results:
            self.db.executemany("UPDATE prompts SET result=?, chain=? WHERE seq=?", self._results)
            self._results.clear()

    # -- info ------------------------------------------------------------------------------------
    def get(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM info WHERE key=?", (key,)).fetchone()
        if row is None:
            raise InputError(f"incomplete checkpoint metadata: {key}")
        return loads(row[0])

    def has(self, key: str) -> bool:
        return self.db.execute("SELECT 1 FROM info WHERE key=?", (key,)).fetchone() is not None

    def put(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO info VALUES (?, ?)", (key, canonical(value)))

    def _join(self) -> None:
        if self._packing is not None:
            rows = self._packing.result()
            self._packing = None
            self.db.executemany(_INSERT, rows)

    def commit(self) -> None:
        """Commit everything sent so far. While ``staging``, the waiting prompt inserts are packed
        on the helper thread instead and join a later commit (preflight, which restarts from
        scratch anyway if it is interrupted, overlaps packing with reading this way)."""
        if not self.staging:
            self.flush()
        else:
            self._join()
            if self._results:
                # Results of prompts graded while preflight runs: every row a result names was
                # inserted before it was offered for grading, so any result below the first
                # waiting insert has its row in the database already.
                first = self._inserts[0][0] if self._inserts else None
                ready = [row for row in self._results if first is None or row[2] < first]
                if ready:
                    self.db.executemany("UPDATE prompts SET result=?, chain=? WHERE seq=?", ready)
                    self._results = self._results[len(ready) :] if first is not None else []
            if self._inserts:
                if self._packer is None:
                    self._packer = ThreadPoolExecutor(1, thread_name_prefix="modebench-ledger")
                self._packing = self._packer.submit(_pack_rows, self._inserts)
                self._inserts = []
        self.db.commit()

    def close(self) -> None:
        """Stop the helper thread (waiting rows are dropped: they were never committed)."""
        if self._packer is not None:
            self._packer.shutdown(wait=True)
            self._packer = None
        self._packing = None

    # -- prompts ---------------------------------------------------------------------------------
    def reset_prompts(self) -> None:
        if self._packing is not None:
            self._packing.result()
            self._packing = None
        self._inserts.clear()
        self._results.clear()
        self.db.execute("DELETE FROM prompts")
        self.db.execute("DELETE FROM seen")

    def insert(self, seq: int, level: int, domain: str, k: int, prepared_json: str) -> None:
        self._inserts.append((seq, level, domain, k, prepared_json))

    def set_result(self, seq: int, result_json: str, link: bytes) -> None:
        self._results.append((pack_text(result_json), link, seq))

    def set_packed_result(self, seq: int, packed: bytes, link: bytes) -> None:
        """``set_result`` of a result text a worker already packed as ``set_result`` does."""
        self._results.append((packed, link, seq))

    def rows(self, columns: str, where: str = "1", start: int = 0) -> Iterator[tuple[Any, ...]]:
        """Iterate rows by ``seq`` in pages (no cursor held open across commits).

        ``prepared`` and ``result`` come back as text (None for a pending result).
        """
        self.flush()
        names = [name.strip() for name in columns.split(",")]
        texts = [index + 1 for index, name in enumerate(names) if name in _TEXT_COLUMNS]
        while True:
            page = self.db.execute(
                f"SELECT seq, {columns} FROM prompts WHERE seq >= ? AND ({where}) ORDER BY seq LIMIT {PAGE}",
                (start,),
            ).fetchall()
            if not page:
                return
            for row in page:
                if texts:
                    values = list(row)
                    for index in texts:
                        values[index] = _unpack(values[index])
                    row = tuple(values)
                yield row
            start = page[-1][0] + 1

    def completed(self) -> int:
        self.flush()
        row = self.db.execute("SELECT COUNT(*) FROM prompts WHERE result IS NOT NULL").fetchone()
        return int(row[0])

    def count(self) -> int:
        self.flush()
        return int(self.db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0])


@contextmanager
def checkpoint(directory: str | os.PathLike[str], resume: bool, *, spooled: bool = False) -> Iterator[Ledger]:
    """Create (fresh) or reopen (resume) a checkpoint, holding an exclusive lock on it.

    ``spooled``: a fresh checkpoint's directory already exists, holding the spooled input only.
    """
    path = Path(directory)
    if spooled and not resume:
        if not (path.is_dir() and _unborn(path)):
            raise InputError(f"checkpoint already exists: {path}; resume it or use a new destination")
    elif resume:
        # A directory holding nothing or only the lock was killed before its database existed:
        # it is reopened and the caller starts it afresh (nothing was graded). Anything else
        # without a database is not a checkpoint of ours.
        if not (path / LEDGER_NAME).is_file() and not (path.is_dir() and _unborn(path)):
            raise InputError(f"no checkpoint to resume: {path}")
    else:
        try:
            path.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            raise OptionError(
                "checkpoint_exists",
                f"checkpoint already exists: {path}; resume it or use a new destination",
                path=path,
            ) from None
    lock = open(path / "lock", "a+b")  # noqa: SIM115 - held for the whole context
    try:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError("checkpoint is in use by another evaluator") from None
        try:
            connection = sqlite3.connect(
                path / LEDGER_NAME, isolation_level="DEFERRED", check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise InputError(f"checkpoint database error: {exc}") from None
        try:
            # WAL keeps every committed group durable against process death; commits are grouped.
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(SCHEMA_SQL)
            ledger = Ledger(connection, path)
            try:
                yield ledger
            finally:
                ledger.close()
        except sqlite3.Error as exc:
            raise InputError(f"checkpoint database error: {exc}") from None
        finally:
            connection.close()
    finally:
        lock.close()


def _unborn(path: Path) -> bool:
    return {entry.name for entry in path.iterdir()} <= {"lock", SPOOL_NAME}


def discard(directory: str | os.PathLike[str]) -> None:
    """Remove a checkpoint directory that never reached grading."""
    shutil.rmtree(directory, ignore_errors=True)


def sweep_temporaries(final: Path, older_than: float = 0.0) -> None:
    """Remove ``atomic_output`` temporaries of ``final`` left by a killed evaluator.

    Called only while this checkpoint's exclusive lock is held, so inside the checkpoint whoever
    wrote them is dead; beside the output (which another checkpoint could target) only
    temporaries older than ``older_than`` seconds are taken.
    """
    cutoff = time.time() - older_than
    pattern = re.compile(re.escape(f".{final.name}-") + "[0-9a-f]{12}")
    try:
        entries = list(os.scandir(final.parent))
    except OSError:
        return
    for entry in entries:
        try:
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                if older_than <= 0 or entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
        except FileNotFoundError:
            pass


def drop_ledger(directory: str | os.PathLike[str]) -> None:
    """Remove the ledger (and a spooled input) of a completed run; the journal the receipt names stays."""
    for name in (*LEDGER_FILES, SPOOL_NAME):
        try:
            os.unlink(Path(directory) / name)
        except FileNotFoundError:
            pass


__all__ = [
    "CHAIN_START",
    "LEDGER_NAME",
    "Ledger",
    "SPOOL_NAME",
    "SeenSet",
    "chain_link",
    "checkpoint",
    "discard",
    "drop_ledger",
    "text_sha",
]
