"""MathIR without SymPy where the transition table decides (``domains/mathir/tabled.py``).

* A run without MathIR and a run whose MathIR the table covers import no SymPy, in the parent
  or in its worker. The processes are observed through a stand-in ``sympy`` package put first
  on ``PYTHONPATH``: importing it leaves a file named by the importing process's id, then loads
  the real SymPy in its place (so a run that does need SymPy still grades exactly).
* A reference or program outside the table's coverage is graded by the SymPy path, exactly.
* A seeded differential of both paths (``ops/fidelity/differential_mathir_table.py``, reduced) agrees
  result for result.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from modebench.domains import plugin
from modebench.domains.mathir import check, reference, table, tabled
from modebench.domains.mathir.generate import generate

ROOT = Path(__file__).resolve().parents[3]
RUN = {
    "model": {"id": "table-test", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}

#: The stand-in: mark this process, step aside, and load the real SymPy under the same name.
SHIM = textwrap.dedent(
    """
    import importlib, os, sys
    _here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(os.environ["SYMPY_IMPORT_MARKERS"], str(os.getpid())), "w") as _marker:
        _marker.write("imported")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    del sys.modules["sympy"]
    sys.modules["sympy"] = importlib.import_module("sympy")
    """
)

DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from modebench.streaming import evaluate_file
    summary = evaluate_file(sys.argv[1], sys.argv[2], run=json.loads(sys.argv[3]), workers=1)
    print(json.dumps({"status": summary["status"], "pid": os.getpid(), "parent_sympy": "sympy" in sys.modules}))
    """
)


def _records(domain: str, count: int, wrong: str, answer_of: Any = None) -> list[dict[str, Any]]:
    found = plugin(domain)
    assert found.generate is not None and found.witnesses is not None
    out = []
    for index in range(count):
        level = 1 + index % 5
        row = found.generate(level, random.Random(f"table-only-{domain}-{index}"))
        answer = json.loads(row["answer"])
        witnesses = found.witnesses(level, answer)[:3]
        if answer_of is not None:
            answer = answer_of(answer)
        responses = ["\\boxed{" + w + "}" for w in witnesses] + [wrong, "", "\\boxed{}", "I am not sure."]
        out.append(
            {
                "id": f"{domain}-{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": answer,
                "responses": responses,
            }
        )
    return out


GRADE_DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from modebench.api import Task, grade
    task = Task("m", 1, "mathir", "Solve for x.", json.loads(sys.argv[1]))
    statuses = [grade(task, text)["status"] for text in ("\\\\boxed{C;F}", "\\\\boxed{F;F}", "C;G")]
    print(json.dumps({"statuses": statuses, "pid": os.getpid(), "parent_sympy": "sympy" in sys.modules}))
    """
)


def _shimmed(tmp_path: Path, argv: list[str]) -> tuple[dict[str, Any], list[int]]:
    """Run ``python -c argv...`` with the stand-in first on the path; its last JSON line and the
    pids of every process that imported SymPy."""
    shim = tmp_path / "shim" / "sympy"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(SHIM, encoding="utf-8")
    version = table.sympy_version()
    assert version is not None
    (shim / "release.py").write_text(f'__version__ = "{version}"\n', encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim.parent), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["SYMPY_IMPORT_MARKERS"] = str(markers)
    done = subprocess.run([sys.executable, "-c", *argv], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary, sorted(int(path.name) for path in markers.iterdir())


def _run(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[dict[str, Any], list[int]]:
    """Evaluate ``records`` in a fresh interpreter; its summary and the pids that imported SymPy."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return _shimmed(tmp_path, [DRIVER, str(source), str(tmp_path / "out.json"), json.dumps(RUN)])


def test_a_run_without_mathir_imports_no_sympy(tmp_path: Path) -> None:
    records = _records("countdown", 5, "\\boxed{0}") + _records("graph_coloring", 5, "\\boxed{0}")
    summary, imported = _run(tmp_path, records)
    assert summary["status"] == "completed"
    assert imported == [] and summary["parent_sympy"] is False


def test_a_run_whose_mathir_the_table_covers_imports_no_sympy(tmp_path: Path) -> None:
    records = _records("mathir", 10, "\\boxed{A;A}") + _records("countdown", 5, "\\boxed{0}")
    summary, imported = _run(tmp_path, records)
    assert summary["status"] == "completed"
    assert imported == [], "a process of the run imported SymPy"
    assert summary["parent_sympy"] is False
    receipt = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert "mathir" in json.dumps(receipt)


