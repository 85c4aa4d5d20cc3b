"""The restricted lambda language: CPython parse, shape, node cap, whitelist.

Parsing uses CPython's own parser (``ast.parse(..., mode="eval")``) because the contract's tokenizer
corner cases (comments, NFKC identifiers, line joins) are defined by it. The checks are purely
static: a forbidden construct anywhere in the tree is ``Malformed`` even in a branch that never
runs. Only a tree that passed every check is ever handed to :func:`compile_lambda`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from modebench.domains._protocol import Malformed

CANDIDATE_CAP = 240
NODE_CAP = 64
LITERAL_BOUND = 10000

#: The complete node whitelist (exact classes: CPython's parser builds no subclasses).
ALLOWED: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Expression, ast.Lambda, ast.arguments, ast.arg,
        ast.IfExp, ast.BoolOp, ast.And, ast.Or,
        ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
        ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod,
        ast.UnaryOp, ast.UAdd, ast.USub, ast.Not,
        ast.Name, ast.Load, ast.Constant,
    }
)  # fmt: skip

# Child fields of the whitelisted node classes, in ``_fields`` order so the traversal below
# yields nodes in exactly ``ast.walk`` order. Classes missing here fall back to ``_fields``.
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    cls: tuple(name for name in cls._fields if name not in ("type_comment", "id", "value", "kind", "arg"))
    for cls in ALLOWED
}
_CHILD_FIELDS[ast.arg] = ("annotation",)


def _walk(tree: ast.AST) -> list[ast.AST] | None:
    """All nodes in ``ast.walk`` (breadth-first) order, or None as soon as there are > NODE_CAP.

    Equivalent to ``list(ast.walk(tree))`` (singleton operator / ``Load`` nodes count once per
    occurrence) but several times faster, and bounded: it never visits more than NODE_CAP + 1.
    """
    nodes: list[ast.AST] = [tree]
    index = 0
    while index < len(nodes):
        if len(nodes) > NODE_CAP:
            return None
        node = nodes[index]
        index += 1
        cls = type(node)
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = cls._fields
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, ast.AST))
    return nodes if len(nodes) <= NODE_CAP else None


def _has_exact_signature(lam: ast.Lambda) -> bool:
    """``lambda n`` exactly: one positional parameter named n, nothing else."""
    args = lam.args
    return (
        not args.posonlyargs
        and len(args.args) == 1
        and args.args[0].arg == "n"
        and args.vararg is None
        and not args.kwonlyargs
        and not args.kw_defaults
        and args.kwarg is None
        and not args.defaults
    )


def _check_node(node: ast.AST) -> None:
    cls = type(node)
    if cls not in ALLOWED:
        raise Malformed(f"unsupported Python syntax: {cls.__name__}")
    if cls is ast.Name:
        if node.id != "n":  # type: ignore[attr-defined]
            raise Malformed(f"unknown name: {node.id}")  # type: ignore[attr-defined]
    elif cls is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if not isinstance(value, int) or isinstance(value, bool):
            raise Malformed("only integer literals are allowed")
        # Negative literals are UnaryOp(USub, Constant), so the bound applies to the magnitude.
        if abs(value) > LITERAL_BOUND:
            raise Malformed("integer literal is too large")


def parse_lambda(candidate: str) -> ast.Expression:
    """Parse and statically validate a candidate; ``Malformed`` on any violation.

    Check order (it only affects ``detail``): length, syntax, body is a Lambda, signature, node
    count, then per-node whitelist / name / literal checks in walk order.
    """
    text = candidate.strip()
    if not text or len(text) > CANDIDATE_CAP:
        raise Malformed("candidate is empty or too long")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        # ValueError: e.g. null bytes on some CPython versions (SyntaxError on others).
        raise Malformed("candidate is not one Python expression") from None
    lam = tree.body
    if type(lam) is not ast.Lambda:
        raise Malformed("candidate must be a lambda")
    if not _has_exact_signature(lam):
        raise Malformed("lambda must have the exact signature lambda n")
    nodes = _walk(tree)
    if nodes is None:
        raise Malformed("candidate AST is too large")
    for node in nodes:
        _check_node(node)
    return tree


def compile_lambda(tree: ast.Expression) -> Callable[[int], Any]:
    """Turn a tree accepted by :func:`parse_lambda` into the candidate function.

    Safe by construction: the whitelist admits no calls, attributes, subscripts, containers or
    names other than ``n``, so evaluating the tree can only build a lambda over integer arithmetic;
    the empty builtins mapping mirrors the reference. Compile errors the parser does not report
    (a nested ``lambda n, n: ...`` has duplicate parameters) propagate: the contract treats only
    ``ast.parse`` failures as malformed, so any other exception is an evaluator failure.
    """
    code = compile(tree, "<python_factors candidate>", "eval")
    function: Callable[[int], Any] = eval(code, {"__builtins__": {}}, {})  # noqa: S307 - whitelisted tree
    return function


@lru_cache(maxsize=4096)
def _load(candidate: str) -> tuple[Callable[[int], Any] | None, str]:
    """``(function, "")`` or ``(None, malformed detail)``; memoised on the candidate text.

    Parsing and compiling dominate grading time and depend only on the candidate, and sampled
    responses repeat a lot. Exceptions (deadline, MemoryError, compile errors) are never cached.
    """
    try:
        tree = parse_lambda(candidate)
    except Malformed as exc:
        return None, exc.detail
    return compile_lambda(tree), ""


def load_candidate(candidate: str) -> Callable[[int], Any]:
    """The validated candidate function, or ``Malformed`` (cached variant of parse + compile)."""
    function, detail = _load(candidate)
    if function is None:
        raise Malformed(detail)
    return function
