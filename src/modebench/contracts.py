"""Contract identifiers and level/domain normalisation shared by every layer."""

from __future__ import annotations

import importlib
from typing import Final, Literal, cast

Domain = Literal["countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan"]

#: Canonical names of the five built-in (certified) domains, in the registry order of the
#: reference. Installed third-party domains are listed by ``modebench.domains.names()``.
DOMAINS: Final[tuple[Domain, ...]] = (
    "graph_coloring",
    "countdown",
    "python_factors",
    "mathir",
    "pantry_plan",
)
DOMAIN_ALIASES: Final[dict[str, Domain]] = {"pantry": "pantry_plan"}
BENCHMARK_CONTRACT: Final = "modebench-verifiers-v1"
DIAGNOSTIC_CONTRACT: Final = "modebench-status-v1"
LEVELS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5)
#: The levels as the text ``normalize_level`` accepts (``"3"``, and ``"level3"`` once stripped).
_LEVEL_TEXTS: Final[dict[str, int]] = {str(level): level for level in LEVELS}

LEVEL_ERROR: Final = "level must be 1, 2, 3, 4, or 5"

#: Admission facts of the frozen 0.4.0 release: Level 4 is not admitted as a whole, and its MathIR
#: cell is additionally not difficulty-matched.
NOT_ADMITTED_LEVELS: Final[frozenset[int]] = frozenset({4})
NOT_DIFFICULTY_MATCHED: Final[frozenset[tuple[int, str]]] = frozenset({(4, "mathir")})


def normalize_level(level: object) -> int:
    """Return the integer level for ``3``, ``"3"`` or ``"level3"``; raise ``ValueError`` otherwise."""
    if isinstance(level, bool):
        raise ValueError(LEVEL_ERROR)
    if type(level) is int:
        if level in LEVELS:
            return level
        raise ValueError(LEVEL_ERROR)
    # The reference compares str() of the value after dropping one "level" prefix from strings,
    # so numpy integers pass and 3.0 or " 1" do not.
    text = level.removeprefix("level") if isinstance(level, str) else str(level)
    if text in _LEVEL_TEXTS:
        return _LEVEL_TEXTS[text]
    raise ValueError(LEVEL_ERROR)


def normalize_domain(domain: object) -> Domain:
    """Return the canonical domain name (``pantry`` is an alias); raise ``ValueError`` otherwise.

    A namespaced name (``package/name``) is accepted when an installed third-party plug-in
    registers it (``docs/writing-a-domain.md``); it is typed as :data:`Domain` so that the 0.4.0
    signatures stay as they were, though it is none of the five literals.
    """
    if isinstance(domain, str):
        if domain in DOMAINS:
            return domain
        alias = DOMAIN_ALIASES.get(domain)
        if alias is not None:
            return alias
        # A third-party name asks the plug-in registry above this floor, resolved by name when
        # needed (entry points are read only then; contracts import nothing of modebench).
        if "/" in domain and importlib.import_module("modebench.domains").is_registered(domain):
            return cast(Domain, domain)
    raise ValueError(f"unsupported ModeBench domain: {domain}")


def normalize_task_identity(level: object, domain: object) -> tuple[int, Domain]:
    """Normalise a ``(level, domain)`` pair; the level is checked first."""
    return normalize_level(level), normalize_domain(domain)


def install_hint(extra: str) -> str:
    """How to install an optional extra of this project, the same words in every message.

    Never the package index's ``modebench``: the index holds the published ModeBench 0.4.0
    under that name. This project installs from its checkout (README, "Install").
    """
    return f"pip install -e '.[{extra}]' in the modebench checkout"


#: The entry-point group through which third-party domain plug-ins are installed.
DOMAIN_ENTRY_POINT_GROUP = "modebench.domains"

__all__ = [
    "BENCHMARK_CONTRACT",
    "DOMAIN_ENTRY_POINT_GROUP",
    "DIAGNOSTIC_CONTRACT",
    "DOMAINS",
    "DOMAIN_ALIASES",
    "Domain",
    "LEVELS",
    "NOT_ADMITTED_LEVELS",
    "NOT_DIFFICULTY_MATCHED",
    "install_hint",
    "normalize_domain",
    "normalize_level",
    "normalize_task_identity",
]
