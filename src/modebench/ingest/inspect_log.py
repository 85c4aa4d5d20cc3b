"""Inspect AI eval logs (``.eval`` or ``.json``): all epochs of a sample → one prompt's responses.

A sample's ``id`` is matched as a modebench prompt id (the modebench Inspect tasks use them);
otherwise its ``input`` (a string or chat messages) is matched by hash. The response of an epoch is
``output.completion``.

Both formats stream: a sample's full record (transcript, events, store) is parsed one at a time and
only its id, epoch, completion and first input are kept, so memory grows with the responses, not
with the log.

Versions: Inspect up to 0.3.122 never stored ``output.completion`` (a property computed from
``choices[0].message``), so without it the completion is ``choices[0].message.content`` — a string,
or content parts whose ``text`` parts are joined, as Inspect's own property does. A sample epoch
that failed (``error`` set, kept by ``fail_on_error=False``) is a failed draw: its response is
``""`` and the summary counts and lists it. A sample with no ``output`` at all (Inspect reads it as
an empty output, e.g. a tool-call error sample) is a draw with response ``""`` too, listed in the
summary's ``draws_without_output``. In a directory, only Inspect logs are read: the
``.eval`` files and the ``.json`` files that open like a log (``{"version": …``); ``eval-set.json``,
``logs.json`` and other files ``eval_set`` and friends write are listed as skipped. A ``.eval`` log is a zip with one member ``samples/<id>_epoch_<n>.json`` per sample
epoch, read member by member (Inspect compresses members with zstd, which the ``inspect`` extra
teaches ``zipfile`` on Python < 3.14); a ``.json`` log's ``samples`` array is walked element by
element (:mod:`modebench.ingest._jsonstream`). Prompts come out in the order Inspect's
``read_eval_log`` lists samples: by epoch, then id (integer ids zero-padded), each with its epochs in
epoch order.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.contracts import install_hint
from modebench.guard import Decompression, open_regular
from modebench.ingest._jsonstream import iter_member
from modebench.ingest._source import ReadOptions, SourcePrompt, source_id
from modebench.validation import InputError

__all__ = ["read"]

_SAMPLES = "samples/"
_EXTRA = f"install the 'inspect' extra: {install_hint('inspect')}"


def _eval_samples(path: Path) -> Iterator[tuple[str, Any]]:
    """``(location, sample)`` per sample member of a ``.eval`` zip, one member in memory at a time."""
    if sys.version_info < (3, 14):
        try:  # registers zstd (Inspect's member compression) with zipfile
            import zipfile_zstd  # type: ignore[import-not-found, import-untyped, unused-ignore]  # noqa: F401, PLC0415 - optional package: zstd-compressed Inspect logs
        except ImportError:
            pass
    handle = open_regular(path, "log")
    try:
        archive = zipfile.ZipFile(handle)
    except (OSError, zipfile.BadZipFile) as exc:
        handle.close()
        raise InputError(f"{path}: not a readable Inspect log ({exc})") from None
    budget = Decompression(path)
    with handle, archive:
        # A re-logged sample repeats its member name; like Inspect, the last member wins.
        for name in dict.fromkeys(archive.namelist()):
            if not (name.startswith(_SAMPLES) and name.endswith(".json")):
                continue
            location = f"{path}: {name}"
            try:
                with archive.open(name) as member:
                    sample = json.loads(budget.read(member, location))
            except NotImplementedError:
                raise InputError(f"{location}: compressed with zstd; {_EXTRA}") from None
            except (OSError, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(f"{location}: not a readable sample ({exc})") from None
            yield location, sample


def _json_samples(path: Path) -> Iterator[tuple[str, Any]]:
    missing = "not an Inspect log (no samples list)"
    for number, sample in enumerate(iter_member(path, "samples", missing), start=1):
        yield f"{path}: sample {number}", sample


def _order(ident: Any) -> str:
    # Inspect's sort_samples key: string ids as they are, integer ids zero-padded to 20 digits.
    return ident if isinstance(ident, str) else str(ident).zfill(20)


_LOG_HEAD = re.compile(rb'\s*\{\s*"version"\s*:')


def _is_log(path: Path) -> bool:
    if path.suffix == ".eval":
        return True
    with path.open("rb") as handle:
        return _LOG_HEAD.match(handle.read(256)) is not None


def _files(source: Path, notes: dict[str, Any]) -> list[Path]:
    if not source.is_dir():
        return [source]
    files = []
    skipped: list[dict[str, str]] = notes.setdefault("skipped_files", [])
    for path in sorted(p for p in source.iterdir() if p.is_file()):
        if path.suffix in (".eval", ".json") and _is_log(path):
            files.append(path)
        else:
            skipped.append({"path": str(path), "reason": "not an Inspect log"})
    return files


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: ContentText {"type": "text", "text": …}, …
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(str(p) for p in parts)
    return None


def _completion(sample: dict[str, Any], location: str, notes: dict[str, Any]) -> str:
    error = sample.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        notes.setdefault("failed_draws", []).append({"location": location, "error": str(message)[:500]})
        return ""
    if "output" not in sample:
        # Inspect's EvalSample defaults ``output`` to an empty ModelOutput (completion ""), so a log
        # without it reads (Inspect's own tests/log/test_eval_log/log_tool_call_error.json, a
        # tool-call error sample): the draw exists, its response is empty (graded malformed).
        notes.setdefault("draws_without_output", []).append({"location": location})
        return ""
    output = sample.get("output")
    if isinstance(output, dict):
        completion = output.get("completion")
        if isinstance(completion, str):
            return completion
        choices = output.get("choices")
        if isinstance(choices, list):
            if not choices:  # a model that returned nothing: Inspect's completion is ""
                return ""
            message = choices[0].get("message") if isinstance(choices[0], dict) else None
            text = _text(message.get("content")) if isinstance(message, dict) else None
            if text is not None:
                return text
    raise InputError(f"{location}: missing field: output.completion (or output.choices[0].message.content)")


def _read_file(path: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    # Per sample id: [sort key of its first epoch, that epoch's location and input, (epoch, completion)s,
    # the --id-field value].
    notes, id_field = options.notes, options.id_field
    groups: dict[str, list[Any]] = {}
    samples = _json_samples(path) if path.suffix == ".json" else _eval_samples(path)
    for location, sample in samples:
        ident = sample.get("id") if isinstance(sample, dict) else None
        if not isinstance(ident, (str, int)) or isinstance(ident, bool):
            raise InputError(f"{location}: missing field: id")
        completion = _completion(sample, location, notes)
        raw_epoch = sample.get("epoch", 1)
        epoch = raw_epoch if isinstance(raw_epoch, int) else 0
        order = (epoch, _order(ident))
        group = groups.get(str(ident))
        if group is None:
            named = source_id(sample, id_field, location) if id_field is not None else str(ident)
            groups[str(ident)] = [order, location, sample.get("input"), [(epoch, completion)], named]
            continue
        if order < group[0]:
            group[:3] = [order, location, sample.get("input")]
        group[3].append((epoch, completion))
    rule = "id" if id_field is None else f"id-field:{id_field}"
    for _, (_, location, prompt, epochs, named) in sorted(groups.items(), key=lambda item: item[1][0]):
        responses = [text for _, text in sorted(epochs, key=lambda pair: pair[0])]
        yield SourcePrompt(None, named, prompt, responses, location, id_rule=rule)


def read(source: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    files = _files(source, options.notes)
    if not files:
        raise InputError(f"{source}: no Inspect .eval or .json logs")
    for path in files:  # --id-field: a dotted path into the sample, e.g. metadata.prompt_id
        yield from _read_file(path, options)
