"""What a run is on the command line: a receipt, a suite summary (``suite.json``) or a directory.

``stats``, ``compare``, ``trajectory`` and ``report --html`` take any of the three. A suite summary
stands for its configurations' receipts; a directory for its ``suite.json`` when it has one,
otherwise for every receipt directly inside it (files whose schema is a ModeBench receipt's,
sorted by name). A run's *parts* are named (the configuration, or the file name without
``.json``), so two suites are compared part by part.

A run's label, used everywhere it is shown: the one given (``--label NAME=PATH``), else the
``label`` of the receipt's run metadata (``run.json``), else the model id, else the file name;
labels that would repeat are made unique with the file name (:func:`label_runs`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modebench.identity import file_sha256
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.stats.journal import open_receipt
from modebench.suite.summary import SUMMARY_NAME, is_summary
from modebench.validation import InputError, loads

__all__ = ["Run", "label_runs", "resolve_run"]

_RECEIPT_SCHEMAS = ("modebench-saved-responses-v3", "modebench-saved-responses-v4")
_MAX_HEADER = 64 * 1024 * 1024  # as reporting.MAX_RECEIPT_BYTES: a receipt is read whole
_MAX_FILES = 10_000


@dataclass(frozen=True)
class Run:
    """One run: where it was given, its receipts by part name, and its metadata label (if any)."""

    path: str
    parts: tuple[tuple[str, str], ...]  # (part name, receipt path), in order
    label: str | None = None  # from the run metadata (run.json ``label``) or given
    model: str | None = None
    # a suite's configurations that did not complete: (part name, receipt path, status); they
    # have no statistics, and every command says it left them out
    failed: tuple[tuple[str, str, str], ...] = ()

    def notes(self, name: str | None = None) -> list[str]:
        """What the output must say about the configurations left out."""
        who = name or self.path
        return [f"{who}: configuration {part} {status} (no statistics; left out): {receipt}"
                for part, receipt, status in self.failed]  # fmt: skip

    @property
    def receipts(self) -> list[str]:
        return [receipt for _, receipt in self.parts]


def _read_json(path: Path) -> Any:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before open: opening a FIFO would wait for a writer
            raise InputError(f"not a regular file: {path}")
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InputError(f"not a regular file: {path}")
            data = handle.read(_MAX_HEADER + 1)
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_HEADER:
        raise InputError(f"{path}: exceeds {_MAX_HEADER} bytes")
    try:
        return loads(data)
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None


def _metadata(receipt: str) -> tuple[str | None, str | None]:
    """(run label, model id) from a receipt's run metadata; (None, None) when unreadable."""
    try:
        payload = _read_json(Path(receipt))
    except InputError:
        return None, None  # whoever reads it as a receipt reports the error
    run = payload.get("run") if isinstance(payload, dict) else None
    if not isinstance(run, dict):
        return None, None
    label = run.get("label")
    model = run.get("model", {}).get("id") if isinstance(run.get("model"), dict) else None
    return (label if isinstance(label, str) and label.strip() else None), (
        model if isinstance(model, str) else None
    )


def _sha256(path: Path) -> str:

    try:
        return file_sha256(path)
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None


def _suite_parts(path: Path, failed: list[tuple[str, str, str]] | None = None) -> list[tuple[str, str]]:
    """The completed configurations of a suite summary as (name, receipt); those that did not
    complete go to ``failed`` as (name, receipt, status)."""
    document = _read_json(path)
    configs = document.get("configs") if isinstance(document, dict) else None
    if not isinstance(configs, list):
        raise InputError(f"{path}: a suite summary without a list of configs")
    parts: list[tuple[str, str]] = []
    for number, entry in enumerate(configs):
        if not isinstance(entry, dict) or not isinstance(entry.get("receipt"), str):
            raise InputError(f"{path}: configs[{number}] names no receipt")
        config = entry.get("config")
        name = config if isinstance(config, str) else Path(entry["receipt"]).stem
        receipt = path.parent / str(entry["receipt"])
        if entry.get("status") != "completed":  # no statistics; said by every command (Run.notes)
            if failed is not None:
                failed.append((name, os.fspath(receipt), str(entry.get("status"))))
            continue
        recorded = entry.get("receipt_sha256")
        if isinstance(recorded, str) and _sha256(receipt) != recorded:
            raise InputError(f"{path}: receipt {entry['receipt']} changed since the summary was written")
        parts.append((name, os.fspath(receipt)))
    return parts


