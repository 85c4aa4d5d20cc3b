"""MathIR: pick a sequence of menu actions (or write a free program) that isolates x.

Each command is applied symbolically to both sides of a linear equation and normalised with
``sympy.cancel``; the canonical key is the printed sequence of symbolic states. See
``reference`` (answer validation), ``parse`` (surface and grammars), ``expr`` (expression
language), ``algebra`` (SymPy layer and printer) and ``check`` (execution and key).

The scoring contract is described in ``docs/scoring/mathir.md``.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

from modebench.domains._protocol import CardText, Correct, DomainPlugin
from modebench.domains.mathir import prompt

# SymPy is imported only when a reference is validated or a response graded (inside a worker),
# so parent processes — which only render prompts — stay light and start fast.
MENU_VERIFIER = "mathir_action_menu"
ALGEBRA_VERIFIER = "mathir_algebra"


def validate_reference(level: int, answer: dict[str, Any]) -> Any:
    from modebench.domains.mathir.reference import validate_reference as validate  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return validate(level, answer)


def grade(level: int, ref: Any, text: str) -> Correct:
    from modebench.domains.mathir.check import grade as grade_ref  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return grade_ref(level, ref, text)


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    from modebench.domains.mathir.generate import generate as generate_row  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return generate_row(level, rng)


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One menu program (``A;C;E``) per admitted mode, in key order (menu references only)."""
    from modebench.domains.mathir.check import support  # noqa: PLC0415 - SymPy-backed, loaded on first use

    ref = validate_reference(level, answer)
    return [";".join(ids) for _, ids in sorted(support(ref).items())]


def warm_up() -> None:
    """Import the SymPy layer and run it once (the worker calls this before any deadline)."""
    from modebench.domains.mathir import algebra, check, reference  # noqa: PLC0415 - SymPy-backed, loaded on first use

    assert reference.MENU_VERIFIER == MENU_VERIFIER and reference.ALGEBRA_VERIFIER == ALGEBRA_VERIFIER
    del check
    algebra.warm_up()


CARD = CardText(
    name="MathIR",
    task="Solve a parameterized equation with a restricted action language.",
    canonical_identity="Normalized symbolic state trajectory, not just the final solution.",
    source="Synthetic symbolic equations, bindings, and registered action menus.",
)


PLUGIN = DomainPlugin(
    name="mathir",
    verifiers=(MENU_VERIFIER, ALGEBRA_VERIFIER),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    card=CARD,
    generate=generate,
    witnesses=witnesses,
    warm_up=warm_up,
)

__all__ = ["PLUGIN"]


def __getattr__(name: str) -> Any:
    # 0.4.0's per-domain modules, imported on first use (docs/compatibility.md).
    if name in ("grading", "verifier"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
