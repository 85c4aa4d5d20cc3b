"""Shared pieces of 0.4.0's per-domain modules (``domains.<d>.{verifier,grading}``).

0.4.0 split each domain into a reference validator ``validate_reference(spec, level)`` and a
candidate grader ``grade(candidate, spec, text)``; here both are views of the one plug-in
(``domains/<d>/__init__.py``). 0.4.0's other per-domain helpers (parsers, enumerations, support
actions) are implemented in those modules over this implementation's own grammar and search.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modebench.diagnostics import result
from modebench.domains import plugin
from modebench.domains._pipeline import REFERENCES, ReferenceProblem, grade_text, resolve
from modebench.domains._protocol import InvalidReference
from modebench.validation import InputError

COMPATIBILITY_DOC = "docs/compatibility.md"


def reference_validator(domain: str) -> Callable[[Any, Any], None]:
    """``validate_reference(spec, level)``: None, or InputError with the contract's detail."""

    def validate_reference(spec: Any, level: Any) -> None:
        try:
            number, found = resolve(level, domain)
            REFERENCES.get(number, found, spec)
        except ReferenceProblem as exc:
            raise InputError(
                exc.detail.split(": ", 1)[-1] if exc.detail.startswith("invalid ") else exc.detail
            ) from None

    return validate_reference


def parsed_reference(domain: str, spec: Any, error: type[Exception], level: int = 2) -> Any:
    """The plug-in's parsed reference for one of 0.4.0's helper functions, or ``error(detail)``
    with 0.4.0's message; a spec that is not a mapping fails as 0.4.0's ``spec.get`` did."""
    if not isinstance(spec, Mapping):
        raise AttributeError(f"'{type(spec).__name__}' object has no attribute 'get'")
    try:
        return plugin(domain).validate_reference(level, dict(spec))
    except InvalidReference as exc:
        raise error(exc.detail) from None


def candidate_grader(domain: str, level: int = 2) -> Callable[[Any, Any, Any], dict[str, Any]]:
    """``grade(candidate, spec, text)``: the candidate graded, ``graded_text`` the raw text."""

    def grade(candidate: Any, spec: Any, text: Any) -> dict[str, Any]:
        try:
            number, found = resolve(level, domain)
            parsed = REFERENCES.get(number, found, spec)[1]
        except ReferenceProblem as exc:
            return result("invalid_reference", text=text if isinstance(text, str) else "", detail=exc.detail)
        graded = grade_text(number, found, parsed, candidate if isinstance(candidate, str) else "")
        graded["graded_text"] = text if isinstance(text, str) else ""
        return graded

    return grade


def bare_candidate(text: Any) -> bool:
    """0.4.0's domain validators take the candidate itself, never a response around it."""
    return isinstance(text, str) and "\\boxed" not in text


def plugin_for(domain: str) -> Any:
    return plugin(domain)


__all__ = [
    "COMPATIBILITY_DOC",
    "bare_candidate",
    "candidate_grader",
    "parsed_reference",
    "reference_validator",
]


@dataclass(frozen=True)
class PythonFactorValidation:
    canonical_key: str
    outputs: tuple[int, ...]
