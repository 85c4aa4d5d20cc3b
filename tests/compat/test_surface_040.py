"""The 0.4.0 module surface, generated from ``../shared/spec/surface-0.4.0.json``.

Every module path imports; every public name exists with a compatible kind and signature (same
parameters, kinds and defaults; added parameters only with defaults); every constant equals
0.4.0's value; every alias is the module it names; every package data file is present with the
same meaning. The spec is read in place and the tests skip with a clear reason when it is absent.
"""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
import textwrap
import types
from importlib import resources
from typing import Any

import pytest

from tests.reference_data import REFERENCE, SPEC

SURFACE = SPEC / "surface-0.4.0.json"
SKIP = f"0.4.0 surface facts not found at {SURFACE} (set MODEBENCH_SPEC_DIR)"


def _surface() -> dict[str, Any]:
    if not SURFACE.is_file():
        return {"modules": {}, "aliases": {}, "package_data": []}
    loaded: dict[str, Any] = json.loads(SURFACE.read_text(encoding="utf-8"))
    return loaded


FACTS = _surface()
NAMES = [
    (module, name, info)
    for module, described in sorted(FACTS["modules"].items())
    for name, info in sorted(described["public"].items())
]


#: Names whose 0.4.0 form only made sense for 0.4.0's internals; each differs on purpose and is
#: described in docs/compatibility.md. Strict: the test fails once one of them becomes compatible.
KNOWN_DIFFERENCES: dict[str, str] = {}
#: 0.4.0 re-exports that are deliberately not the same object here (docs/compatibility.md).
NOT_THE_SAME_OBJECT = {
    "modebench.evaluation.grade_response": "looks verifier.grade_response up at call time, so either hook can be replaced",
}


def _marked(values: list[Any]) -> list[Any]:
    marked = []
    for module, name, info in values:
        reason = KNOWN_DIFFERENCES.get(f"{module}.{name}")
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        marked.append(pytest.param(module, name, info, marks=marks, id=f"{module}.{name}"))
    return marked


def _ids(values: list[Any]) -> list[str]:
    return [f"{module}.{name}" for module, name, _ in values]


def _need_spec() -> None:
    if not SURFACE.is_file():
        pytest.skip(SKIP)


# --- signatures -------------------------------------------------------------------------------


