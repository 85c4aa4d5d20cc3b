"""The ``python_factors`` domain: return a proper divisor of each case with a restricted lambda.

Pipeline: surface extraction (:mod:`.surface`) → restricted-language parse
(:mod:`.language`) → execution and key (:mod:`.check`); :mod:`.generate` builds task rows.
``graded_text`` is always the raw response, so no override is passed.

The scoring contract is described in ``docs/scoring/python_factors.md``.
"""

from __future__ import annotations

import importlib
from itertools import islice, product
from typing import Any

from modebench.domains._protocol import CardText, Correct, DomainPlugin
from modebench.domains.python_factors import prompt
from modebench.domains.python_factors.check import mode_key, run_cases
from modebench.domains.python_factors.generate import generate
from modebench.domains.python_factors.language import load_candidate
from modebench.domains.python_factors.reference import (
    VERIFIER,
    FactorReference,
    proper_divisors,
    validate_reference,
)
from modebench.domains.python_factors.surface import extract_candidate


def grade(level: int, ref: FactorReference, text: str) -> Correct:
    """Grade one response; raises ``Malformed`` / ``Incorrect`` (level plays no role)."""
    del level
    function = load_candidate(extract_candidate(text))
    outputs = run_cases(function, ref.cases)
    return Correct(mode_key(outputs), extra={"outputs": outputs})


#: Witnesses listed per task: the mode count is a product of divisor counts and can be large.
MAX_WITNESSES = 16


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """Dispatch lambdas for the first output vectors in lexicographic order (distinct modes)."""
    cases = validate_reference(level, answer).cases
    found = []
    for outputs in islice(product(*(proper_divisors(value) for value in cases)), MAX_WITNESSES):
        arms = "".join(f"{d} if n=={v} else " for v, d in zip(cases[:-1], outputs[:-1]))
        found.append(f"lambda n: {arms}{outputs[-1]}")
    return found


CARD = CardText(
    name="Python Factors",
    task="Return proper divisors for the given inputs using a restricted lambda.",
    canonical_identity="Executed divisor vector; distinct programs can share a mode.",
    source="Synthetic integer test cases and bounded program certificates.",
)


PLUGIN = DomainPlugin(
    name="python_factors",
    verifiers=(VERIFIER,),
    deadline_seconds=0.25,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    card=CARD,
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["PLUGIN", "grade"]


def __getattr__(name: str) -> Any:
    # 0.4.0's per-domain modules, imported on first use (docs/compatibility.md).
    if name in ("grading", "process", "verifier"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
