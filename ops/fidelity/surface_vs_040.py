"""Run the public functions of 0.4.0's pure modules in this checkout and in ModeBench 0.4.0, and
compare results, exception types and messages.

Usage (from the repository root)::

    python ops/fidelity/surface_vs_040.py --reference-python /path/to/venv-with-modebench-0.4.0/bin/python

The calls are generated here: the conformance corpus of 0.4.0 (``../shared/reference``, read in
place), the bundled release's rows under every template of ``templates.TEMPLATE_FACTORY`` and
every prompt condition, witnesses of those rows, and boundary inputs of each function. Both
interpreters replay the same list with ``ops/fidelity/_surface_calls.py``; this script prints every call
whose outcome differs, a count per module, and exits 1 when any differs.

Every public function of the per-domain modules that 0.4.0 exported (the MathIR parsers and menu
enumeration, the Pantry spec parser and support actions) is replayed too, on the conformance and
bundled references and boundary inputs. A call that either interpreter answers with a ``timeout``
status (a parent deadline hit on a loaded machine) is re-run up to ``--retries`` times in that
interpreter; the output says how many were re-run and how many still timed out.

Not replayed: ``identity.software_identity`` (it names the installed software, so it differs by
design) and ``templates.build_response_token_prefix_mask`` (it needs PyTorch, installed in
neither interpreter here; tests/compat covers it where torch is present).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "ops" / "fidelity" / "_surface_calls.py"
CONFORMANCE = ROOT.parent / "shared" / "reference" / "tests" / "fixtures" / "conformance-v1.json"
DOMAINS = ("countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan")
CONDITIONS = ("registered_hints_v1", "python_level3_neutral_v1")
ROWS_PER_CONFIG = 4


class Calls:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, module: str, function: str, *args: Any, **kwargs: Any) -> None:
        self.items.append(
            {
                "id": len(self.items),
                "module": module if module.startswith("$") else f"modebench.{module}",
                "function": function,
                "args": list(args),
                "kwargs": kwargs,
            }
        )


def _tuple(*items: Any) -> dict[str, Any]:
    return {"$tuple": list(items)}


# Boundary inputs shared by the text helpers: empty, unclosed, nested, spaced, \fbox, several boxes.
TEXTS = [
    "", "abc", "\\boxed{12}", "x \\boxed{1} y \\boxed{2}", "\\boxed 5", "\\boxed{a{b}c}", "\\boxed{",
    "\\fbox{3}", "\\boxed{}", " The answer is 5 ", "\\boxed {3}", "a\\boxed{1}\\boxed{2", "<answer>7</answer>",
    "```python\nlambda n: 2\n```", "Answer: 12", "$\\boxed{12}$", "\\boxed{\\boxed{3}}", "}{", "\\boxed}{",
    "line1\nline2", "\\boxed{1}}", "\\boxed{{1}", "\\boxed{ 7 }", "\\fbox{2} \\boxed{3}", "\\boxed{3} \\fbox{2}",
]  # fmt: skip


def conformance() -> list[dict[str, Any]]:
    if not CONFORMANCE.is_file():
        sys.exit(f"conformance corpus not found at {CONFORMANCE}")
    fixtures: list[dict[str, Any]] = json.loads(CONFORMANCE.read_text(encoding="utf-8"))["fixtures"]
    return fixtures


def bundled_rows() -> dict[str, list[dict[str, Any]]]:
    """The bundled release's first rows of every configuration, read with this checkout's API."""
    from modebench import api

    rows: dict[str, list[dict[str, Any]]] = {}
    for domain in DOMAINS:
        for level in range(1, 6):
            config = f"level{level}_{domain}"
            tasks = list(api.load_tasks(config, registry="bundled"))[:ROWS_PER_CONFIG]
            rows[config] = [
                {"level": level, "domain": domain, "problem": t.problem, "answer": t.answer} for t in tasks
            ]
    return rows


def witnesses(level: int, domain: str, answer: Any) -> list[str]:
    from modebench.domains import plugin

    found = plugin(domain).witnesses
    parsed = json.loads(answer) if isinstance(answer, str) else answer
    return list(found(level, parsed))[:2] if found is not None else []


def grading_calls(
    calls: Calls, fixtures: list[dict[str, Any]], rows: dict[str, list[dict[str, Any]]]
) -> None:
    for text in [*TEXTS, None, 5]:
        for name in ("extract_answer", "last_boxed_only_string", "remove_boxed", "extract_boxed_answer"):
            calls.add("grading", name, text)
    for text in TEXTS:
        calls.add("grading", "remove_boxed", text)
    graded: list[tuple[Any, Any]] = []
    for fixture in fixtures:
        answer = fixture["row"]["answer"]
        for case in fixture["cases"]:
            graded.append((case["response"], answer))
        for witness in fixture["witnesses"]:
            graded.append(("\\boxed{" + witness["response"] + "}", answer))
        graded.append((None, answer))
        graded.append(("\\boxed{}", json.dumps(answer) if not isinstance(answer, str) else answer))
    for config_rows in rows.values():
        for row in config_rows[:2]:
            for witness in witnesses(row["level"], row["domain"], row["answer"]):
                graded.append((witness, row["answer"]))
                graded.append((f"Some reasoning.\n\\boxed{{{witness}}}", row["answer"]))
    countdown = {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}
    for reference in [
        countdown, json.dumps(countdown), {**countdown, "target": "18"}, {**countdown, "target": 18.0},
        {**countdown, "target": "x"}, {"numbers": [3, 6, 9], "target": 18}, "12", None, 12, [1], "{bad json",
        {**countdown, "numbers": []}, {"verifier": "nope"}, {**countdown, "numbers": [3, 6, True]},
    ]:  # fmt: skip
        for response in [
            "3+6+9",
            "\\boxed{3+6+9}",
            "The answer is 3+6+9",
            "x" * 5000,
            "\\boxed{" + "x" * 5000 + "}",
        ]:
            graded.append((response, reference))
    for fixture in fixtures:  # the domain validators, on the conformance answers (0.4.0 objects)
        answer = fixture["row"]["answer"]
        spec = json.loads(answer) if isinstance(answer, str) else answer
        validator = {
            "mathir_algebra": "validate_mathir_algebra",
            "mathir_action_menu": "validate_mathir_action_menu",
            "pantry_plan": "validate_pantry_plan",
            "python_factor_function": "validate_python_factor_function_external",
        }.get(spec.get("verifier"))
        if validator is None or fixture["level"] == 1 and spec.get("verifier") == "pantry_plan":
            continue
        for case in fixture["cases"][:4]:
            calls.add("grading", validator, case["response"], spec)
    for response, answer in graded:
        for name in (
            "validated_modebench_outcome_key",
            "validated_modebench_exploration_identity",
            "boxed_reward_fn",
        ):
            calls.add("grading", name, response, answer)
        calls.add("grading", "extract_normalized_final_answer", response, gt_answer=answer)
    calls.add("grading", "extract_normalized_final_answer", "\\boxed{3}")
    for candidate in [
        "lambda n: 2", "lambda n: 2 if n % 2 == 0 else 3", "lambda n: 1 + n // 2", "lambda n: -n", "lambda n: not n",
        "lambda n: 2 if n > 3 and n < 9 or n == 1 else 3", "lambda n: 1 < n <= 3", "lambda x: 2", "2", "", "lambda n: n(",
    ]:  # fmt: skip
        calls.add("grading", "python_factor_route_signature", candidate)


LEGACY_TEXTS = ["1+2+3", "3*6-9", "(3+6)*9", "3+6+9=18", "18=3+6+9", "3 \\times 6 / 9", "answer: 3+6+9", "3+6",
                "3+6+9+9", "3/(6-6)+9", "3**2", "x+1", "", "=", "123", "1 2 3", "coloring: 1,2,3", "[1, 2, 3]"]  # fmt: skip


def _same(answer: Any, spec: dict[str, Any]) -> bool:
    return isinstance(answer, (dict, str)) and answer != "{}" and _spec(answer) == spec


def legacy_calls(calls: Calls, fixtures: list[dict[str, Any]], rows: dict[str, list[dict[str, Any]]]) -> None:
    """0.4.0's private grading helpers that Re:Max's ``legacy_modebench`` imports."""
    pairs: list[tuple[Any, Any]] = []
    for fixture in fixtures:
        answer = fixture["row"]["answer"]
        pairs += [(case["response"], answer) for case in fixture["cases"]]
        pairs += [(w["response"], answer) for w in fixture["witnesses"]]
    for config_rows in rows.values():
        for row in config_rows[:2]:
            for witness in witnesses(row["level"], row["domain"], row["answer"]):
                pairs += [(witness, row["answer"]), (f"So \\boxed{{{witness}}}", row["answer"])]
    for text in [*TEXTS, *LEGACY_TEXTS]:
        for answer in ({"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}, {"verifier": "nope"}, "{}",
                       '{"verifier": "pantry_plan"}', None, {"verifier": "python_factor_function"}):  # fmt: skip
            pairs.append((text, answer))
    for response, answer in pairs:
        calls.add("grading", "_extract_modebench_candidate", response, answer)
    specs = [
        _spec(answer) for _, answer in pairs if isinstance(answer, (dict, str)) and answer not in ("{}",)
    ]
    countdowns = [s for s in specs if s.get("verifier") == "countdown"][:40]
    graphs = [s for s in specs if s.get("verifier") == "graph_coloring"][:40]
    for spec in countdowns + [{"numbers": ["3", 6.0, True]}, {"numbers": None}, {}, {"numbers": [3, 6, 9]}]:
        for text in [*LEGACY_TEXTS, *(response for response, answer in pairs[:400] if answer == spec)]:
            calls.add("grading", "_canonical_countdown_expression_key", text, spec)
    bad_graphs = [{"n": "x"}, {"n": 3}, {"n": 3, "edges": [[1, 2]], "partial_colors": [1, None, "2"]},
                  {"n": 3, "edges": [[1, 4]]}, {"n": 3, "edges": [["a", 2]]}, {"n": 3, "edges": [[1, 2]],
                  "partial_colors": [1, None]}, {"n": 2, "edges": [[1, 2]], "partial_colors": ["x", None]}]  # fmt: skip
    for spec in graphs + bad_graphs:
        n = spec.get("n") if isinstance(spec.get("n"), int) else 3
        texts = [*LEGACY_TEXTS, "1" * n, "12" * n, ("123" * n)[:n], ("321" * n)[: max(n - 1, 0)], "2", "13"]
        for text in [*texts, *(response for response, answer in pairs[:400] if _same(answer, spec))]:
            calls.add("grading", "_graph_coloring_from_candidate", text, spec)
        for colours in (
            [1, 2, 3] * n,
            ([1, 2, 3] * n)[:n],
            ([2, 1] * n)[:n],
            [1] * n,
            None,
            [],
            ([3, 1, 2] * n)[:n],
        ):
            calls.add("grading", "_verify_graph_coloring_colors", colours, spec)


SPEC_FILE = ROOT.parent / "shared" / "spec" / "surface-0.4.0.json"


def fact_calls(calls: Calls) -> None:
    """What callers observe of names without calling them: every constant of the 0.4.0 surface
    (its value with its container type: a tuple is no frozenset), the progress event class, and
    the parameter list of ``evaluation.receipt_header``; then 0.4.0-style calls of the latter."""
    surface = json.loads(SPEC_FILE.read_text(encoding="utf-8")) if SPEC_FILE.is_file() else {"modules": {}}
    for module, described in sorted(surface["modules"].items()):
        for name, info in sorted(described["public"].items()):
            if info["kind"] == "constant" and info.get("type") != "_Feature":
                calls.add("$attribute", name, module, name)
    for module, name in [("modebench.streaming", "Progress"), ("modebench.api_types", "Progress"),
                         ("modebench.evaluation", "receipt_header")]:  # fmt: skip
        calls.add("$attribute", name, module, name)
    dataset = {"kind": "custom", "references_authenticated": False}
    for run in (None, {}, {"model": "m", "temperature": 0.7}):
        for counts in ({"correct": 3, "incorrect": 1}, {"correct": 1, "timeout": 2}, {}):
            calls.add("evaluation", "receipt_header", records_hash="ab" * 32, run=run, dataset=dataset,
                      threshold=30, status_counts=counts, created_at="2026-01-01T00:00:00+00:00",
                      software={"name": "modebench", "version": "x"})  # fmt: skip


#: Faulty workers of 0.4.0's lifecycle tests: what each one does, and the code that does it.
FAULTY_WORKERS = {
    "hangs": "import time; time.sleep(60)",
    "half-reply": "import sys, time; sys.stdin.readline(); sys.stdout.write('{'); sys.stdout.flush(); time.sleep(60)",
    "garbage": "import sys; sys.stdin.readline(); print('not-json', flush=True)",
    "dies": "import os; os._exit(9)",
    "empty-object": "import sys; sys.stdin.readline(); print('{}', flush=True)",
    "oversized-reply": "import sys; sys.stdin.readline(); sys.stdout.write('x' * 262145); sys.stdout.flush()",
}
BACKEND_STEPS = {
    "countdown": "modebench.domains.countdown.verifier._countdown_eval_and_numbers",
    "graph_coloring": "modebench.domains.graph_coloring.verifier._verify_graph_coloring_colors",
    "python_factors": "modebench.python_modebench.execute_python_factor_candidate",
    "mathir": "modebench.mathir._execute_mathir_commands",
    "pantry_plan": "modebench.pantry_plan.validate_pantry_plan",
}


def fault_calls(calls: Calls, fixtures: list[dict[str, Any]]) -> None:
    """0.4.0's fault-injection points, replaced as its tests replace them (ops/_surface_calls.py)."""
    spec = {"verifier": "python_factor_function", "python_version": "factor-v1", "cases": [6, 10, 15]}
    python = {"operation": "python", "candidate": "lambda n: 2 if n % 2 == 0 else 3", "spec": spec}
    countdown = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
    for code in FAULTY_WORKERS.values():
        calls.add("$scenario", "bad_worker", code, 2.0, python)
        calls.add("$scenario", "shared_worker", code, 2.0, "1+2+3", countdown)
    for kind in ("refused", "dns", "timeout", "http-503", "disconnected", "reset-mid-body"):
        calls.add("$scenario", "fetch_error", kind)
    calls.add("$scenario", "oversized", {"padding": "x" * 1_048_576})
    calls.add("$scenario", "cannot_start", python)
    calls.add("$scenario", "dead_between_requests", python["candidate"], spec)
    calls.add("$scenario", "interrupted", python)
    for error in ("RuntimeError", "TimeoutError", "MemoryError"):
        calls.add("$scenario", "handle_raises", error, python)
    for domain, target in BACKEND_STEPS.items():
        for level in (1, 2):
            fixture = next(f for f in fixtures if f["level"] == level and f["domain"] == domain)
            for case in fixture["cases"][:3]:
                request = {"operation": "grade", "level": level, "domain": domain,
                           "answer": fixture["row"]["answer"], "text": case["response"]}  # fmt: skip
                calls.add("$scenario", "backend_raises", target, request)


