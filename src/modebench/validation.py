"""Strict JSON and labelled input validation.

Every user-facing input problem is an :class:`InputError` whose text names where it happened
(``line 3, prompt 'example': …``); the CLI turns it into exit code 2.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from typing import Any, TypeGuard

__all__ = [
    "InputError",
    "OptionError",
    "OutputExistsError",
    "output_exists",
    "json_copy",
    "json_value",
    "loads",
    "is_integer",
    "positive_integer",
    "unit_fraction",
    "validate_reference",
    "validate_run",
]


class InputError(ValueError):
    """Invalid input, configuration, dataset, cache, checkpoint or receipt (not a wrong answer).

    ``hint``, when set, says more than the message may (the message is often the 0.4.0
    contract's exact text): for a reference, the field, the value found and the value expected.
    """

    hint: str | None = None


def with_hint(error: InputError, hint: object) -> InputError:
    """``error`` carrying ``hint`` (a string; anything else leaves it without one)."""
    if isinstance(hint, str) and hint:
        error.hint = hint
    return error


class OptionError(InputError):
    """An invalid option value or combination, said in the library's terms.

    ``code`` names the rule and ``details`` hold the values the message shows, so a front end can
    say the same thing in its own words (the CLI names its flags; see ``modebench.cli._common``).
    """

    def __init__(self, code: str, message: str, **details: object) -> None:
        super().__init__(message)
        self.code = code
        self.details = details


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # rare: find the first repeated key for the message
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(f"duplicate JSON field: {key}")
            seen.add(key)
    return out


_BOM = b"\xef\xbb\xbf"


def _bom_note(text: str, error: json.JSONDecodeError) -> str:
    """Name a byte order mark that stopped the decoder: it is invisible in most editors."""
    if "BOM" not in error.msg and 0 <= error.pos < len(text) and text[error.pos] == "\ufeff":
        return " (a UTF-8 byte order mark, U+FEFF, is there; save the file without it)"
    return ""


def loads(text: str | bytes | bytearray) -> Any:
    """Strict JSON: duplicate keys, NaN/Infinity and overflowing numbers are errors.

    Non-finite numbers are accepted by the decoder and rejected afterwards, as in the reference,
    so a duplicate key later in the document still wins over an earlier NaN.
    """
    nonfinite: list[bool] = []

    def _float(number: str) -> float:
        value = float(number)
        if not math.isfinite(value):  # 1e999 overflows to inf
            nonfinite.append(True)
        return value

    def _constant(name: str) -> float:
        nonfinite.append(True)
        return float(name)

    decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_float, parse_constant=_constant)
    document = ""
    try:
        if isinstance(text, (bytes, bytearray)):
            # One leading UTF-8 byte order mark is skipped, as ModeBench 0.4.0's ``json.loads`` of
            # the line's bytes does (editors on Windows write one at the start of a file).
            document = bytes(text[3:] if text.startswith(_BOM) else text).decode("utf-8")
        else:
            document = text
            if document.startswith("\ufeff"):  # json.loads of a str refuses it, naming it
                raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", document, 0)
        value = decoder.decode(document)
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}{_bom_note(document, exc)}") from None
    except RecursionError:
        # The C decoder recurses once per nesting level; too deep is bad input, not a crash.
        raise InputError("invalid JSON: nesting is too deep") from None
    except InputError:
        raise  # the object hook's own message (a duplicate field), not a number problem
    except ValueError as exc:
        # int() refuses numbers longer than sys.get_int_max_str_digits() with a plain ValueError.
        raise InputError(f"invalid JSON: number is too long ({exc})") from None
    if nonfinite:
        raise InputError("value must not contain NaN or infinity")
    return value


def is_integer(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool`` (JSON ``true`` is never a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def positive_integer(value: object, label: str, *, option: bool = False) -> int:
    """Return ``value`` if it is a positive non-bool int, else raise ``InputError``.

    With ``option=True`` ``label`` is an option's name and the error an :class:`OptionError`.
    """
    if not is_integer(value) or value <= 0:
        message = f"{label} must be a positive integer"
        raise OptionError("positive_integer", message, option=label) if option else InputError(message)
    return value


def unit_fraction(value: float, option: str) -> None:
    """``0 < value < 1`` for the option called ``option`` (a probability, a fraction)."""
    if not 0 < value < 1:
        raise OptionError("unit_fraction", f"{option} must be between 0 and 1", option=option)


def json_value(value: object, label: str = "value") -> None:
    """Check that ``value`` is plain finite JSON (0.4.0's check: tuples are not JSON); returns None."""
    json_copy(value, label)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            raise InputError(f"{label} must contain only JSON values")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def json_copy(value: object, label: str = "value") -> Any:
    """Check that ``value`` is plain finite JSON; return a deep copy of it (tuples become lists)."""
    try:
        text = json.dumps(value, allow_nan=False)
    except ValueError:
        raise InputError(f"{label} must not contain NaN or infinity") from None
    except TypeError as exc:
        if "keys must be" in str(exc):
            raise InputError(f"{label} object keys must be strings") from None
        raise InputError(f"{label} must contain only JSON values") from None
    _check_keys(value, label)
    return json.loads(text)


def _check_keys(value: object, label: str) -> None:
    # json.dumps silently converts int/float/bool/None keys to strings; the contract rejects them.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise InputError(f"{label} object keys must be strings")
                stack.append(sub)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


# The two 0.4.0 names below are implemented above this, the lowest floor (which imports nothing
# of modebench): each resolves its implementation by name when called, so no import runs upward.


def _above(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


def validate_run(run: Any) -> dict[str, Any]:
    """Compatibility name for :func:`modebench.run_metadata.validate_run`."""
    return _above("modebench.run_metadata", "validate_run")(run)  # type: ignore[no-any-return]


def validate_reference(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    """Validate a reference through the isolated worker; return the decoded answer object."""
    return _above("modebench.isolation.client", "reference_check")(level, domain, answer)  # type: ignore[no-any-return]


def output_exists(path: str | os.PathLike[str], error: type[InputError] = InputError) -> InputError:
    """The one message for a destination that exists and is never overwritten (``error``: the
    class to raise, :class:`OutputExistsError` where 0.4.0 raised a ``FileExistsError``)."""
    return error(f"output already exists: {os.fspath(path)}")


class OutputExistsError(InputError, FileExistsError):
    """The destination already exists and is never overwritten.

    An :class:`InputError` for this project's callers (its message is ours) and a
    ``FileExistsError`` for code written against 0.4.0, whose ``atomic_output`` raised one.
    """