def test_a_mathir_grade_call_the_table_covers_imports_no_sympy(tmp_path: Path) -> None:
    """``api.grade`` (its worker included) on the documented MathIR reference (docs/scoring)."""
    answer = {
        "verifier": "mathir_action_menu",
        "mathir_version": "linear-menu-v1",
        "bindings": {"a": 2, "b": -9, "c": -1},
        "initial_lhs": "add(div(x,a),b)",
        "initial_rhs": "c",
        "max_steps": 4,
        "actions": {
            "A": "div(a)",
            "B": "add(b)",
            "C": "sub(b)",
            "D": "sub(c)",
            "E": "sub(mul(a,b))",
            "F": "mul(a)",
        },
    }
    summary, imported = _shimmed(tmp_path, [GRADE_DRIVER, json.dumps(answer)])
    assert summary["statuses"] == ["correct", "incorrect", "malformed"]
    assert imported == [] and summary["parent_sympy"] is False


def test_the_stand_in_sees_a_worker_that_needs_sympy(tmp_path: Path) -> None:
    """The control: a free-program reference is outside the table, so its worker loads SymPy
    (and the parent still does not); the run completes as any other."""

    def free(answer: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in answer.items() if k != "actions"}
        return {**out, "verifier": "mathir_algebra", "mathir_version": "linear-v0"}

    records = _records("mathir", 2, "\\boxed{sub(b);div(a)}", answer_of=free)
    summary, imported = _run(tmp_path, records)
    assert summary["status"] == "completed"
    assert imported and summary["pid"] not in imported and summary["parent_sympy"] is False


def _answer(level: int = 1, seed: str = "outside") -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(generate(level, random.Random(seed))["answer"])
    return answer


def _both(level: int, answer: dict[str, Any], text: str) -> tuple[Any, Any]:
    """(plug-in's result, SymPy path's result) as (status, detail or key)."""

    def outcome(validate: Any, grade: Any) -> Any:
        try:
            ref = validate(level, answer)
            verdict = grade(level, ref, text)
        except Exception as exc:  # the grading signals: Malformed, Incorrect, InvalidReference
            return type(exc).__name__, getattr(exc, "detail", str(exc))
        return "Correct", verdict.key

    found = plugin("mathir")
    return outcome(found.validate_reference, found.grade), outcome(reference.validate_reference, check.grade)


def test_a_menu_outside_the_table_is_graded_by_sympy() -> None:
    answer = _answer()
    answer["actions"] = dict(answer["actions"], G="add(neg(b))", H="mul(neg(a))")  # arguments not tabled
    found = plugin("mathir")
    ref = found.validate_reference(1, answer)
    assert isinstance(ref, reference.ParsedRef)  # the SymPy path's own reference
    for program in ("G", "G;H", "H;G;A", "A;G", "C;F", "F;E", "H;H"):
        table_side, sympy_side = _both(1, answer, "\\boxed{" + program + "}")
        assert table_side == sympy_side, program


def test_a_free_program_reference_is_graded_by_sympy() -> None:
    answer = {k: v for k, v in _answer().items() if k != "actions"}
    answer.update(verifier="mathir_algebra", mathir_version="linear-v0")
    assert not isinstance(plugin("mathir").validate_reference(1, answer), tabled.TableRef)
    for program in ("sub(b);div(a)", "mul(a);sub(mul(a,b))", "div(a);div(a)", "add(x)", "sub(neg(b))"):
        table_side, sympy_side = _both(1, answer, "\\boxed{" + program + "}")
        assert table_side == sympy_side, program