def template_calls(calls: Calls, rows: dict[str, list[dict[str, Any]]]) -> None:
    from modebench import templates

    names = sorted(templates.TEMPLATE_FACTORY)
    problems = [row["problem"] for config_rows in rows.values() for row in config_rows]
    for name in names:
        calls.add("templates", "prompt_template_role", name)
        calls.add("templates", "prompt_template_surface", name)
        for problem in [*problems, "QUESTION", ""]:
            calls.add(
                "templates",
                "apply_prompt_template_to_example",
                {"q": problem},
                input_key="q",
                prompt_template=name,
            )
        calls.add(
            "templates",
            "collate_eval_prompt_items",
            [{"prompt": p, "gt": "x"} for p in problems[:8]],
            prompt_template=name,
        )
    for name in ["unknown", ""]:
        calls.add("templates", "prompt_template_role", name)
        calls.add("templates", "prompt_template_surface", name)
        calls.add(
            "templates", "apply_prompt_template_to_example", {"q": "Q"}, input_key="q", prompt_template=name
        )
    functions = [n for n in dir(templates) if n.startswith("apply_") and n.endswith("_template")]
    for function in sorted(functions):
        for problem in problems[::7]:
            calls.add("templates", function, problem)
    for surface in ["qwen", "falcon", "other"]:
        calls.add("templates", "render_chat_prompt", surface, "SYSTEM", "USER")
    for name in names:
        for problem in problems[::5]:
            calls.add("templates", "validate_canonical_prompt_materialization", name, [problem], [problem])
    for validator in (
        "validate_qwen_countdown_digits_materialization",
        "validate_qwen_graph_digits_materialization",
        "validate_qwen_pantry_support_mask_materialization",
    ):
        for problem in problems[::5]:
            calls.add("templates", validator, [problem], [problem])
            calls.add("templates", validator, [problem], [])


