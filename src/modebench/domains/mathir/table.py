"""A precomputed, exact memo of ``cancel`` for the released MathIR families (``transitions.json``).

``cancel`` costs milliseconds per call and a fresh worker would otherwise pay it for every
distinct transition it meets. Since a normalised side's printed key determines the side itself
(rebuilding a printed key with SymPy's own constructors gives back the identical object, spec
§3.4 d — checked for every entry when the table is built), a transition is fully determined by
``(printed side, operator, printed argument)``, and so is its printed result. The table holds
those results for every transition the support search of the generator's family templates
visits (keys never see the bindings, so every reference of a family shares them), the
families' initial sides, and the printed form of every menu argument of the families (what
SymPy's constructors make of the argument's tree, before any ``cancel``). It is used only under
the SymPy version that built it, and anything not in it is computed by ``cancel`` as before.

This module never imports SymPy: the table-only path (:mod:`.tabled`) reads it in a process
that has not loaded SymPy. The version of the SymPy that *would* be imported is read from that
very package's ``release.py`` (found where ``import sympy`` would find it, without running it).
See ``docs/performance.md``.
"""

from __future__ import annotations

import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

PATH = Path(__file__).with_name("transitions.json")
SCHEMA = "modebench-mathir-transitions-v1"
MISS = object()  # not in the table: compute it

_TOKEN_SPLIT = ",()"
_RELEASE_VERSION = re.compile(r'^__version__\s*=\s*"([^"\\]+)"\s*$', re.MULTILINE)


class _Table:
    def __init__(self) -> None:
        self.sides: dict[str, str | None] = {}
        self.transitions: dict[str, str | None] = {}
        #: For each transition whose result is not representable (None above): the first term
        #: outside the tree kinds, as ``algebra.unrepresentable_term`` computes it.
        self.terms: dict[str, str] = {}
        #: Raw argument tree text → the printed SymPy form of that tree (None: not printable).
        self.arguments: dict[str, str | None] = {}


def sympy_version() -> str | None:
    """The version of the SymPy ``import sympy`` would load, without importing it (None: unknown).

    ``sympy/__init__.py`` takes ``__version__`` from ``sympy/release.py``; reading that file
    where the import system would find the package gives the same string. Anything unexpected
    (no SymPy, a namespace package, another layout) answers None, and the table is not used.
    """
    try:
        spec = importlib.util.find_spec("sympy")
    except (ImportError, ValueError):
        return None
    locations = None if spec is None else spec.submodule_search_locations
    if not locations:
        return None
    try:
        text = (Path(next(iter(locations))) / "release.py").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _RELEASE_VERSION.findall(text)
    return found[0] if len(found) == 1 else None


@lru_cache(maxsize=1)
def _load() -> _Table:
    table = _Table()
    try:
        raw: Any = json.loads(PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return table
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA or raw.get("sympy") != sympy_version():
        return table  # built under another SymPy: its cancel might print differently
    table.sides = raw["sides"]
    table.transitions = raw["transitions"]
    terms = raw.get("unsupported_terms")
    table.terms = terms if isinstance(terms, dict) else {}
    arguments = raw.get("arguments")
    table.arguments = arguments if isinstance(arguments, dict) else {}
    return table


def transition_key(side: str, op: str, arg: str) -> str:
    return f"{side}|{op}|{arg}"


def side_key(tree_text: str) -> str:
    return tree_text


def lookup_transition(side: str, op: str, arg: str) -> Any:
    """The printed result (None: not representable) or MISS."""
    return _load().transitions.get(transition_key(side, op, arg), MISS)


def lookup_term(side: str, op: str, arg: str) -> str | None:
    """The unrepresentable term of a transition the table holds as not representable, or None."""
    return _load().terms.get(transition_key(side, op, arg))


def lookup_side(tree_text: str) -> Any:
    return _load().sides.get(side_key(tree_text), MISS)


def lookup_argument(tree_text: str) -> Any:
    """The printed SymPy form of a raw argument tree (None: not printable) or MISS."""
    return _load().arguments.get(tree_text, MISS)


def tree_text(tree: Any) -> str:
    """The raw tree in the expression language's own syntax (``add(mul(a,x),b)``)."""
    if isinstance(tree, str):
        return tree
    return str(tree[0]) + "(" + ",".join(tree_text(child) for child in tree[1:]) + ")"


def tokens(text: str) -> list[str]:
    """A printed key split into names, integers and the characters ``,()``."""
    out: list[str] = []
    current = ""
    for char in text:
        if char in _TOKEN_SPLIT:
            if current:
                out.append(current)
                current = ""
            out.append(char)
        else:
            current += char
    if current:
        out.append(current)
    return out
