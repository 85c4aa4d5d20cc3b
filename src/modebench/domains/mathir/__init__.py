"""MathIR: pick a sequence of menu actions (or write a free program) that isolates x.

Each command is applied symbolically to both sides of a linear equation and normalised with
``sympy.cancel``; the canonical key is the printed sequence of symbolic states. See
``reference`` (answer validation), ``parse`` (surface and grammars), ``expr`` (expression
language), ``algebra`` (SymPy layer and printer) and ``check`` (execution and key).
"""

from __future__ import annotations

from typing import Any

from modebench.domains._protocol import DomainPlugin
from modebench.domains.mathir import prompt
from modebench.domains.mathir.check import grade, support
from modebench.domains.mathir.generate import generate
from modebench.domains.mathir.reference import ALGEBRA_VERIFIER, MENU_VERIFIER, validate_reference


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One menu program (``A;C;E``) per admitted mode, in key order (menu references only)."""
    ref = validate_reference(level, answer)
    return [";".join(ids) for _, ids in sorted(support(ref).items())]


PLUGIN = DomainPlugin(
    name="mathir",
    verifiers=(MENU_VERIFIER, ALGEBRA_VERIFIER),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["PLUGIN"]