def prompt_calls(calls: Calls, rows: dict[str, list[dict[str, Any]]]) -> None:
    for config_rows in rows.values():
        for row in config_rows:
            level, domain = row["level"], row["domain"]
            for condition in CONDITIONS:
                calls.add("prompts", "make_messages", level, domain, row, condition)
                calls.add("prompts", "prompt_sha256", level, domain, row, condition)
            calls.add("registered_prompts", "make_messages", level, domain, row)
            calls.add("registered_prompts", "profile_metadata", level, domain)
            calls.add("registered_prompts", "grade_response", level, domain, row, "\\boxed{1}")
            calls.add("verifier_core", "grade_local", level, domain, row["answer"], "\\boxed{1}")
            spec = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
            if domain == "countdown":
                calls.add("verifier_core", "countdown_result", "1+2", spec, "\\boxed{1+2}")
            if domain == "python_factors":
                calls.add("verifier_core", "python_result", "lambda n: 2", spec)
            for condition in CONDITIONS:
                profile = {
                    "OAT_ZERO_PROMPT_TEMPLATE": "qwen_boxed" if level == 1 else "qwen_level2_countdown"
                }
                calls.add("prompts", "training_environment", level, domain, profile, condition)
            for witness in witnesses(level, domain, row["answer"]):
                calls.add("verifier_core", "grade_local", level, domain, row["answer"], witness)
        for condition in CONDITIONS:
            level, domain = config_rows[0]["level"], config_rows[0]["domain"]
            calls.add("prompts", "profile_metadata", level, domain, condition)
    for level, domain in [
        (1, "countdown"),
        ("2", "mathir"),
        (0, "countdown"),
        (1, "nope"),
        (True, "countdown"),
    ]:
        calls.add("prompts", "profile_metadata", level, domain)
        calls.add("prompts", "make_messages", level, domain, {"problem": "P"})
        calls.add("prompts", "make_messages", level, domain, {"problem": "P"}, "unknown")
        calls.add("contracts", "normalize_task_identity", level, domain)
    calls.add("prompts", "make_messages", 1, "countdown", {"problem": ""})
    calls.add("prompts", "make_messages", 1, "countdown", {"problem": "a <|im_start|> b"})
    calls.add("prompts", "make_messages", 1, "countdown", {})