def _reference_parameters(signature: str) -> list[tuple[str, str, Any]]:
    """(name, kind, default) of a signature text; default ``inspect.Parameter.empty`` when none."""
    tree = ast.parse(f"def f{signature}: pass")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args
    found: list[tuple[str, str, Any]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[Any] = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + list(
        args.defaults
    )
    for index, arg in enumerate(positional):
        kind = "POSITIONAL_ONLY" if index < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        found.append((arg.arg, kind, defaults[index]))
    if args.vararg is not None:
        found.append((args.vararg.arg, "VAR_POSITIONAL", inspect.Parameter.empty))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        found.append((arg.arg, "KEYWORD_ONLY", inspect.Parameter.empty if default is None else default))
    if args.kwarg is not None:
        found.append((args.kwarg.arg, "VAR_KEYWORD", inspect.Parameter.empty))
    return found


def _default_value(node: Any) -> Any:
    if node is inspect.Parameter.empty:
        return node
    return ast.literal_eval(node)


def signature_problems(ours: inspect.Signature, reference: str) -> list[str]:
    """What a caller of 0.4.0's signature could pass that ours would not accept (or read differently)."""
    problems: list[str] = []
    mine = ours.parameters
    for name, kind, default in _reference_parameters(reference):
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if not any(p.kind.name == kind for p in mine.values()):
                problems.append(f"no {kind} parameter")
            continue
        if name not in mine:
            problems.append(f"missing parameter {name}")
            continue
        parameter = mine[name]
        if kind == "POSITIONAL_OR_KEYWORD" and parameter.kind.name != kind:
            problems.append(f"{name} is {parameter.kind.name}, 0.4.0 has {kind}")
        if kind == "KEYWORD_ONLY" and parameter.kind.name not in (kind, "POSITIONAL_OR_KEYWORD"):
            problems.append(f"{name} is {parameter.kind.name}, 0.4.0 has {kind}")
        expected = _default_value(default)
        if (expected is inspect.Parameter.empty) != (parameter.default is inspect.Parameter.empty):
            problems.append(f"{name}: default {parameter.default!r}, 0.4.0 {expected!r}")
        elif expected is not inspect.Parameter.empty and parameter.default != expected:
            problems.append(f"{name}: default {parameter.default!r}, 0.4.0 {expected!r}")
    reference_names = [name for name, _, _ in _reference_parameters(reference)]
    positional = [
        p.name for p in mine.values() if p.kind.name in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
    ]
    reference_positional = [
        n for n, k, _ in _reference_parameters(reference) if k in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
    ]
    reference_positional = [n for n in reference_positional if n in mine]
    if positional[: len(reference_positional)] != reference_positional:
        problems.append(f"positional order {positional}, 0.4.0 {reference_positional}")
    kinds = {name: kind for name, kind, _ in _reference_parameters(reference)}
    for name, kind in kinds.items():  # the same kinds exactly: keyword-only stays keyword-only
        if name in mine and kind not in ("VAR_POSITIONAL", "VAR_KEYWORD") and mine[name].kind.name != kind:
            problems.append(f"{name} is {mine[name].kind.name}, 0.4.0 has {kind}")
    for parameter in mine.values():
        extra = parameter.name not in reference_names
        if extra and parameter.kind.name not in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if parameter.default is inspect.Parameter.empty:
                problems.append(f"added parameter {parameter.name} has no default")
    return problems


# --- constant values --------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_FROZENSET = re.compile(r"frozenset\(\{([^{}]*)\}\)")


def _normal(text: str) -> str:
    """A repr with addresses dropped and each frozenset's members sorted (their order is hash order)."""
    text = _ADDRESS.sub("", text)
    return _FROZENSET.sub(lambda m: "frozenset({" + ", ".join(sorted(m.group(1).split(", "))) + "})", text)


def _literal(text: str) -> Any:
    """A constant's repr read back: literals, with ``frozenset({...})`` calls allowed."""

    def convert(node: ast.AST) -> Any:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "frozenset":
            return frozenset(convert(node.args[0])) if node.args else frozenset()
        if isinstance(node, ast.Dict):
            return {
                convert(k): convert(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
            }
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = [convert(item) for item in node.elts]
            return {ast.Set: set, ast.List: list, ast.Tuple: tuple}[type(node)](items)
        return ast.literal_eval(node)  # type: ignore[arg-type]

    return convert(ast.parse(text, mode="eval").body)


def constant_problem(value: Any, info: dict[str, Any]) -> str | None:
    shown: str = info["value"]
    if info["type"] not in ("_Feature",) and type(value).__name__ != info["type"]:
        return f"{type(value).__name__} where 0.4.0 has {info['type']}"
    if info["type"] == "_Feature":
        return None if value is __future__.annotations else f"{value!r} is not __future__.annotations"
    mine = _normal(repr(value))
    if shown.endswith("…"):  # the spec shows a long value's beginning only
        prefix = shown[:-1]
        if "frozenset({" in prefix:  # compare up to the last complete frozenset (members sorted)
            prefix = prefix[: prefix.rindex("})") + 2]
        prefix = _normal(prefix)
        return None if mine.startswith(prefix) else f"{mine[:120]!r} does not start with {prefix[:120]!r}"
    if "<function" in shown:
        return None if mine == _ADDRESS.sub("", shown) else f"{mine!r} != {shown!r}"
    expected = _literal(shown)
    if type(value).__name__ != info["type"]:  # a tuple is no frozenset: set operations break
        return f"{type(value).__name__} where 0.4.0 has {info['type']}"
    if info["type"] in ("frozenset", "set"):
        return None if set(value) == set(expected) else f"{sorted(value)} != {sorted(expected)}"
    return None if value == expected and type(value) is type(expected) else f"{value!r} != {expected!r}"


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", sorted(FACTS["modules"]) or ["(no spec)"])
def test_every_module_path_imports(module: str) -> None:
    _need_spec()
    assert isinstance(importlib.import_module(module), types.ModuleType)


@pytest.mark.parametrize(("module", "name", "info"), _marked(NAMES) or [("(no spec)", "", {})])
def test_every_public_name_is_compatible(module: str, name: str, info: dict[str, Any]) -> None:
    _need_spec()
    found = importlib.import_module(module)
    assert hasattr(found, name), f"{module}.{name} is missing"
    value = getattr(found, name)
    kind = info["kind"]
    home = info.get("defined_in")
    if kind in ("class", "function") and home in FACTS["modules"] and home != module:
        # A re-export in 0.4.0 is the very object of its home module here too (a class is not
        # replaced by a look-alike alias of another type).
        original = getattr(importlib.import_module(home), name, None)
        if f"{module}.{name}" not in NOT_THE_SAME_OBJECT:
            assert original is None or value is original, f"{module}.{name} is not {home}.{name}"
    if kind == "module":
        assert isinstance(value, types.ModuleType)
    elif kind == "class":
        assert isinstance(value, type), f"{module}.{name} is not a class"
        for base in info.get("bases", []):
            assert base in {cls.__name__ for cls in value.__mro__}, f"{module}.{name} lacks base {base}"
    elif kind == "function":
        assert callable(value)
        if info.get("defined_in") != "typing":  # typing constructs: present is what callers use
            problems = signature_problems(inspect.signature(value), info["signature"])
            assert not problems, f"{module}.{name}{info['signature']}: {problems}"
    else:
        problem = constant_problem(value, info)
        assert problem is None, f"{module}.{name}: {problem}"


def test_surface_counts_match_the_spec() -> None:
    _need_spec()
    assert len(FACTS["modules"]) == 43
    assert len(NAMES) == 383


@pytest.mark.parametrize(("alias", "target"), sorted(FACTS["aliases"].items()) or [("(no spec)", "")])
def test_every_alias_is_the_module_it_names(alias: str, target: str) -> None:
    _need_spec()
    import modebench

    assert importlib.import_module(alias) is importlib.import_module(target)
    assert getattr(modebench, alias.rsplit(".", 1)[1]) is importlib.import_module(target)


def test_aliases_are_in_sys_modules_right_after_import_modebench() -> None:
    """As in 0.4.0: ``import modebench`` alone registers every alias, each the very object of its
    target module; the modules' code runs on first use (a fresh interpreter shows both)."""
    _need_spec()
    script = textwrap.dedent(
        """
        import json, sys
        import modebench
        aliases = json.loads(sys.argv[1])
        present = {alias: alias in sys.modules and target in sys.modules for alias, target in aliases.items()}
        same = {alias: sys.modules[alias] is sys.modules[target] for alias, target in aliases.items()}
        deferred = "modebench.domains.mathir" not in sys.modules
        import modebench.mathir
        loaded = modebench.mathir.MATHIR_VERSION == "linear-v0" and modebench.domains.mathir.verifier is modebench.mathir
        print(json.dumps([present, same, deferred, loaded]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(FACTS["aliases"])],
        capture_output=True,
        text=True,
        check=True,
    )
    present, same, deferred, loaded = json.loads(done.stdout)
    assert present == dict.fromkeys(FACTS["aliases"], True)
    assert same == dict.fromkeys(FACTS["aliases"], True)
    assert deferred and loaded


@pytest.mark.parametrize("name", FACTS["package_data"] or ["(no spec)"])
def test_every_package_data_file_is_present(name: str) -> None:
    _need_spec()
    assert resources.files("modebench").joinpath(name).is_file()


def _reference_file(name: str) -> bytes:
    path = REFERENCE / "src" / "modebench" / name
    if not path.is_file():
        pytest.skip(f"0.4.0 package data not found at {path} (set MODEBENCH_REFERENCE_DIR)")
    return path.read_bytes()


def _packaged(name: str) -> bytes:
    return resources.files("modebench").joinpath(name).read_bytes()


@pytest.mark.parametrize("name", ["frozen_splits.json", "dataset_cards.json"])
def test_derivable_package_files_are_0_4_0_values_and_render_its_bytes(name: str) -> None:
    """The package holds 0.4.0's JSON value, never a byte copy of the reference file; the exact
    published bytes are rendered by the API (``registry_bytes`` / ``cards_bytes``)."""
    from modebench.cards import cards_bytes
    from modebench.dataset_cache import registry_bytes

    reference = _reference_file(name)
    assert json.loads(_packaged(name)) == json.loads(reference)
    assert _packaged(name) != reference
    rendered = {"frozen_splits.json": registry_bytes, "dataset_cards.json": cards_bytes}[name]()
    assert rendered == reference


def test_generated_package_files_match_their_sources() -> None:
    """The copies at the package root are exactly what ``ops/release/make_package_data.py`` writes."""
    from modebench.compat.package_data import GENERATED, generated_bytes

    for name in GENERATED:
        assert _packaged(name) == generated_bytes(name), (
            f"{name} is stale: run ops/release/make_package_data.py"
        )


def test_data_sources_has_the_0_4_0_meaning() -> None:
    """Same layout; the facts shared with 0.4.0 (Pantry source archive, dataset licence) agree."""
    reference = json.loads(_reference_file("data-sources.json"))
    ours = json.loads(_packaged("data-sources.json"))
    assert set(ours) == set(reference)
    for field in ("archive_name", "archive_sha256", "release"):
        assert ours["pantry_ingredient_source"][field] == reference["pantry_ingredient_source"][field]
    assert ours["project_dataset_license"]["spdx"] == reference["project_dataset_license"]["spdx"]


def test_walkthrough_has_the_0_4_0_meaning() -> None:
    """Same schema and record fields as 0.4.0's; the tasks are this project's own (documented)."""
    reference = json.loads(_reference_file("walkthrough.json"))
    ours = json.loads(_packaged("walkthrough.json"))
    assert ours["schema"] == reference["schema"]
    assert {tuple(sorted(r)) for r in ours["records"]} == {tuple(sorted(r)) for r in reference["records"]}
    assert {(r["level"], r["domain"]) for r in ours["records"]} == {
        (r["level"], r["domain"]) for r in reference["records"]
    }


def test_package_version_is_ours_and_contracts_are_0_4_0s() -> None:
    import modebench
    from modebench import contracts

    assert modebench.__version__ == "0.5.0"
    assert contracts.BENCHMARK_CONTRACT == "modebench-verifiers-v1"


def test_the_checks_catch_a_tuple_for_a_frozenset_and_a_looser_signature() -> None:
    """What these checks were too lenient to see before: value types and parameter kinds."""
    _need_spec()
    public = FACTS["modules"]["modebench.diagnostics"]["public"]
    members = _literal(public["STATUSES"]["value"])
    assert constant_problem(tuple(sorted(members)), public["STATUSES"]) == "tuple where 0.4.0 has frozenset"
    assert constant_problem(frozenset(members), public["STATUSES"]) is None
    header = FACTS["modules"]["modebench.evaluation"]["public"]["receipt_header"]["signature"]

    def ours_before(software: Any, preflight: Any) -> None: ...

    def positional(records_hash: Any, run: Any, dataset: Any, threshold: Any, status_counts: Any,
                   created_at: Any = None, software: Any = None) -> None: ...  # fmt: skip

    assert signature_problems(inspect.signature(ours_before), header)
    assert signature_problems(inspect.signature(positional), header)  # 0.4.0's are keyword-only


def test_streaming_progress_is_0_4_0_s_typed_dict() -> None:
    from modebench import api_types, streaming

    assert streaming.Progress is api_types.Progress
    assert streaming.Progress.__required_keys__ == frozenset({"phase", "completed_prompts", "total_prompts"})
