"""Third-party domains: discovery through the ``modebench.domains`` entry-point group.

A distribution registers a domain with one stanza in its ``pyproject.toml``::

    [project.entry-points."modebench.domains"]
    queens = "modebench_queens:PLUGIN"

and the object it names is a :class:`~modebench.domains._protocol.DomainPlugin` whose ``name`` is
``<top-level package>/<entry-point name>`` (here ``modebench_queens/queens``). The slash keeps
every external name apart from the five built-in names, so a plug-in can never shadow or
replace a certified domain, and the package prefix keeps two plug-ins from claiming each other's
names. See ``docs/writing-a-domain.md``.

A namespaced name is looked up on its own (:func:`named`): only the entry point it names is
imported, so a run loads exactly the plug-ins it uses, and runs over the built-in domains never
read entry points at all. Full discovery (every entry point) runs only to list the usable names. A plug-in that fails to import, names a
wrong object, breaks a rule of the interface or collides with another is recorded in
:attr:`Discovery.broken` under its entry-point name (and logged); it never stops the others
from loading.
"""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from modebench.diagnostics import DOMAIN_DEADLINE_SECONDS
from modebench.domains._protocol import CardText, DomainPlugin

if TYPE_CHECKING:
    # Discovery imports these itself: at module level they would lengthen every worker's start-up.
    from importlib import metadata  # noqa: PLC0415 - worker start-up: entry points only on discovery

ENTRY_POINT_GROUP = "modebench.domains"

_NAME = re.compile(r"[a-z][a-z0-9_]*/[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class PluginOrigin:
    """Where an external plug-in came from, as recorded in receipts and journals."""

    distribution: str
    version: str
    #: ``digest({relative posix path: sha256})`` over the ``*.py`` and ``*.json`` files of the
    #: plug-in's top-level package, computed like the receipt's ``package_source_sha256``.
    source_sha256: str

    def as_json(self) -> dict[str, str]:
        return {
            "distribution": self.distribution,
            "source_sha256": self.source_sha256,
            "version": self.version,
        }


@dataclass(frozen=True)
class Discovery:
    """Every external plug-in found: the usable ones by name, the broken ones with a reason."""

    plugins: dict[str, tuple[DomainPlugin, PluginOrigin]]
    #: ``"<distribution>: <entry-point name>"`` → why it cannot be used.
    broken: dict[str, str]


class _Rejected(Exception):
    """A plug-in breaks a rule of the interface; the message says which."""


def _package_source_sha256(package: str) -> str:
    from pathlib import Path  # noqa: PLC0415 - worker start-up: plug-in hashing only on discovery

    from modebench.identity import digest_json, file_sha256, source_files  # noqa: PLC0415 - worker start-up: plug-in hashing only on discovery

    module = importlib.import_module(package)
    paths = getattr(module, "__path__", None)
    if paths:
        files = source_files(Path(next(iter(paths))).resolve())
    else:  # a single-module distribution
        source = Path(str(module.__file__)).resolve()
        files = {source.name: file_sha256(source)}
    return digest_json(files)


def _check(found: Any, entry: metadata.EntryPoint) -> DomainPlugin:
    """The plug-in object if it keeps the interface's rules; else raise ``_Rejected``."""
    if not isinstance(found, DomainPlugin):
        raise _Rejected(f"{entry.value} is a {type(found).__name__}, not a DomainPlugin")
    package = entry.module.split(".", 1)[0]
    expected = f"{package}/{entry.name}"
    if found.name != expected or not _NAME.fullmatch(found.name):
        raise _Rejected(f"plug-in name {found.name!r} must be {expected!r} (lower-case package/name)")
    if (
        not isinstance(found.verifiers, tuple)
        or not found.verifiers
        or not all(isinstance(name, str) and name for name in found.verifiers)
    ):
        raise _Rejected("verifiers must be a nonempty tuple of strings")
    seconds = found.deadline_seconds
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or not 0 < seconds <= DOMAIN_DEADLINE_SECONDS
    ):
        # The worker's deadline is the plug-in's own: it may be shorter, never longer, than
        # the budget the built-in domains have.
        raise _Rejected(f"deadline_seconds must be in (0, {DOMAIN_DEADLINE_SECONDS}]")
    for attribute in ("validate_reference", "grade", "prompt"):
        if not callable(getattr(found, attribute)):
            raise _Rejected(f"{attribute} must be callable")
    for attribute in ("generate", "witnesses", "warm_up"):
        value = getattr(found, attribute)
        if value is not None and not callable(value):
            raise _Rejected(f"{attribute} must be callable or None")
    if not isinstance(found.card, CardText):
        raise _Rejected("card must be a CardText")
    return found