def pure_calls(calls: Calls) -> None:
    counts = [[], [1], [2], [1, 1], [3, 1], [1, 1, 1, 1], {"a": 2, "b": 2}, {"a": 0}, [0, 0]]
    for value in counts:
        calls.add("metrics", "mode_diversity", value)
        calls.add("metrics", "effective_modes", value)
        for depth in (1, 2, 3):
            calls.add("metrics", "rarefied_distinct", value, depth)
    attempts = [{"status": "correct", "canonical_key": "k1"}, {"status": "correct", "canonical_key": "k2"},
                {"status": "incorrect", "canonical_key": None}]  # fmt: skip
    calls.add("metrics", "verified_mode_counts", attempts)
    calls.add("metrics", "verified_mode_counts", [])
    for aggregation in ("pooled", "per_group", "nope"):
        calls.add("metrics", "prompt_mode_diversity", attempts, aggregation)
        calls.add("metrics", "prompt_mode_diversity", [], aggregation)
    for status in ("correct", "incorrect", "nope"):
        calls.add("verifier_core", "result", status, key="k", text="t", detail=None, outputs=[1])
    for value, label in [
        (1, "k"),
        (0, "k"),
        (-1, "k"),
        (True, "k"),
        ("3", "k"),
        (2.0, "k"),
        (None, "workers"),
    ]:
        calls.add("validation", "positive_integer", value, label)
        calls.add("metrics", "positive_integer", value, label)
    odd = [_tuple(1, 2), {"$pairs": [[1, 2]]}, {"a": {"$set": [1]}}, {"a": _tuple(1, {"b": True})}]
    for value in [1, 1.5, "s", None, True, [1, {"a": None}], *odd]:
        calls.add("validation", "json_value", value)
        calls.add("validation", "json_value", value, "field")
        calls.add("identity", "digest_json", value)
    for text in ['{"a": 1}', '{"a": 1, "a": 2}', "[1, 2", "NaN", "1e999", '"x"', "", '{"a": Infinity}']:
        calls.add("validation", "loads", text)
        calls.add("validation", "loads", text.encode("utf-8").decode("latin-1"))
    for run in [None, {}, {"model": "m"}, {"model": 1}, [1], "x", {"a": 1}, {"a": {"$set": [1]}}]:
        calls.add("validation", "validate_run", run)
    for level, domain, answer in [
        (1, "countdown", {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}),
        (1, "countdown", {"verifier": "countdown", "numbers": [], "target": 18}),
        (1, "countdown", "{}"), (1, "nope", {}), (0, "countdown", {}),
        (1, "python_factors", {"verifier": "python_factor_function", "python_version": "factor-v1", "cases": [6]}),
    ]:  # fmt: skip
        calls.add("validation", "validate_reference", level, domain, answer)
    for prompt_results in (
        [],
        [{"k": 2, "correct": 1, "modes": {"a": 1}, "defined": True}],
    ):
        for aggregation in ("pooled", "per_group", "other"):
            calls.add("metrics", "cell_summary", prompt_results, aggregation, 1)


