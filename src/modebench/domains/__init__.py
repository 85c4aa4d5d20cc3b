"""The one domain registry: the five built-in plug-ins and any installed third-party ones.

Shared code reaches a domain only through these functions; it never tests a domain's name.
The built-ins (``contracts.DOMAINS``) are the certified set behind ``modebench-verifiers-v1``;
third-party domains arrive through the ``modebench.domains`` entry-point group under
namespaced names (``package/name``, see ``_registry``), and a run that uses one records the
plug-in's origin in its receipt and journal (:func:`origin`).

The plug-in interface (:class:`DomainPlugin` and the grading signals) is re-exported here:
third-party domains import it from ``modebench.domains`` (``docs/writing-a-domain.md``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import cache
from typing import Any

from modebench.contracts import DOMAINS, Domain, normalize_domain
from modebench.domains._protocol import (
    MISSING,
    CardText,
    Correct,
    DomainPlugin,
    Incorrect,
    InvalidReference,
    Malformed,
    PromptTemplate,
    either,
    field_hint,
)
from modebench.domains._registry import discover, named


def _external(name: str) -> bool:
    # Only namespaced names can belong to a third-party plug-in; checking the separator first
    # keeps entry points unread for every built-in lookup.
    return "/" in name


@cache
def plugin(domain: Domain | str) -> DomainPlugin:
    """The plug-in of a domain name (built-ins import on first use; aliases resolve)."""
    name = normalize_domain(domain)
    if _external(name):
        found_external = named(name)
        if isinstance(found_external, str):
            raise KeyError(name)
        return found_external[0]
    module = importlib.import_module(f"modebench.domains.{name}")
    found: DomainPlugin = module.PLUGIN
    if found.name != name:
        raise RuntimeError(f"domain package {name} registers {found.name}")
    return found


def builtin_plugins() -> tuple[DomainPlugin, ...]:
    """The five built-in plug-ins, in registry order (0.4.0's surface is theirs alone)."""
    return tuple(plugin(name) for name in DOMAINS)


def is_registered(name: object) -> bool:
    """True for the exact canonical name of a built-in or of a usable installed plug-in."""
    if not isinstance(name, str):
        return False
    if name in DOMAINS:
        return True
    return _external(name) and not isinstance(named(name), str)


def is_certified(name: str) -> bool:
    """True for the five built-ins that ``modebench-verifiers-v1`` certifies."""
    return name in DOMAINS


def names() -> tuple[str, ...]:
    """Every usable domain name: the built-ins in registry order, then plug-ins sorted."""
    return DOMAINS + tuple(sorted(discover().plugins))


def origin(name: str) -> dict[str, str] | None:
    """``{"distribution", "source_sha256", "version"}`` of a plug-in; None for a built-in."""
    if not _external(name):
        return None
    found = named(name)
    if isinstance(found, str):
        raise KeyError(name)
    return found[1].as_json()


def origins(used: Iterable[str]) -> dict[str, dict[str, str]]:
    """The origins of the third-party domains among ``used`` (empty when only built-ins ran)."""
    found: dict[str, dict[str, str]] = {}
    for name in sorted(set(used)):
        described = origin(name)
        if described is not None:
            found[name] = described
    return found


def deadline_seconds(domain: object) -> float | None:
    """The grading budget of an exact registered name; None for aliases and unknown names."""
    if not is_registered(domain):
        return None
    return plugin(str(domain)).deadline_seconds


def canonical(domain: object) -> Domain:
    """``contracts.normalize_domain`` for user input: an unknown name's error lists the valid ones
    (the message is 0.4.0's; its ``hint`` names every valid domain, printed on a line of its own)."""
    try:
        return normalize_domain(domain)
    except ValueError:
        error = ValueError(unsupported(domain))
        error.hint = field_hint("domain", domain, either(names()))  # type: ignore[attr-defined]
        raise error from None


def unsupported(domain: object) -> str:
    """The message for an unknown domain; names the installed plug-ins and any broken ones.

    With no third-party plug-in installed it is exactly the 0.4.0 message.
    """
    message = f"unsupported ModeBench domain: {domain}"
    found = discover()
    if not found.plugins and not found.broken:
        return message
    extra = f" (valid domains: {', '.join(names())}"
    for label, reason in sorted(found.broken.items()):
        extra += f"; broken plug-in {label}: {reason}"
    return message + extra + ")"


__all__ = [
    # The plug-in interface, public for third-party domains (docs/writing-a-domain.md).
    "CardText",
    "Correct",
    "DomainPlugin",
    "Incorrect",
    "InvalidReference",
    "MISSING",
    "Malformed",
    "PromptTemplate",
    "field_hint",
    # The registry.
    "builtin_plugins",
    "canonical",
    "deadline_seconds",
    "is_certified",
    "is_registered",
    "names",
    "origin",
    "origins",
    "plugin",
    "unsupported",
]


def __getattr__(name: str) -> Any:
    # 0.4.0 exposed each built-in domain package as an attribute (``modebench.domains.mathir``).
    if name in DOMAINS:
        return importlib.import_module(f"modebench.domains.{name}")
    raise AttributeError(f"module 'modebench.domains' has no attribute {name!r}")
