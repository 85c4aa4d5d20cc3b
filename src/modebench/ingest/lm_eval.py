"""lm-evaluation-harness ``--log_samples`` files: one JSON line per document.

Each line carries ``doc`` (the dataset row), ``arguments`` (the request: the prompt string first)
and ``resps`` (per request, the list of all repeats). All repeats of a document are one prompt's
responses. A document that carries a modebench ``id`` is matched by id; one that carries the whole
row (``level``, ``domain``, ``answer``) can also be graded without a registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.ingest._source import SourcePrompt, iter_json_lines
from modebench.validation import InputError

__all__ = ["read"]

_ROW_FIELDS = ("level", "domain", "answer")


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        return sorted(p for p in source.rglob("samples_*.jsonl") if p.is_file())
    return [source]


def _prompt(arguments: Any) -> Any:
    # Older harness versions log [[context, gen_kwargs], …]; newer ones
    # {"gen_args_0": {"arg_0": context, "arg_1": gen_kwargs}, …}.
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        return arguments[0][0]
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        if isinstance(first, dict):
            return first.get("arg_0")
    return None


def _responses(resps: Any, location: str) -> list[str]:
    if not isinstance(resps, list) or not resps:
        raise InputError(f"{location}: resps must be a nonempty list of response lists")
    flat: list[str] = []
    for group in resps:
        items = group if isinstance(group, list) else [group]
        for item in items:
            if not isinstance(item, str):
                raise InputError(f"{location}: resps must contain only strings")
            flat.append(item)
    if not flat:
        raise InputError(f"{location}: resps holds no responses")
    return flat


def read(source: Path) -> Iterator[SourcePrompt]:
    files = _files(source)
    if not files:
        raise InputError(f"{source}: no lm-eval samples_*.jsonl files")
    for path in files:
        for number, line in iter_json_lines(path):
            location = f"{path}: line {number}"
            doc = line.get("doc")
            if not isinstance(doc, dict):
                raise InputError(f"{location}: missing field: doc")
            if "resps" not in line:
                raise InputError(f"{location}: missing field: resps")
            responses = _responses(line["resps"], location)
            ident = doc.get("id")
            row = {f: doc[f] for f in _ROW_FIELDS} if all(f in doc for f in _ROW_FIELDS) else None
            yield SourcePrompt(
                None,
                str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None,
                _prompt(line.get("arguments")),
                responses,
                location,
                row,
            )
