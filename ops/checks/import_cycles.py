"""Prove that the modules under src/modebench import each other without a circle.

    python ops/checks/import_cycles.py            # exit 1 and list every circle found

Every ``import``/``from … import`` statement of a ``modebench`` module counts, wherever it sits
— module level or inside a function — except those under ``if TYPE_CHECKING:`` (never executed).
``from modebench.pkg import name`` counts as importing ``modebench.pkg.name`` when that is a
module, else ``modebench.pkg``. Names resolved with ``importlib`` at call time (0.4.0 aliases)
are not imports and are listed in docs/architecture.md instead. The circles are the strongly
connected components of the import graph with more than one module (or a module importing itself).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "modebench"


def modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                yield from _imports(child)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def edges(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        out.update(target for target in targets if target in known and target != name)
    return out


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: edges(name, path, known) for name, path in known.items()}


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found, key=len, reverse=True)


def main() -> int:
    imports = graph()
    found = circles(imports)
    count = sum(len(targets) for targets in imports.values())
    print(f"{len(imports)} modules, {count} imports of modebench modules (function-local ones included)")
    if not found:
        print("no import circle")
        return 0
    for component in found:
        members = set(component)
        print(f"circle of {len(component)}: " + ", ".join(component))
        for name in component:
            inside = sorted(imports[name] & members)
            print(f"    {name} -> {', '.join(inside)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
