"""MathIR: pick a sequence of menu actions (or write a free program) that isolates x.

Each command is applied symbolically to both sides of a linear equation and normalised with
``sympy.cancel``; the canonical key is the printed sequence of symbolic states. See ``rules``
(reference checks without SymPy), ``reference`` (validation with SymPy), ``parse`` (surface and
grammars), ``expr`` (expression language), ``algebra`` (SymPy layer and printer), ``check``
(execution and key with SymPy), ``program`` (the grading steps both paths share), ``table`` (the
precomputed ``cancel`` memo) and ``tabled`` (validation and grading from that table alone, for
every reference it covers, so such work never imports SymPy).

The scoring contract is described in ``docs/scoring/mathir.md``.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

from modebench.domains._protocol import CardText, Correct, DomainPlugin
from modebench.domains._untimed import untimed
from modebench.domains.mathir import prompt

# SymPy is imported only for what the transition table does not decide (``tabled``), and only
# when a reference or response first needs it, so a process whose MathIR work the table covers —
# and every parent process, which only renders prompts — never loads it.
MENU_VERIFIER = "mathir_action_menu"
ALGEBRA_VERIFIER = "mathir_algebra"

_sympy_ready = False


def _sympy_layer() -> None:
    """Import the SymPy path and run it once, off any item deadline (``domains._untimed``)."""
    global _sympy_ready
    if _sympy_ready:
        return

    def load() -> None:
        from modebench.domains.mathir import algebra, check, reference  # noqa: PLC0415 - SymPy-backed, loaded on first use

        assert reference.MENU_VERIFIER == MENU_VERIFIER and reference.ALGEBRA_VERIFIER == ALGEBRA_VERIFIER
        del check
        algebra.warm_up()

    untimed(load)
    _sympy_ready = True


def validate_reference(level: int, answer: dict[str, Any]) -> Any:
    """The table's reference where it decides it completely, else the SymPy path's."""
    from modebench.domains.mathir import tabled  # noqa: PLC0415 - loaded with the domain's first reference

    found = tabled.validate(level, answer)
    if found is not None:
        return found
    _sympy_layer()
    from modebench.domains.mathir.reference import validate_reference as validate  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return validate(level, answer)


def as_sympy(ref: Any) -> Any:
    """The SymPy path's parsed reference for ``ref`` (itself if it is one), built once."""
    from modebench.domains.mathir.tabled import TableRef  # noqa: PLC0415 - loaded with the domain's first reference

    if not isinstance(ref, TableRef):
        return ref
    _sympy_layer()
    from modebench.domains.mathir.check import sympy_twin  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return sympy_twin(ref)


def grade(level: int, ref: Any, text: str) -> Correct:
    from modebench.domains.mathir import tabled  # noqa: PLC0415 - loaded with the domain's first reference

    if isinstance(ref, tabled.TableRef):
        try:
            return tabled.grade(ref, text)
        except tabled.Undecided:
            ref = as_sympy(ref)  # never expected (tabled.covered): the SymPy path decides
    from modebench.domains.mathir.check import grade as grade_ref  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return grade_ref(level, ref, text)


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    _sympy_layer()
    from modebench.domains.mathir.generate import generate as generate_row  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return generate_row(level, rng)


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One menu program (``A;C;E``) per admitted mode, in key order (menu references only)."""
    ref = as_sympy(validate_reference(level, answer))
    from modebench.domains.mathir.check import support  # noqa: PLC0415 - SymPy-backed, loaded on first use

    return [";".join(ids) for _, ids in sorted(support(ref).items())]


def warm_up() -> None:
    """Load the transition table and the table-only path (the worker calls this before any
    deadline); SymPy waits until something the table does not decide needs it."""
    from modebench.domains.mathir import table, tabled  # noqa: PLC0415 - loaded with the domain

    del tabled
    table.lookup_side("x")


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