MATHIR_TEXTS = [
    "a", "x", "sub(b)", "neg(a)", "add(mul(a,x),b)", "div(sub(c,b),a)", "sub(neg(a),div(b,x))", "add(a,1)", "q",
    "add(a,b", "add(a,b))", "mul(a)", "foo(a,b)", "neg(a,b)", "", "  add( a , b )  ", "ADD(a,b)", "add(a;b)",
    "mul(mul(mul(mul(mul(mul(mul(a,b),c),d),e),f),g),h)", "add(" + ",".join("a" * 1) + ",b)",
    "add(add(add(add(a,b),add(c,d)),add(add(e,f),add(g,h))),add(add(add(a,b),add(c,d)),add(add(e,f),add(g,h))))",
    "add(add(add(a,b),add(c,d)),add(add(e,f),add(g,h)))", "sub(b);div(a)", "sub(b); div(a);", "x1", "é",
]  # fmt: skip
PROGRAMS = [
    "sub(b);div(a)", "sub(b); div(a);", " sub(b) ", "sub(b);;div(a)", ";sub(b)", "sub(b);div(a);;", "sub(b)", "",
    "sub(b);div(a);add(b);sub(b);mul(a)", "neg(b)", "sub(q)", "sub(1)", "sub(add(mul(a,x),b));add(mul(a,x));div(a)",
    "div(x)", "mul(a)", "sub(b),div(a)", "sub b", "SUB(b)",
]  # fmt: skip
MENU_PROGRAMS = [
    "C;F",
    " C ; F ; ",
    "c;f",
    "C,F",
    "CF",
    "C;;F",
    ";C;F",
    "C;F;;",
    "A;A;A;A;A",
    "G",
    "A",
    "",
    "A;B;C;D",
]
SUPPORT_ACTIONS = [
    "almonds+banana", "banana, almonds", "110000", "almonds", "almonds+almonds", "almonds+zzz", "zzz+yyy+almonds", "",
    "  ", "{almonds+banana}", "Almonds+Banana", "almonds++banana", "support: almonds+banana", "ingredients=almonds;banana",
    "ingredient : almonds banana", "support action: almonds+banana", "{support: almonds+banana}",
    "support: {almonds+banana}", "answer: almonds+banana", "almonds\nbanana\tcarrots", "almonds.banana",
    "almonds+banana.", "\\boxed{almonds+banana}", "almonds" + "+" * 243 + "banana", "almonds" + "+" * 244 + "banana",
]  # fmt: skip


