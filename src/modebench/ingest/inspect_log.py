"""Inspect AI eval logs (``.eval`` or ``.json``): all epochs of a sample → one prompt's responses.

A sample's ``id`` is matched as a modebench prompt id (the modebench Inspect tasks use them);
otherwise its ``input`` (a string or chat messages) is matched by hash. The response of an epoch is
``output.completion``.

Both formats stream: a sample's full record (transcript, events, store) is parsed one at a time and
only its id, epoch, completion and first input are kept, so memory grows with the responses, not
with the log. A ``.eval`` log is a zip with one member ``samples/<id>_epoch_<n>.json`` per sample
epoch, read member by member (Inspect compresses members with zstd, which the ``inspect`` extra
teaches ``zipfile`` on Python < 3.14); a ``.json`` log's ``samples`` array is walked element by
element (:mod:`modebench.ingest._jsonstream`). Prompts come out in the order Inspect's
``read_eval_log`` lists samples: by epoch, then id (integer ids zero-padded), each with its epochs in
epoch order.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.contracts import install_hint
from modebench.guard import Decompression, open_regular
from modebench.ingest._jsonstream import iter_member
from modebench.ingest._source import SourcePrompt
from modebench.validation import InputError

__all__ = ["read"]

_SAMPLES = "samples/"
_EXTRA = f"install the 'inspect' extra: {install_hint('inspect')}"


def _eval_samples(path: Path) -> Iterator[tuple[str, Any]]:
    """``(location, sample)`` per sample member of a ``.eval`` zip, one member in memory at a time."""
    if sys.version_info < (3, 14):
        try:  # registers zstd (Inspect's member compression) with zipfile
            import zipfile_zstd  # type: ignore[import-not-found, import-untyped, unused-ignore]  # noqa: F401
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


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix in (".eval", ".json"))
    return [source]


def _read_file(path: Path) -> Iterator[SourcePrompt]:
    # Per sample id: [sort key of its first epoch, that epoch's location and input, (epoch, completion)s].
    groups: dict[str, list[Any]] = {}
    samples = _json_samples(path) if path.suffix == ".json" else _eval_samples(path)
    for location, sample in samples:
        ident = sample.get("id") if isinstance(sample, dict) else None
        if not isinstance(ident, (str, int)) or isinstance(ident, bool):
            raise InputError(f"{location}: missing field: id")
        output = sample.get("output")
        completion = output.get("completion") if isinstance(output, dict) else None
        if not isinstance(completion, str):
            raise InputError(f"{location}: missing field: output.completion")
        raw_epoch = sample.get("epoch", 1)
        epoch = raw_epoch if isinstance(raw_epoch, int) else 0
        order = (epoch, _order(ident))
        group = groups.get(str(ident))
        if group is None:
            groups[str(ident)] = [order, location, sample.get("input"), [(epoch, completion)]]
            continue
        if order < group[0]:
            group[:3] = [order, location, sample.get("input")]
        group[3].append((epoch, completion))
    for key, (_, location, prompt, epochs) in sorted(groups.items(), key=lambda item: item[1][0]):
        responses = [text for _, text in sorted(epochs, key=lambda pair: pair[0])]
        yield SourcePrompt(None, key, prompt, responses, location)


def read(source: Path) -> Iterator[SourcePrompt]:
    files = _files(source)
    if not files:
        raise InputError(f"{source}: no Inspect .eval or .json logs")
    for path in files:
        yield from _read_file(path)
