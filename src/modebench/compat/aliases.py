"""The module aliases ``import modebench`` registers, as 0.4.0 did (``modebench.mathir`` …).

They resolve lazily through a meta-path finder, so ``import modebench`` stays light: the alias
module *is* the target module (same object in ``sys.modules``), imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
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


def install() -> None:
    """Register the finder once (idempotent: a reload of ``modebench`` adds no second one)."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(AliasFinder())


__all__ = ["ALIASES", "AliasFinder", "install"]