def _spec(answer: Any) -> dict[str, Any]:
    return json.loads(answer) if isinstance(answer, str) else dict(answer)


def domain_calls(calls: Calls, fixtures: list[dict[str, Any]], rows: dict[str, list[dict[str, Any]]]) -> None:
    """0.4.0's per-domain helpers (formerly internals): parsers, enumeration, support actions."""
    mathir = "domains.mathir.verifier"
    pantry = "domains.pantry_plan.verifier"
    support = "domains.pantry_plan.support"
    for symbols in (["a", "b", "c", "x"], "abcdefghx", []):
        for text in MATHIR_TEXTS:
            calls.add(mathir, "parse_mathir_expression", text, allowed_symbols=symbols)
        for text in PROGRAMS:
            for steps in (1, 4):
                calls.add(mathir, "parse_mathir_program", text, allowed_symbols=symbols, max_steps=steps)
    for ids in ("ABCDEF", ["A", "B", "C"], "XYZ", ""):
        for text in MENU_PROGRAMS:
            calls.add(mathir, "parse_mathir_action_program", text, action_ids=ids, max_steps=4)
    specs = [_spec(f["row"]["answer"]) for f in fixtures] + [
        _spec(row["answer"]) for config_rows in rows.values() for row in config_rows[:2]
    ]
    menus = [spec for spec in specs if spec.get("verifier") == "mathir_action_menu"]
    for spec in menus:
        for name in (
            "enumerate_mathir_action_menu_keys",
            "enumerate_mathir_action_menu_route_signatures",
            "enumerate_mathir_action_menu_validations",
        ):
            calls.add(mathir, name, spec)
        free = {
            k: v for k, v in spec.items() if k not in ("actions", "valid_mode_count", "valid_mode_key_sha256")
        }
        free.update(verifier="mathir_algebra", mathir_version="linear-v0")
        actions = spec["actions"]
        for ids in (["A"], ["B", "A"], list(actions)[:3], ["C", "F"], ["F", "E"], ["E", "D"]):
            program = ";".join(actions[i] for i in ids if i in actions)
            calls.add(mathir, "validate_mathir_algebra", program, free)
            calls.add(mathir, "certified_mathir_strategy_keys", free, [program, "sub(b)"])
        calls.add(mathir, "validate_mathir_action_menu", "C;F", free)
    for bad in (
        {"verifier": "mathir_action_menu"}, {"verifier": "mathir_algebra"}, {"verifier": "nope"}, {},
        {**menus[0], "mathir_version": "linear-v0"}, {**menus[0], "bindings": {}}, "x", [1],
        {**menus[0], "actions": {"A": "sub(b)"}}, {**menus[0], "max_steps": 9},
    ):  # fmt: skip
        calls.add(mathir, "enumerate_mathir_action_menu_keys", bad)
    pantries = [spec for spec in specs if spec.get("verifier") == "pantry_plan"]
    for spec in pantries:
        calls.add(pantry, "parse_pantry_plan_spec", spec)
        names = [row["id"] for row in spec["ingredients"]]
        for action in [*SUPPORT_ACTIONS, "+".join(names[:2]), " ; ".join(reversed(names[:3])), names[-1]]:
            calls.add(support, "parse_pantry_support_action", action, spec)
            calls.add(support, "validate_pantry_support_action", action, spec)
        for mask in (
            "110000",
            "1100000",
            "11000",
            "abcdef",
            "",
            " 110000 ",
            "000000",
            "111111",
            "11 0000",
            "１10000",
        ):
            calls.add(support, "pantry_support_from_mask", mask, spec)
            calls.add(support, "decode_pantry_support_mask", mask, spec)
        for allocation in (
            f"{names[0]}=50;{names[1]}=75",
            f"{names[1]}=50",
            "zzz=50",
            "",
            "almonds=0",
            "\\boxed{x=1}",
        ):
            calls.add(support, "pantry_support_mask_from_allocation", allocation, spec)
        for chosen in (
            names[:2],
            names[1:3],
            names[:3],
            names[-2:],
            names[:1],
            [],
            [names[0], names[0]],
            ["zzz", names[0]],
        ):
            calls.add(support, "project_pantry_support", _tuple(*chosen), spec)
            calls.add(support, "project_pantry_support", list(reversed(chosen)), spec)
    for config, config_rows in rows.items():
        if config.endswith("pantry_plan") and not config.startswith("level1"):
            for row in config_rows[:2]:
                spec = _spec(row["answer"])
                for witness in witnesses(row["level"], row["domain"], row["answer"]):
                    calls.add(pantry, "validate_pantry_plan", witness, spec)
                    calls.add(support, "pantry_support_mask_from_allocation", witness, spec)
    base = pantries[0]
    for bad in (
        {"verifier": "pantry_plan"}, {**base, "pantry_version": "v0"}, {**base, "ingredients": []}, "x", [1],
        {k: v for k, v in base.items() if k != "certified_mode_count"}, {**base, "targets": {}},
        {**base, "forbidden_tags": ["tree_nut"]},
    ):  # fmt: skip
        calls.add(pantry, "parse_pantry_plan_spec", bad)
        calls.add(support, "parse_pantry_support_action", "almonds+banana", bad)
        calls.add(support, "validate_pantry_support_action", "almonds+banana", bad)
        calls.add(support, "project_pantry_support", _tuple("almonds", "banana"), bad)
        calls.add(support, "pantry_support_from_mask", "110000", bad)
        calls.add(support, "decode_pantry_support_mask", "110000", bad)
        calls.add(support, "pantry_support_mask_from_allocation", "almonds=50;banana=75", bad)


