"""The module aliases ``import modebench`` registers, as 0.4.0 did (``modebench.mathir`` …).

Right after ``import modebench`` every alias is in ``sys.modules``, as in 0.4.0, and *is* its
target module (one object under both names). The object is lazy (``importlib.util.LazyLoader``):
its code, and its parent package, run on first attribute access, so ``import modebench`` (and
every worker process) stays light. A meta-path finder serves the names too, should a caller
remove them from ``sys.modules``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ALIASES: dict[str, str] = {
    "modebench.historical_prompts": "modebench.registered_prompts",
    "modebench.mathir": "modebench.domains.mathir.verifier",
    "modebench.pantry_plan": "modebench.domains.pantry_plan.verifier",
    "modebench.pantry_support_action": "modebench.domains.pantry_plan.support",
    "modebench.python_modebench": "modebench.domains.python_factors.verifier",
    "modebench.python_modebench_process": "modebench.domains.python_factors.process",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """The target module ran when it was imported; nothing more to do."""


class AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        aliased = ALIASES.get(fullname)
        if aliased is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(aliased))


class _ParentFirst(importlib.abc.Loader):
    """Runs a module with its own loader after importing its parent package, and binds it there
    (what the import system does for a submodule it loads itself)."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        parent, _, leaf = module.__name__.rpartition(".")
        package = importlib.import_module(parent)
        self.inner.exec_module(module)
        setattr(package, leaf, module)


def _lazy(target: str) -> ModuleType | None:
    """The target module, loaded on first attribute access (None: not a plain source file)."""
    found = sys.modules.get(target)
    if found is not None:
        return found
    root = Path(__file__).resolve().parents[1]  # the modebench package directory
    path = root.joinpath(*target.split(".")[1:]).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(target, path) if path.is_file() else None
    if spec is None or spec.loader is None:
        return None
    loader = importlib.util.LazyLoader(_ParentFirst(spec.loader))
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[target] = module
    loader.exec_module(module)  # deferred: runs on first attribute access
    return module


def install() -> None:
    """Register every alias in ``sys.modules`` and the finder once (idempotent)."""
    for alias, target in ALIASES.items():
        if alias not in sys.modules:
            module = _lazy(target)
            if module is not None:
                sys.modules[alias] = module
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(AliasFinder())


__all__ = ["ALIASES", "AliasFinder", "install"]
