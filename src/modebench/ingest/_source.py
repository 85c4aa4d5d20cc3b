"""What every reader yields: one prompt's responses at one training step, with where it came from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any, NamedTuple

from modebench.contracts import install_hint
from modebench.guard import bounded_lines, open_regular
from modebench.validation import InputError

__all__ = ["ReadOptions", "SourcePrompt", "field", "source_id", "iter_json_lines", "need_pyarrow"]


class SourcePrompt(NamedTuple):
    """One source prompt: ``ident`` when the source names a modebench prompt id, else ``prompt``
    (a string or a list of chat messages) to match by hash; ``step`` for training dumps."""

    step: int | None
    ident: str | None
    prompt: Any
    responses: list[str]
    location: str
    #: Custom-mode fields (``level``, ``domain``, ``answer``) when the source carries the whole row.
    row: dict[str, Any] | None = None
    #: The rule reported when ``ident`` matches: ``id`` (the source's own id field) or ``id-field:NAME``.
    id_rule: str = "id"


@dataclass
class ReadOptions:
    """What the user chose (``--id-field``, ``--filter``), and what a reader reports back for the
    summary: lm-eval's chosen filter per task, files skipped, failed draws kept."""

    id_field: str | None = None
    lm_eval_filter: str | None = None
    notes: dict[str, Any] = dataclass_field(default_factory=dict)


_MISSING = object()


def field(record: Any, path: str) -> Any:
    """The value at a dotted ``path`` (``gts.id``) of a record, or ``_MISSING``."""
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def source_id(record: Any, path: str, location: str) -> str:
    """The prompt id a record names at ``--id-field PATH``: a string or an integer, or an error."""
    value = field(record, path)
    if value is _MISSING:
        raise InputError(f"{location}: missing id field: {path}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{location}: id field {path} must be a string or an integer")
    return str(value)


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` per non-blank line, streaming; a bad line names file and line.

    This is the per-record cost of every line-based source (a rollout dump has millions of lines),
    so it decodes ``str`` with one bound decoder (``json.loads`` on bytes first sniffs the
    encoding) and leaves building the location text to callers, which need it once per prompt.
    """

    decoder = json.JSONDecoder()
    raw_decode, decode = decoder.raw_decode, decoder.decode
    with open_regular(path, "log") as handle:
        for number, raw in enumerate(bounded_lines(handle, path), start=1):
            try:
                text = raw.decode("utf-8")
                # The common line, an object from its first character, skips decode()'s two
                # whitespace scans; anything else takes decode() for its exact error.
                value, end = raw_decode(text)
                if end != len(text) and not text[end:].isspace():
                    value = decode(text)
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}: line {number}: invalid JSON ({exc})") from None
            except json.JSONDecodeError:
                if not raw.strip():
                    continue
                try:
                    value = decode(text)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: line {number}: invalid JSON ({exc})") from None
            if not isinstance(value, dict):
                raise InputError(f"{path}: line {number}: expected a JSON object")
            yield number, value


def need_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 - optional extra: data (pyarrow)
    except ImportError:
        raise InputError(f"install the 'data' extra: {install_hint('data')}") from None
    return pq
