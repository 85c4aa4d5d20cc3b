"""What every reader yields: one prompt's responses at one training step, with where it came from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from modebench.contracts import install_hint
from modebench.validation import InputError

__all__ = ["SourcePrompt", "iter_json_lines", "need_pyarrow"]


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


def iter_json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """``(location, object)`` per non-blank line, streaming; a bad line names file and line."""
    import json

    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            location = f"{path}: line {number}"
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(f"{location}: invalid JSON ({exc})") from None
            if not isinstance(value, dict):
                raise InputError(f"{location}: expected a JSON object")
            yield location, value


def need_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"install the 'data' extra: {install_hint('data')}") from None
    return pq
