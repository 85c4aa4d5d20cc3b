"""Count the structure of src/modebench: modules, function-local imports of modebench modules and
how many carry a comment on their line (``# noqa: PLC0415 - reason`` or any ``#`` comment).

    python evidence/map-core/structure.py [src-root]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "src"
    files = sorted((root / "modebench").rglob("*.py"))
    local = commented = 0
    by_area: dict[str, list[int]] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        seen: set[int] = set()
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("modebench"):
                    pass
                elif isinstance(node, ast.Import) and any(a.name.startswith("modebench") for a in node.names):
                    pass
                else:
                    continue
                if node.lineno in seen:  # a nested function's import, met again from its parent
                    continue
                seen.add(node.lineno)
                local += 1
                span = lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
                has = any("#" in line for line in span)
                commented += has
                area = path.relative_to(root / "modebench").parts[0].removesuffix(".py")
                counts = by_area.setdefault(area, [0, 0])
                counts[0] += 1
                counts[1] += has
    print(f"modules: {len(files)}")
    print(f"function-local imports of modebench modules : {local}, commented: {commented}")
    for area, (n, c) in sorted(by_area.items(), key=lambda item: -item[1][0]):
        print(f"  {area}: {n} ({c} commented)")


if __name__ == "__main__":
    main()