def replay(python: str, calls: list[dict[str, Any]], cwd: str) -> dict[int, dict[str, Any]]:
    done = subprocess.run(
        [python, str(RUNNER)], input=json.dumps(calls), capture_output=True, text=True, check=False, cwd=cwd
    )
    if done.returncode != 0:
        sys.exit(f"{python} failed:\n{done.stderr[-4000:]}")
    return {item["id"]: item for item in map(json.loads, done.stdout.splitlines())}


def timed_out(outcome: dict[str, Any]) -> bool:
    """A timeout status anywhere in a result, or the exception a timeout raises (a verdict of the
    machine's load, not of the code: both interpreters grade under parent deadlines)."""
    if "error" in outcome:
        kind, message = outcome["error"]
        return kind == "VerifierExecutionError" and str(message).startswith("verifier timeout")
    return '["status", "timeout"]' in json.dumps(outcome.get("value"))


def retry_timeouts(
    items: list[dict[str, Any]],
    ours: dict[int, dict[str, Any]],
    theirs: dict[int, dict[str, Any]],
    reference_python: str,
    rounds: int,
) -> dict[str, int]:
    """Re-run, in the interpreter that answered it, every call answered with a timeout.

    On a loaded machine either grader can hit its parent deadline (0.4.0's first request starts
    its worker); such an answer says nothing about behaviour, so the call is re-run up to
    ``rounds`` times and the first answer that is not a timeout replaces it.
    """
    counts = {"0.4.0": 0, "ours": 0, "left": 0}
    by_id = {call["id"]: call for call in items}
    for label, results, python, cwd in (
        ("0.4.0", theirs, reference_python, "/"),
        ("ours", ours, sys.executable, str(ROOT)),
    ):
        pending = [i for i in by_id if timed_out(results[i])]
        counts[label] = len(pending)
        for _ in range(rounds):
            if not pending:
                break
            again = replay(python, [by_id[i] for i in pending], cwd)
            for i, outcome in again.items():
                if not timed_out(outcome):
                    results[i] = outcome
            pending = [i for i in pending if timed_out(results[i])]
        counts["left"] += len(pending)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-python", required=True, help="python of a venv with modebench 0.4.0")
    parser.add_argument("--only", help="compare only this module (e.g. grading)")
    parser.add_argument(
        "--retries", type=int, default=3, help="re-runs of a call answered with a timeout (default 3)"
    )
    args = parser.parse_args(argv)
    calls = Calls()
    rows = bundled_rows()
    grading_calls(calls, conformance(), rows)
    legacy_calls(calls, conformance(), rows)
    fact_calls(calls)
    fault_calls(calls, conformance())
    template_calls(calls, rows)
    prompt_calls(calls, rows)
    pure_calls(calls)
    domain_calls(calls, conformance(), rows)
    items = [c for c in calls.items if not args.only or c["module"] in (args.only, f"modebench.{args.only}")]
    ours = replay(sys.executable, items, str(ROOT))
    theirs = replay(args.reference_python, items, "/")  # never import this checkout's modebench
    retried = retry_timeouts(items, ours, theirs, args.reference_python, args.retries)
    total: Counter[str] = Counter()
    differ: Counter[str] = Counter()
    for call in items:
        module = call["module"].removeprefix("modebench.")
        module = f"{module}:{call['function']}" if module == "$scenario" else module
        total[module] += 1
        mine, ref = ours[call["id"]], theirs[call["id"]]
        mine.pop("id"), ref.pop("id")
        if mine != ref:
            differ[module] += 1
            shown = json.dumps({"args": call["args"], "kwargs": call["kwargs"]})[:300]
            print(
                f"{module}.{call['function']} {shown}\n  ours   {json.dumps(mine)[:400]}\n  0.4.0  {json.dumps(ref)[:400]}"
            )
    for module in sorted(total):
        print(
            f"{module}: {total[module]} calls, {total[module] - differ[module]} identical, {differ[module]} differ"
        )
    print(f"total: {sum(total.values())} calls, {sum(differ.values())} differ")
    print(
        f"timeouts under load: {retried['0.4.0']} calls of 0.4.0 and {retried['ours']} of ours answered "
        f"'timeout' and were re-run (up to {args.retries} times); {retried['left']} still timed out"
        " (a timeout left after the re-runs counts as a difference above)"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
