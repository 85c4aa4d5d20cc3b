"""Replay a list of calls in whichever interpreter runs this file; print one JSON line per call.

Used by ``ops/fidelity/surface_vs_040.py`` under both this checkout's interpreter and a ModeBench 0.4.0
one. Input (stdin): a JSON list of ``{"id", "module", "function", "args", "kwargs"}``; arguments
tagged ``{"$tuple": [...]}``, ``{"$set": [...]}`` and ``{"$pairs": [[key, value], ...]}`` become
tuples, sets and mappings with non-string keys. Output: ``{"id", "value"}`` with the result in a
comparable JSON form, or ``{"id", "error": [type name, message]}``. Nothing here knows which
ModeBench it talks to.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import re
import sys
from collections.abc import Mapping
from typing import Any


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"$tuple"}:
            return tuple(decode(item) for item in value["$tuple"])
        if set(value) == {"$set"}:
            return {decode(item) for item in value["$set"]}
        if set(value) == {"$pairs"}:  # a mapping with keys JSON cannot carry (ints, tuples)
            return {decode(key): decode(item) for key, item in value["$pairs"]}
        return {key: decode(item) for key, item in value.items()}
    return value


def encode(value: Any) -> Any:
    """A JSON form that keeps the distinctions callers can observe (type of container, order)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"$float": repr(value)}
    if isinstance(value, tuple):
        return {"$tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted(json.dumps(encode(item), sort_keys=True) for item in value)}
    if isinstance(value, enum.Enum):
        return {"$enum": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"$dataclass": type(value).__name__, "fields": fields}
    if isinstance(value, Mapping):
        return {"$dict": [[encode(key), encode(item)] for key, item in value.items()]}
    if callable(value):
        return {"$callable": getattr(value, "__name__", type(value).__name__)}
    # Fractions, Decimals and the like: their repr carries the value (addresses dropped).
    return {"$repr": re.sub(r" at 0x[0-9a-f]+", "", repr(value))}


def run(call: dict[str, Any]) -> dict[str, Any]:
    try:
        function = getattr(importlib.import_module(call["module"]), call["function"])
        value = function(*decode(call.get("args", [])), **decode(call.get("kwargs", {})))
        return {"id": call["id"], "value": encode(value)}
    except Exception as exc:  # the exception type and message are what is compared
        return {"id": call["id"], "error": [type(exc).__name__, str(exc)]}


def main() -> None:
    for call in json.load(sys.stdin):
        sys.stdout.write(json.dumps(run(call), sort_keys=True) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
