"""The graph-coloring domain: proper 3-colourings of small graphs with some colours shown.

A response names the colours of the hidden vertices (or of all vertices); its mode key is the
complete colouring ``graph_coloring:<c1..cn>``.

The scoring contract is described in ``docs/scoring/graph_coloring.md``.
"""

from __future__ import annotations

import importlib
from itertools import product
from typing import Any

from modebench.domains._protocol import CardText, DomainPlugin, Incorrect
from modebench.domains.graph_coloring import prompt
from modebench.domains.graph_coloring.generate import generate
from modebench.domains.graph_coloring.grade import grade
from modebench.domains.graph_coloring.reference import validate_reference


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """Every completion, written as the hidden vertices' colours (all colours without hidden ones)."""
    ref = validate_reference(level, answer)
    width = len(ref.hidden) or ref.n
    found: dict[str, str] = {}
    for digits in product("123", repeat=width):
        text = ", ".join(digits)
        try:
            found.setdefault(grade(level, ref, text).key, text)
        except Incorrect:
            continue
    return list(found.values())


CARD = CardText(
    name="Graph Coloring",
    task="Find a proper coloring, respecting any fixed vertex colors.",
    canonical_identity="Complete vertex color vector, including reconstructed fixed entries.",
    source="Synthetic graphs and executable edge/fixed-color constraints.",
)


PLUGIN = DomainPlugin(
    name="graph_coloring",
    verifiers=("graph_coloring",),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    card=CARD,
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["PLUGIN"]


def __getattr__(name: str) -> Any:
    # 0.4.0's per-domain modules, imported on first use (docs/compatibility.md).
    if name in ("grading", "verifier"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