def _is_receipt(path: Path) -> bool:
    try:
        document = _read_json(path)
    except InputError:
        return False
    return isinstance(document, dict) and document.get("schema") in _RECEIPT_SCHEMAS


def resolve_run(path: str | os.PathLike[str], label: str | None = None) -> Run:
    """The run behind ``path``: a receipt, a ``suite.json`` or a directory of either."""

    given = Path(path)
    failed: list[tuple[str, str, str]] = []
    if given.is_dir():
        summary = given / SUMMARY_NAME
        if summary.is_file():
            parts = _suite_parts(summary, failed)
        else:
            files = sorted(p for p in given.iterdir() if p.suffix == ".json" and p.is_file())[:_MAX_FILES]
            parts = [(p.stem, os.fspath(p)) for p in files if _is_receipt(p)]
        if not parts:
            raise InputError(f"{os.fspath(path)}: a directory without a suite.json or completed receipts")
    elif is_summary(given):
        parts = _suite_parts(given, failed)
        if not parts:
            raise InputError(f"{os.fspath(path)}: the suite has no completed configuration")
    elif given.exists():
        if not given.is_file():  # a FIFO or a device: refused before anything opens it (a FIFO would block)
            raise InputError(f"{os.fspath(path)}: not a regular file")
        parts = [(given.stem, os.fspath(given))]
    else:
        raise InputError(f"{os.fspath(path)}: no such file or directory")
    found_label, model = _metadata(parts[0][1])
    return Run(os.fspath(path), tuple(parts), label or found_label, model, tuple(failed))


def label_runs(runs: list[Run]) -> list[str]:
    """A unique, human label per run (given label, run.json label, model id, file name)."""
    names = []
    for run in runs:
        stem = Path(run.path.rstrip("/")).name or run.path
        names.append(run.label or run.model or stem)
    for index, name in enumerate(names):
        if names.count(name) > 1 and runs[index].label is None:
            stem = Path(runs[index].path.rstrip("/")).name or runs[index].path
            names[index] = f"{name} [{stem}]"
    seen: dict[str, int] = {}
    for index, name in enumerate(names):  # still equal (same file name in two folders): number them
        if names.count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            names[index] = f"{name} #{seen[name]}"
    return names


class Filters:
    """Which cells to compare: ``cells`` as (level, domain) pairs, ``domains``, ``levels``."""

    def __init__(
        self,
        cells: Sequence[tuple[int, str]] | None = None,
        domains: Sequence[str] | None = None,
        levels: Sequence[int] | None = None,
    ) -> None:
        self.cells = set(cells) if cells else None
        self.domains = set(domains) if domains else None
        self.levels = set(levels) if levels else None

    def keep(self, level: int, domain: str) -> bool:
        return (
            (self.cells is None or (level, domain) in self.cells)
            and (self.domains is None or domain in self.domains)
            and (self.levels is None or level in self.levels)
        )

    def apply(self, groups: dict[tuple[int, str], Any]) -> dict[tuple[int, str], Any]:
        return {key: value for key, value in groups.items() if self.keep(*key)}

    def __bool__(self) -> bool:
        return any(x is not None for x in (self.cells, self.domains, self.levels))


def reportable_threshold(receipts: Sequence[str]) -> int:
    """The receipts' PCMD reporting threshold (``min_defined_prompts``; the largest when they differ)."""
    found = []
    for receipt in receipts:
        try:
            payload = open_receipt(receipt).payload
        except InputError:
            continue  # the pass that reads it reports the error
        for cell in payload.get("cells", []):
            value = cell.get("pcmd", {}).get("min_defined_prompts") if isinstance(cell, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                found.append(value)
    return max(found, default=DEFAULT_MIN_DEFINED_PROMPTS)
