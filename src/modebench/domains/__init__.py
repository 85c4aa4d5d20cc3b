"""Domain registry: an explicit tuple of the five plug-ins, loaded on first use.

Shared code reaches a domain only through :func:`plugin`; it never tests a domain's name.
"""

from __future__ import annotations

import importlib
from functools import cache

from modebench.contracts import DOMAINS, Domain, normalize_domain
from modebench.domains._protocol import DomainPlugin


@cache
def plugin(domain: Domain) -> DomainPlugin:
    """The plug-in of a canonical domain name (import happens once, on first use)."""
    module = importlib.import_module(f"modebench.domains.{normalize_domain(domain)}")
    found: DomainPlugin = module.PLUGIN
    if found.name != domain:
        raise RuntimeError(f"domain package {domain} registers {found.name}")
    return found


def all_plugins() -> tuple[DomainPlugin, ...]:
    """Every plug-in, in registry order (used to warm a worker up before it takes work)."""
    return tuple(plugin(name) for name in DOMAINS)


__all__ = ["all_plugins", "plugin"]
