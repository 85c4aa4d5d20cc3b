"""The plug-in interface every domain implements, and the three grading signals.

A domain never builds result dicts itself: it returns :class:`Correct` or raises one of
:class:`Malformed`, :class:`Incorrect`, :class:`InvalidReference`. Any other exception escaping a
domain is an *evaluator* failure (``worker_failure``), never a wrong answer, so domain code must
catch only the specific exceptions it expects (never ``BaseException``: deadlines are delivered
as a ``BaseException`` subclass and must pass through).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class InvalidReference(Exception):
    """The reference (task answer) breaks a domain rule. ``detail`` excludes the domain prefix.

    ``detail`` is the contract's text (ModeBench 0.4.0's). ``hint`` names the field, the value
    found and the value expected, phrased by :func:`field_hint` (``answer.cases: found [6],
    expected a list of 2 to 8 integers …``); it is shown beside the detail, never inside it, and
    never recorded in a result. Every built-in check gives one (a test walks them).
    """

    def __init__(self, detail: str, hint: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.hint = hint


#: ``shown(answer.get(name, MISSING))`` says the field is absent rather than null.
MISSING: Any = object()


def shown(value: Any) -> str:
    """A found value for a hint: short JSON (``no such field`` when absent)."""
    if value is MISSING:
        return "no such field"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


@dataclass(frozen=True)
class Said:
    """A found value said in words rather than shown as JSON (``5 ingredients``)."""

    text: str


def several(count: int, one: str, many: str) -> Said:
    """A count said in words for a hint: ``1 entry``, ``0 entries``."""
    return Said(f"{count} {one if count == 1 else many}")


def field_hint(path: str, found: Any, expected: str) -> str:
    """The one phrasing of every reference hint: ``<path>: found <value>, expected <what>``.

    ``path`` is the dotted path of the field in the record (``answer.cases[1]``); ``found`` is
    shown as short JSON (``MISSING`` reads "no such field") unless it is :class:`Said` words;
    ``expected`` says concretely what would pass (a type, the allowed values, a range or the
    exact value, in JSON spelling where it names a value).
    """
    said = found.text if isinstance(found, Said) else shown(found)
    return f"{path}: found {said}, expected {expected}"


def either(values: Any) -> str:
    """Allowed values as JSON, joined the way a hint says them: ``"a"``, ``"a" or "b"``, ``1, 2 or 3``."""
    texts = [json.dumps(value, ensure_ascii=False) for value in values]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]


class Malformed(Exception):
    """The response has no candidate or the candidate is outside the allowed grammar."""

    def __init__(self, detail: str, graded_text: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.graded_text = graded_text  # None: the raw response is echoed


class Incorrect(Exception):
    """The candidate is well-formed but does not solve the task."""

    def __init__(self, detail: str, graded_text: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.graded_text = graded_text


@dataclass(frozen=True)
class Correct:
    """A verified answer with its canonical mode key."""

    key: str
    graded_text: str | None = None  # None: the raw response is echoed
    extra: Mapping[str, Any] = field(default_factory=dict)  # extra result members (e.g. outputs)


@dataclass(frozen=True)
class PromptTemplate:
    """How one (level, domain) is presented to a model under one condition."""

    template_name: str
    system: str
    #: Transforms the row's problem into the user message (identity for most domains).
    user: Callable[[str], str] = staticmethod(lambda problem: problem)
    response_surface: str = "boxed_final_answer"
    canonical_action_task: str = "none"
    trusted_quantity_projection: bool = False
    reference_syntax_profile: str = "none"
    reference_fixed_action_mask: bool = False


@dataclass(frozen=True)
class CardText:
    """How dataset cards describe a domain (``docs/datasets.md``, "Dataset cards")."""

    name: str  # display name, e.g. in "Level 4 MathIR is not difficulty-matched"
    task: str
    canonical_identity: str
    source: str
    upstream_license: str | None = None
    limitation: str | None = None  # an extra limitation line, if the domain needs one


@dataclass(frozen=True)
class DomainPlugin:
    """Everything shared machinery may know about a domain."""

    #: A built-in name, or ``package/name`` for a third-party plug-in (``domains._registry``).
    name: str
    #: Values of ``answer.verifier`` this domain accepts.
    verifiers: tuple[str, ...]
    #: Worker wall-clock budget for one grading operation.
    deadline_seconds: float
    #: ``(level, answer_object) -> parsed reference``; raises InvalidReference. Result is immutable.
    validate_reference: Callable[[int, dict[str, Any]], Any]
    #: ``(level, parsed_reference, response_text) -> Correct``; raises Malformed / Incorrect.
    grade: Callable[[int, Any, str], Correct]
    #: ``(level, condition) -> PromptTemplate``; raises ValueError for an unknown condition.
    prompt: Callable[[int, str], PromptTemplate]
    #: Dataset-card sentences of the domain.
    card: CardText
    #: ``(level, rng) -> row`` deterministic task generator, or None while not available.
    generate: Callable[[int, random.Random], dict[str, Any]] | None = None
    #: ``(level, answer_object) -> responses``: correct responses in pairwise distinct modes (at
    #: least two for a multi-mode task), used by the walkthrough and the plug-in contract tests.
    witnesses: Callable[[int, dict[str, Any]], list[str]] | None = None
    #: Imports heavy dependencies; workers call it before taking work so that no import ever
    #: runs under a grading deadline (domains that import everything eagerly need none).
    warm_up: Callable[[], None] | None = None


__all__ = [
    "CardText",
    "Correct",
    "DomainPlugin",
    "Incorrect",
    "InvalidReference",
    "MISSING",
    "Malformed",
    "PromptTemplate",
    "Said",
    "either",
    "field_hint",
    "several",
    "shown",
]
