"""Reference (``answer``) errors keep ModeBench 0.4.0's exact text and add, on a line of their
own, the field, the value found and the value expected; the formats are reachable from --help."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main
from modebench.domains import InvalidReference, plugin
from modebench.domains._pipeline import ReferenceProblem, _hint, check_reference, grade_in_process
from modebench.evaluation import evaluate
from modebench.validation import InputError
from tests.samples import sample_row

REFERENCES = {domain: sample_row(domain)["answer"] for domain in (
    "countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan"
)}  # fmt: skip


def _without(answer: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != key}


# (domain, how the valid reference is broken, the 0.4.0 message (unchanged), the hint)
CASES = [
    ("mathir", lambda a: {**a, "verifier": "mathir"},
     "answer.verifier 'mathir' does not match domain 'mathir'",
     'answer.verifier: found "mathir", expected "mathir_action_menu" or "mathir_algebra" for domain "mathir"'),
    ("countdown", lambda a: 7, "answer must be an object or a JSON-encoded object",
     'answer: found 7, expected an object with a "verifier" field (or a string holding its JSON)'),
    ("python_factors", lambda a: _without(a, "python_version"),
     "invalid python_factors reference: unsupported Python ModeBench version",
     'answer.python_version: found no such field, expected "factor-v1"'),
    ("python_factors", lambda a: {**a, "cases": [6]},
     "invalid python_factors reference: cases must contain between two and eight inputs",
     "answer.cases: found [6], expected a list of 2 to 8 integers such as [6, 10, 15]"),
    ("python_factors", lambda a: {**a, "cases": [6, 2000]},
     "invalid python_factors reference: case inputs are outside the bounded domain",
     "answer.cases[1]: found 2000, expected an integer from 4 to 1000"),
    ("python_factors", lambda a: {**a, "cases": [6, 6]},
     "invalid python_factors reference: case inputs must be unique",
     "answer.cases[1]: found 6, as in answer.cases[0], expected distinct inputs"),
    ("countdown", lambda a: {**a, "target": "18"},
     "invalid countdown reference: answer.target must contain integers",
     'answer.target: found "18", expected an integer such as 18'),
    ("countdown", lambda a: _without(a, "numbers"),
     "invalid countdown reference: answer.numbers must be a nonempty list of integers",
     "answer.numbers: found no such field, expected a nonempty list of integers such as [3, 6, 9]"),
    ("graph_coloring", lambda a: {**a, "edges": [[1, 1]]},
     "invalid graph_coloring reference: graph edges must not be self-loops",
     "answer.edges[0]: found [1, 1], expected two different vertices"),
    ("graph_coloring", lambda a: {**a, "n": 0},
     "invalid graph_coloring reference: answer.n must be a positive integer",
     "answer.n: found 0, expected the number of vertices (an integer ≥ 1)"),
    ("mathir", lambda a: {**a, "mathir_version": "linear-v0"},
     "invalid mathir reference: unsupported menu MathIR version",
     'answer.mathir_version: found "linear-v0", expected "linear-menu-v1" (for verifier "mathir_action_menu")'),
    ("mathir", lambda a: {**a, "max_steps": "4"},
     "invalid mathir reference: answer.max_steps must be a positive integer",
     'answer.max_steps: found "4", expected an integer from 1 to 4 (or no such field: 4)'),
    ("pantry_plan", lambda a: {**a, "pantry_version": "pantry-v2"},
     "invalid pantry_plan reference: unsupported PantryPlan version",
     'answer.pantry_version: found "pantry-v2", expected "pantry-v1"'),
    ("pantry_plan", lambda a: {**a, "ingredients": a["ingredients"][:5]},
     "invalid pantry_plan reference: Level 1 Pantry requires exactly six ingredients for its support mask",
     "answer.ingredients: found 5 ingredients, expected exactly 6 at level 1"),
    ("pantry_plan", lambda a: {**a, "max_ingredients": 99},
     "invalid pantry_plan reference: max_ingredients is outside [2, 6]",
     "answer.max_ingredients: found 99, expected an integer from 2 to 6 (from min_ingredients to the number of ingredients)"),
]  # fmt: skip


@pytest.mark.parametrize(("domain", "broken", "message", "hint"), CASES)
def test_each_reference_error_keeps_its_text_and_names_field_found_expected(
    domain: str, broken: Any, message: str, hint: str
) -> None:
    with pytest.raises(ReferenceProblem) as caught:
        check_reference(1, domain, broken(REFERENCES[domain]))
    assert caught.value.detail == message
    assert caught.value.hint == hint


def test_a_domain_error_without_its_own_hint_points_to_the_format() -> None:
    # Every built-in check has its own hint (tests/domains/test_reference_hints.py); a plug-in's
    # check may not, and then the hint says where the domain's reference format is written down.
    assert _hint(
        plugin("graph_coloring"), InvalidReference("answer.edges must be a list of vertex pairs")
    ) == (
        "the graph_coloring answer object, every field with a complete example: docs/scoring/graph_coloring.md"
    )
    answer = {**REFERENCES["graph_coloring"], "edges": "1-2"}
    with pytest.raises(ReferenceProblem) as caught:
        check_reference(1, "graph_coloring", answer)
    assert caught.value.hint is not None and caught.value.hint.startswith('answer.edges: found "1-2"')


def test_the_hint_crosses_the_worker_and_names_the_record() -> None:
    record = {"id": "p", "level": 1, "domain": "mathir", "responses": ["A"]}
    record["answer"] = {**REFERENCES["mathir"], "verifier": "mathir"}
    with pytest.raises(InputError) as caught:
        evaluate([record])
    assert (
        str(caught.value) == "record 1, prompt 'p': answer.verifier 'mathir' does not match domain 'mathir'"
    )
    assert caught.value.hint == (
        'answer.verifier: found "mathir", expected "mathir_action_menu" or "mathir_algebra" for domain "mathir"'
    )


def test_the_cli_prints_the_contract_line_then_the_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = _without(REFERENCES["python_factors"], "python_version")
    record = {"id": "pf", "level": 1, "domain": "python_factors", "answer": answer, "responses": ["x"]}
    (tmp_path / "in.jsonl").write_text(json.dumps(record) + "\n")
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
        "modebench: error: line 1, prompt 'pf': invalid python_factors reference: unsupported Python ModeBench version\n"
        'modebench: hint: answer.python_version: found no such field, expected "factor-v1"\n'
    )


def test_a_graded_result_never_carries_the_hint() -> None:
    # A reference that fails while grading (not in preflight) is an attempt; its bytes are 0.4.0's.
    result = grade_in_process(1, "python_factors", {"answer": {"verifier": "python_factor_function"}}, "x")
    assert result == {
        "status": "invalid_reference", "verified": False, "canonical_key": None, "graded_text": "x",
        "detail": "invalid python_factors reference: unsupported Python ModeBench version",
    }  # fmt: skip


@pytest.mark.parametrize("command", [["evaluate", "--help"], ["datasets", "card", "--help"]])
def test_help_shows_each_domains_reference_format(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(command)
    out = capsys.readouterr().out
    assert '"answer": {...}' in out
    assert 'mathir: "mathir_action_menu" or "mathir_algebra"' in out
    assert 'python_factors: "python_factor_function"' in out and "docs/scoring/python_factors.md" in out
    assert "--registry bundled --show-reference" in out
