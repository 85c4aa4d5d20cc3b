"""Every reference check keeps ModeBench 0.4.0's message and adds a hint naming the field, the
value found and the value expected (issue 19, item 4; ``docs/evaluation.md``).

``reference_hints.json`` holds one valid reference per domain (the examples of
``docs/scoring/``) and, per check, the one edit that breaks it, the contract's message (checked
against ModeBench 0.4.0 when the file was written) and the hint. Each case runs through the
public path, ``modebench.validation.validate_reference`` (the isolated worker, as ``evaluate``
uses it); checks that the shared verifier test hides run against the domain plug-in itself.
A walk over the source then requires that every raise site is met by some case and that no
reference error is raised without a hint, so a new check cannot arrive without one.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

import modebench
from modebench.cli import main
from modebench.domains import InvalidReference, plugin
from modebench.domains._pipeline import ReferenceProblem, check_reference
from modebench.evaluation import evaluate
from modebench.validation import InputError, validate_reference
from tests.domains.reference_cases import DATA, edited

CASES: list[dict[str, Any]] = DATA["cases"]
SOURCE = Path(modebench.__file__).parent
DOCS = Path(__file__).resolve().parents[2] / "docs"
#: ``<path>: found <value>, expected <what>`` (``domains._protocol.field_hint``).
HINT = re.compile(r"(?P<path>(answer|level|domain)[^:]*): found (?P<found>.+), expected (?P<expected>.+)")
#: Raising one of these is a reference error (``_not_decimal`` builds PantryPlan's decimal error).
RAISERS = {"InvalidReference", "ReferenceProblem", "_not_decimal"}


def _raised(case: dict[str, Any]) -> Exception:
    """The error of the case's path; ``detail``/``hint`` of a plug-in's own error are compared."""
    answer = edited(case)
    try:
        if case["path"] == "plugin":
            plugin(case["domain"]).validate_reference(case["level"], answer)
        elif case["path"] == "pipeline":
            check_reference(case["level"], case["domain"], answer)
        else:
            validate_reference(case["level"], case["domain"], answer)
    except (InputError, InvalidReference, ReferenceProblem) as exc:
        return exc
    raise AssertionError(f"{case['id']}: the edited reference was accepted")


@pytest.mark.parametrize("domain", sorted(DATA["bases"]))
def test_each_base_reference_is_valid_and_is_the_documented_example(domain: str) -> None:
    assert validate_reference(1, domain, DATA["bases"][domain]) == DATA["bases"][domain]
    page = (DOCS / "scoring" / f"{domain}.md").read_text(encoding="utf-8")
    example = re.search(r"^```json reference\n(.*?)^```", page, flags=re.MULTILINE | re.DOTALL)
    assert example is not None and json.loads(example.group(1)) == DATA["bases"][domain]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_each_check_keeps_its_text_and_hints_field_found_expected(case: dict[str, Any]) -> None:
    error = _raised(case)
    detail = getattr(error, "detail", None) if case["path"] != "public" else str(error)
    assert detail == case["detail"]
    assert error.hint == case["hint"]  # type: ignore[attr-defined]
    match = HINT.fullmatch(case["hint"])
    assert match is not None, case["hint"]
    # The hint names the field the edit touched, its parent (a missing field, an object's key) or
    # the field the edit made necessary (a target attribute every ingredient must then define).
    touched = [path for _, path, *_ in case["edits"] if path]
    if touched:
        dotted = {_dotted(path) for path in touched} | {_dotted(path[:-1]) for path in touched}
        keys = {str(path[-1]) for path in touched}
        assert any(
            match["path"].startswith(name) or name.startswith(match["path"]) for name in dotted
        ) or any(key in match["path"] for key in keys)


def _dotted(path: list[Any]) -> str:
    return "answer" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)


def test_the_hint_crosses_evaluate_and_the_cli_with_the_contract_line_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = next(case for case in CASES if case["id"] == "pantry-target-min-above-max")
    record = {"id": "p", "level": 1, "domain": "pantry_plan", "answer": edited(case), "responses": ["x"]}
    with pytest.raises(InputError) as caught:
        evaluate([record])
    assert str(caught.value) == f"record 1, prompt 'p': {case['detail']}"
    assert caught.value.hint == case["hint"]
    (tmp_path / "in.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "evaluate",
                str(tmp_path / "in.jsonl"),
                "--output",
                str(tmp_path / "o.json"),
                "--progress-every",
                "0",
            ]
        )
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        f"modebench: error: line 1, prompt 'p': {case['detail']}\nmodebench: hint: {case['hint']}\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.jsonl"]


def _raise_sites() -> set[tuple[str, int]]:
    """``(module, line)`` of every statement under ``domains/`` that raises a reference error,
    apart from the relay that adds the domain prefix to a plug-in's ``InvalidReference``."""
    sites = set()
    for path in sorted((SOURCE / "domains").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relays = {
            id(inner)
            for handler in ast.walk(tree)
            if isinstance(handler, ast.ExceptHandler)
            and isinstance(handler.type, ast.Name)
            and handler.type.id == "InvalidReference"
            for inner in ast.walk(handler)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and id(node) not in relays:
                if isinstance(node.exc.func, ast.Name) and node.exc.func.id in RAISERS:
                    sites.add((str(path.relative_to(SOURCE)), node.lineno))
    return sites


def _innermost(tb: TracebackType | None) -> tuple[str, int]:
    assert tb is not None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(Path(tb.tb_frame.f_code.co_filename).relative_to(SOURCE)), tb.tb_lineno


def _site_of(case: dict[str, Any]) -> tuple[str, int]:
    """Where the case's error is raised, found in this process (the worker's traceback is gone)."""
    answer = edited(case)
    try:
        if case["path"] == "plugin":
            plugin(case["domain"]).validate_reference(case["level"], answer)
        else:
            check_reference(case["level"], case["domain"], answer)
    except InvalidReference as exc:
        return _innermost(exc.__traceback__)
    except ReferenceProblem as exc:
        cause = exc.__context__  # a domain's InvalidReference, re-raised with the domain prefix
        return _innermost(cause.__traceback__ if isinstance(cause, InvalidReference) else exc.__traceback__)
    raise AssertionError(f"{case['id']}: the edited reference was accepted")


def test_every_raise_site_has_a_case() -> None:
    sites = _raise_sites()
    met = {_site_of(case) for case in CASES}
    assert met <= sites, f"a case stopped at an unexpected place: {sorted(met - sites)}"
    assert sites <= met, f"raise sites without a case in reference_hints.json: {sorted(sites - met)}"
    assert len(sites) >= 64  # 59 checks of the five built-in domains, 5 shared ones (as of issue 19)


def test_no_reference_error_is_constructed_without_a_hint() -> None:
    bare = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("InvalidReference", "ReferenceProblem"):
                    given = len(node.args) >= 2 or any(keyword.arg == "hint" for keyword in node.keywords)
                    if not given:
                        bare.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert bare == []


def test_the_documented_hints_are_the_ones_given() -> None:
    # docs/evaluation.md shows a sample of message/hint pairs; each must be a case here, verbatim.
    text = (DOCS / "evaluation.md").read_text(encoding="utf-8")
    section = text.split("### Reference errors", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(.+)` \| `(.+)` \|$", section, flags=re.MULTILINE)
    assert len(rows) >= 8
    given = {(case["detail"], case["hint"]) for case in CASES}
    for row in rows:
        assert row in given, row
