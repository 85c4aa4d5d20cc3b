"""Inspect AI eval logs (``.eval`` or ``.json``): all epochs of a sample → one prompt's responses.

A sample's ``id`` is matched as a modebench prompt id (the modebench Inspect tasks use them);
otherwise its ``input`` (a string or chat messages) is matched by hash. The response of an epoch is
``output.completion``. ``.eval`` logs are read with ``inspect_ai.log.read_eval_log`` (the
``inspect`` extra); ``.json`` logs are plain JSON and need nothing extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.contracts import install_hint
from modebench.ingest._source import SourcePrompt
from modebench.validation import InputError

__all__ = ["read"]


def _samples(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        try:
            log = json.loads(path.read_bytes())
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: invalid JSON ({exc})") from None
        samples = log.get("samples") if isinstance(log, dict) else None
        if not isinstance(samples, list):
            raise InputError(f"{path}: not an Inspect log (no samples list)")
        return samples
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(f"install the 'inspect' extra: {install_hint('inspect')}") from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises several types for an unreadable log
        raise InputError(f"{path}: not a readable Inspect log ({exc})") from None
    return [sample.model_dump(mode="json") for sample in log.samples or []]


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix in (".eval", ".json"))
    return [source]


def read(source: Path) -> Iterator[SourcePrompt]:
    files = _files(source)
    if not files:
        raise InputError(f"{source}: no Inspect .eval or .json logs")
    for path in files:
        groups: dict[str, tuple[str, Any, list[tuple[int, str]]]] = {}
        for number, sample in enumerate(_samples(path), start=1):
            location = f"{path}: sample {number}"
            if not isinstance(sample, dict) or not isinstance(sample.get("id"), (str, int)):
                raise InputError(f"{location}: missing field: id")
            output = sample.get("output")
            completion = output.get("completion") if isinstance(output, dict) else None
            if not isinstance(completion, str):
                raise InputError(f"{location}: missing field: output.completion")
            epoch = sample.get("epoch", 1)
            key = str(sample["id"])
            if key not in groups:
                groups[key] = (location, sample.get("input"), [])
            groups[key][2].append((epoch if isinstance(epoch, int) else 0, completion))
        for key, (location, prompt, epochs) in groups.items():
            responses = [text for _, text in sorted(epochs, key=lambda pair: pair[0])]
            yield SourcePrompt(None, key, prompt, responses, location)