def test_a_step_missing_from_the_table_falls_back_to_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Coverage is checked when the reference is read; should a transition still be missing at
    grading time, the program is graded by the SymPy path, with the same result."""
    answer = _answer(3, "missing-step")
    found = plugin("mathir")
    ref = found.validate_reference(3, answer)
    assert isinstance(ref, tabled.TableRef)
    programs = [";".join(ids) for ids in (["A"], ["B", "C"], ["C", "D", "E"], ["F", "F"])]
    expected = {p: _both(3, answer, "\\boxed{" + p + "}")[1] for p in programs}
    monkeypatch.setattr(tabled.table, "lookup_transition", lambda side, op, arg: table.MISS)
    for program in programs:
        ref.memo.clear()
        try:
            got: Any = ("Correct", found.grade(3, ref, "\\boxed{" + program + "}").key)
        except Exception as exc:
            got = (type(exc).__name__, getattr(exc, "detail", str(exc)))
        assert got == expected[program], program


def test_zero_slope_and_zero_reciprocal_agree_with_sympy() -> None:
    """A zero x coefficient is decided by the table (the same "not uniquely linear" error); a zero
    under a reciprocal is left to SymPy (its ``zoo`` quirk, vector v87)."""
    answer = _answer(1, "zero")
    names = sorted(answer["bindings"])
    for changed in ({name: 0 for name in names}, {names[0]: 0}, {names[-1]: 0}):
        varied = {**answer, "bindings": {**answer["bindings"], **changed}}
        for program in ("A", "B;C", "C;F", "F;E", "D;D"):
            table_side, sympy_side = _both(1, varied, "\\boxed{" + program + "}")
            assert table_side == sympy_side, (changed, program)


def _differential() -> Any:
    spec = importlib.util.spec_from_file_location(
        "differential_mathir_table", ROOT / "ops" / "fidelity" / "differential_mathir_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # The script puts the checkout (and src/) first on sys.path when it runs; restored here, or the
    # rest of this test process would find src/modebench.egg-info before the installed
    # distribution (Inspect then no longer names modebench's tasks ``modebench/...``).
    saved = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def test_seeded_differential_of_both_paths() -> None:
    """``ops/fidelity/differential_mathir_table.py`` at a few thousand programs (the full run: evidence/)."""
    differential = _differential()
    args = SimpleNamespace(
        references=40, programs_per_reference=40, variant_every=8, programs_per_variant=10, seed=20261208
    )
    found = differential.compare([("generated", differential.generated(args))])
    summary = found.summary()
    assert summary["differences"] == 0, summary["first_differences"]
    tally = summary["corpora"]["generated"]
    assert summary["programs"] >= 2000
    # both paths were exercised: table-decided references, SymPy ones, invalid ones, every status
    assert (
        tally["references_table_decided"] >= 40
        and tally["references_sympy"] > 0
        and tally["references_invalid"] > 0
    )
    for status in ("correct", "incorrect", "malformed", "invalid_reference"):
        assert tally[f"status:{status}"] > 0, status


def test_a_load_met_inside_an_item_is_not_charged_to_its_deadline() -> None:
    """SymPy now loads when an item first needs it; the worker stops that item's clock around the
    load (``domains._untimed``), while the item's own work stays under its deadline."""
    script = textwrap.dedent(
        """
        import signal, time
        from modebench.domains._untimed import untimed
        from modebench.isolation import worker_main as worker
        signal.signal(signal.SIGALRM, worker._on_alarm)
        worker.untimed_install(worker._untimed)

        def loading():
            untimed(lambda: time.sleep(0.6))  # a slow one-off load inside the item
            return {"status": "correct"}

        def working():
            time.sleep(0.6)  # the item's own work
            return {"status": "correct"}

        print(worker._guarded(0.3, loading)["status"], worker._guarded(0.3, working)["status"])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["correct", "timeout"]


def test_tabled_arguments_are_the_printed_sympy_trees() -> None:
    """The table-only path looks transitions up by an argument's printed form from the table;
    each is exactly what the SymPy path prints for that tree, and every family action has one."""
    from modebench.domains.mathir import algebra
    from modebench.domains.mathir.expr import parse_expr
    from modebench.domains.mathir.generate import FAMILIES
    from modebench.domains.mathir.parse import parse_free_program

    loaded = table._load().arguments
    symbols = frozenset("abcdefghijklmnopqrstuvwxyz")
    for text, printed in loaded.items():
        tree = parse_expr(text, symbols, 11)
        assert table.tree_text(tree) == text
        try:
            expected: str | None = algebra.show(algebra.to_sympy(tree))
        except algebra.Unsupported:
            expected = None
        assert printed == expected, text
    for family in FAMILIES.values():
        for command in family.commands:
            ((_, arg),) = parse_free_program(command, symbols, 1)
            assert isinstance(table.lookup_argument(table.tree_text(arg)), str), command