def _load(entry: metadata.EntryPoint) -> tuple[DomainPlugin, PluginOrigin]:
    found = _check(entry.load(), entry)
    distribution = entry.dist
    if distribution is None:  # pragma: no cover - entry points always come from a distribution here
        raise _Rejected("entry point has no distribution")
    origin = PluginOrigin(
        distribution=distribution.metadata["Name"],
        version=distribution.version,
        source_sha256=_package_source_sha256(entry.module.split(".", 1)[0]),
    )
    return found, origin


def _label(entry: metadata.EntryPoint) -> str:
    distribution = entry.dist.metadata["Name"] if entry.dist is not None else "?"
    return f"{distribution}: {entry.name}"


def _contained_load(entry: metadata.EntryPoint) -> tuple[DomainPlugin, PluginOrigin] | str:
    """Load one entry point; any failure (even ``SystemExit`` at import) becomes its reason.

    The interpreter settings a module can change at import and a built-in verdict depends on
    (``sys.set_int_max_str_digits``, the recursion limit, the decimal context) are put back
    afterwards (:mod:`modebench.domains._interpreter`), so loading a plug-in never flips one.
    """
    from modebench.domains import _interpreter  # noqa: PLC0415 - only when a plug-in is loaded

    saved = _interpreter.snapshot()
    try:
        return _load(entry)
    except _Rejected as exc:
        return str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # third-party code at import: SystemExit and all
        return f"cannot be loaded: {type(exc).__name__}: {exc}"
    finally:
        _interpreter.restore(saved)


@cache
def named(name: str) -> tuple[DomainPlugin, PluginOrigin] | str:
    """The plug-in registered under the namespaced ``name``, loading only its entry point.

    ``package/entry`` names exactly one entry point (``entry`` in the group, its module under
    top-level ``package``), found in the metadata without importing anything else, so a run loads
    the plug-ins it uses and no other. Returns why not (a string) when it is missing or unusable.
    """
    from importlib import metadata  # noqa: PLC0415 - worker start-up: entry points only on discovery

    package, _, entry_name = name.partition("/")
    matches = [
        entry
        for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)
        if entry.name == entry_name and entry.module.split(".", 1)[0] == package
    ]
    if not matches:
        return "not installed"
    if len({(_label(entry), entry.value) for entry in matches}) > 1:
        return f"duplicate domain name {name}"
    loaded = _contained_load(matches[0])
    if isinstance(loaded, tuple) and loaded[0].name != name:  # pragma: no cover - _check ensures it
        return f"plug-in name {loaded[0].name!r} must be {name!r}"
    return loaded


@cache
def discover() -> Discovery:
    """Load every ``modebench.domains`` entry point once; never raises for a broken plug-in.

    Only for listing every usable name (``names()``, the unknown-domain message); grading and
    lookups of one name go through :func:`named`, which imports that plug-in alone.
    """
    from importlib import metadata  # noqa: PLC0415 - worker start-up: entry points only on discovery

    plugins: dict[str, tuple[DomainPlugin, PluginOrigin]] = {}
    owners: dict[str, str] = {}
    broken: dict[str, str] = {}
    entries = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (_label(e), e.value))
    for entry in entries:
        label = _label(entry)
        loaded = _contained_load(entry)
        if isinstance(loaded, str):
            broken[label] = loaded
            continue
        found, origin = loaded
        if found.name in plugins:
            # Neither wins: which one graded a run must never depend on installation order.
            first = owners[found.name]
            plugins.pop(found.name)
            broken[first] = broken[label] = f"duplicate domain name {found.name}"
            continue
        if found.name in owners:  # a third copy of an already refused name
            broken[label] = f"duplicate domain name {found.name}"
            continue
        plugins[found.name] = (found, origin)
        owners[found.name] = label
    import logging  # noqa: PLC0415 - only discovery logs, and only about broken plug-ins

    for label, reason in broken.items():
        logging.getLogger("modebench.domains").warning(
            "modebench domain plug-in %s is not usable: %s", label, reason
        )
    return Discovery(plugins, broken)


__all__ = ["ENTRY_POINT_GROUP", "Discovery", "PluginOrigin", "discover", "named"]
