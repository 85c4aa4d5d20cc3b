"""Differential: MathIR's table-only path against the SymPy path, result for result.

The table-only path is the registered plug-in (``domains/mathir/__init__.py``: the transition
table decides a reference and its programs where it covers them, SymPy otherwise); the SymPy
path is ``reference.validate_reference`` + ``check.grade``, the code every reference took
before. Both grade the same (level, answer, response) through the same pipeline steps a worker
runs (reference cache, ``grade_text``, the reply cap), and the whole result dicts are compared
— status, verified, canonical key, graded text, detail — plus, for an invalid reference, the
hint, and for a valid one the parsed attributes the 0.4.0 helpers read (start key, target,
symbols, menu, …). Any difference is printed and makes the script fail.

Corpora:

* ``generated``: seeded references of every family and level from the generator, and variants
  of them (zero, rational and large bindings, other step bounds, menus cut, extended with
  illegal, foreign or untabled actions, sides swapped or replaced with unsupported ones, the
  free-program verifier, broken fields), each with its certified witnesses and many random
  programs: wrong, malformed (formats, unknown IDs, too long), squares (``a**2``), revisits;
* ``conformance``: the MathIR rows and cases of the conformance fixtures and the spec's
  vectors (``tests/domains/mathir/vectors.json``), read in place from ``../shared/reference``;
* ``edge``: the MathIR cases of ``tests/domains/edge_cases.json`` (``ops/fidelity/record_edge_cases.py``);
* ``bundled``: every MathIR row of the bundled release (``data/bundled``, read with the data
  extra's pyarrow; skipped without it), each with its witnesses and random programs.

``--sympy-without-table`` takes the transition table away from the SymPy side (every side and
transition by ``cancel``), so the table itself is checked too. ``--reference-python`` grades a
seeded sample of the same programs with ModeBench 0.4.0 (its worker-side ``grade_local``, in
its own interpreter) and compares status, canonical key and detail.

    python ops/fidelity/differential_mathir_table.py [--references 2500] [--programs-per-reference 40]
        [--sympy-without-table] [--reference-python /path/to/0.4.0/bin/python --sample 3000]
        [--output evidence/mathir-table-differential.json]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from modebench.domains import plugin  # noqa: E402
from modebench.domains._pipeline import (  # noqa: E402
    ReferenceCache,
    ReferenceProblem,
    grade_text,
    invalid_reference,
    reply_guard,
)
from modebench.domains.mathir import algebra, check, reference, table, tabled  # noqa: E402
from modebench.domains.mathir.generate import FAMILIES, generate  # noqa: E402

LETTERS = "ABCDEFGH"
#: Arguments outside the families' menus (not in the table, or not printable, or illegal).
FOREIGN_ACTIONS = [
    "add(neg(b))",
    "sub(neg(b))",
    "mul(neg(a))",
    "div(mul(a,a))",
    "mul(a)",
    "div(a)",
    "mul(x)",
    "div(add(x,a))",
    "div(sub(a,a))",
    "add(x)",
    "sub(x)",
    "sub(div(a,sub(b,b)))",
    "add(mul(x,x))",
    "sub(mul(a,a))",
    "div(b)",
    "mul(c)",
]
UNSUPPORTED_SIDES = ["mul(x,x)", "div(a,x)", "mul(x,div(x,a))", "add(div(b,x),a)", "mul(add(x,a),add(x,b))"]


# -- the two paths -----------------------------------------------------------------------------
TABLE = plugin("mathir")
SYMPY = dataclasses.replace(TABLE, validate_reference=reference.validate_reference, grade=check.grade)


class Path_:
    def __init__(self, name: str, found: Any) -> None:
        self.name = name
        self.found = found
        self.cache = ReferenceCache()
        self.seconds = 0.0

    def run(self, level: int, answer: Any, text: Any) -> tuple[dict[str, Any], Any]:
        started = time.perf_counter()
        try:
            try:
                parsed = self.cache.get(level, self.found, answer)[1]
            except ReferenceProblem as exc:
                return {**invalid_reference(exc, text), "hint": exc.hint}, None
            return reply_guard(grade_text(level, self.found, parsed, text)), parsed
        except Exception as exc:  # noqa: BLE001 - a worker would report it; both paths must agree
            return {"status": "exception", "detail": f"{type(exc).__name__}: {exc}"}, None
        finally:
            self.seconds += time.perf_counter() - started


def ref_summary(parsed: Any) -> Any:
    """What the 0.4.0 helpers and routes read of a parsed reference (both paths must agree)."""
    if parsed is None:
        return None
    return (
        parsed.menu,
        parsed.prefix,
        sorted(parsed.bindings.items()),
        sorted(parsed.symbols),
        parsed.max_steps,
        parsed.start_key,
        parsed.target,
        sorted(parsed.action_ids),
        [(i, c.op, c.arg, c.illegal) for i, c in sorted(parsed.actions.items())],
    )


# -- corpora -----------------------------------------------------------------------------------
def _relabel(actions: list[str]) -> dict[str, str]:
    return {LETTERS[i]: text for i, text in enumerate(actions)}


def variants(answer: dict[str, Any], rng: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    """Edge variants of a generated reference (each yielded with its kind)."""
    names = sorted(answer["bindings"])
    menu = list(answer["actions"].values())

    def varied(kind: str, **changes: Any) -> tuple[str, dict[str, Any]]:
        out = copy.deepcopy(answer)
        for key, value in changes.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return kind, out

    zero = dict(answer["bindings"], **{rng.choice(names): 0})
    yield varied("zero-binding", bindings=zero)
    everything_zero = {name: 0 for name in names}
    yield varied("all-zero-bindings", bindings=everything_zero)
    rational = {
        n: (f"{v}/{rng.randint(1, 9)}" if rng.random() < 0.5 else f" {v} ")
        for n, v in answer["bindings"].items()
    }
    yield varied("rational-bindings", bindings=rational)
    large = {n: v * rng.choice([10**12, -(10**9), 7**40]) for n, v in answer["bindings"].items()}
    yield varied("large-bindings", bindings=large)
    equal = dict(answer["bindings"])
    if "d" in equal:
        equal["d"] = equal["a"]  # a - d = 0: a zero divisor in a menu argument, or slope 0
        yield varied("a-equals-d", bindings=equal)
        opposite = dict(answer["bindings"], d=-answer["bindings"]["a"])
        yield varied("a-equals-minus-d", bindings=opposite)
    yield varied("max-steps", max_steps=rng.randint(1, 4))
    yield varied("no-max-steps", max_steps=None)
    cut = rng.sample(menu, rng.randint(2, len(menu)))
    yield varied("menu-cut", actions=_relabel(cut))
    extended = menu + rng.sample(FOREIGN_ACTIONS, rng.randint(1, 2))
    yield varied("menu-foreign", actions=_relabel(extended[:8]))
    other = rng.choice(sorted(FAMILIES))
    mixed = menu[:4] + list(FAMILIES[other].commands[:4])
    yield varied("menu-other-family", actions=_relabel(mixed[:8]))
    yield varied("sides-swapped", initial_lhs=answer["initial_rhs"], initial_rhs=answer["initial_lhs"])
    yield varied("side-unsupported", initial_rhs=rng.choice(UNSUPPORTED_SIDES))
    other_family = FAMILIES[other]
    yield varied("sides-other-family", initial_lhs=other_family.lhs, initial_rhs=other_family.rhs)
    yield varied("free-verifier", verifier="mathir_algebra", mathir_version="linear-v0", actions=None)
    broken: dict[str, Any] = rng.choice(
        [
            {"verifier": "mathir"},
            {"mathir_version": "linear-v0"},
            {"bindings": dict(answer["bindings"], z=1)},
            {"bindings": dict(answer["bindings"], **{names[0]: 1.5})},
            {"bindings": dict(answer["bindings"], **{names[0]: True})},
            {"max_steps": 5},
            {"actions": dict(answer["actions"], G="sub(b)")},
            {"actions": _relabel(menu[:1])},
            {"actions": _relabel(menu + [menu[0].replace("(", " (", 1)])},
            {"initial_lhs": "add(mul(a,x),1)"},
            {"initial_rhs": ""},
        ]
    )
    yield varied("broken", **broken)


def menu_program(rng: random.Random, ids: str, max_steps: int) -> str:
    steps = rng.randint(1, max_steps + 1 if rng.random() < 0.1 else max_steps)
    alphabet = ids + ("GHa" if rng.random() < 0.1 else "")
    return ";".join(rng.choice(alphabet) for _ in range(steps))


def free_program(rng: random.Random, answer: dict[str, Any]) -> str:
    names = sorted(answer["bindings"]) + ["x"]
    family_args = [c for family in FAMILIES.values() for c in family.commands]

    def tree(depth: int) -> str:
        if depth == 0 or rng.random() < 0.4:
            return str(rng.choice(names))
        op = rng.choice(["add", "sub", "mul", "div", "neg"])
        if op == "neg":
            return f"neg({tree(depth - 1)})"
        return f"{op}({tree(depth - 1)},{tree(depth - 1)})"

    steps = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.5:
            steps.append(rng.choice(family_args))
        else:
            steps.append(f"{rng.choice(['add', 'sub', 'mul', 'div'])}({tree(2)})")
    return ";".join(steps)


def dressed(rng: random.Random, program: str) -> str:
    """The program as a response: boxed, bare, fenced, spaced, or broken in a common way."""
    roll = rng.random()
    if roll < 0.45:
        return "\\boxed{" + program + "}"
    if roll < 0.6:
        return program
    if roll < 0.65:
        return "```mathir\n" + program + "\n```"
    if roll < 0.72:
        return "\\boxed{ " + program.replace(";", " ; ") + " ; }"
    if roll < 0.76:
        return "Reasoning first.\n\\boxed{" + program + "}"
    return rng.choice(
        [
            "",
            "\\boxed{}",
            "\\boxed{" + program,
            "I am not sure.",
            "Answer: " + program,
            program + ";;",
            ";" + program,
            "\\boxed{" + program.lower() + "}",
            "\\boxed{" + program.replace(";", ",") + "}",
            "<b>" + program + "</b>",
            "\\boxed{" + ";".join([program] * 30) + "}",
            "\\boxed{sub(b);div(a)}",
            "\\boxed{0}",
        ]
    )


def generated(args: argparse.Namespace) -> Iterator[tuple[str, int, dict[str, Any], list[str]]]:
    """(kind, level, answer, responses) for the generated corpus."""
    rng = random.Random(args.seed)
    for index in range(args.references):
        level = 1 + index % 5
        row = generate(level, random.Random(f"differential-{args.seed}-{index}"))
        answer = json.loads(row["answer"])
        parsed = reference.validate_reference(level, answer)
        witnesses = [";".join(ids) for _, ids in sorted(check.support(parsed).items())]
        ids = "".join(sorted(answer["actions"]))
        responses = ["\\boxed{" + w + "}" for w in witnesses] + witnesses[:2]
        # squares and revisits: the same scaling twice, an action and its inverse
        scalers = [i for i, c in answer["actions"].items() if c.startswith(("mul(", "div("))]
        for i in scalers:
            responses.append("\\boxed{" + i + ";" + i + "}")
        for _ in range(args.programs_per_reference - len(responses)):
            responses.append(dressed(rng, menu_program(rng, ids, 4)))
        yield "generated", level, answer, responses
        if index % args.variant_every == 0:
            for kind, variant in variants(answer, rng):
                if variant.get("verifier") == "mathir_algebra":
                    programs = [free_program(rng, answer) for _ in range(args.programs_per_variant)]
                else:
                    programs = [menu_program(rng, ids, 4) for _ in range(args.programs_per_variant)]
                yield kind, level, variant, witnesses + [dressed(rng, p) for p in programs]


def conformance() -> Iterator[tuple[str, int, Any, list[str]]]:
    from tests.reference_data import conformance_fixtures

    fixtures = [f for f in conformance_fixtures() if f["domain"] == "mathir"]
    if not fixtures:
        raise SystemExit("conformance fixtures not found: ../shared/reference (MODEBENCH_REFERENCE_DIR)")
    rows = {(f["config"], f["row_index"]): f["row"] for f in fixtures}
    for fixture in fixtures:
        yield (
            "conformance",
            fixture["level"],
            fixture["row"]["answer"],
            [c["response"] for c in fixture["cases"]],
        )
    vectors = json.loads((ROOT / "tests/domains/mathir/vectors.json").read_text("utf-8"))["vectors"]
    for vector in vectors:
        ref = vector["ref"]
        if "inline_answer" in ref:
            answer = ref["inline_answer"]
        else:
            answer = copy.deepcopy(rows[(ref["fixture"], ref["row_index"])]["answer"])
            if isinstance(answer, str):
                answer = json.loads(answer)
            answer.update(ref.get("answer_overrides", {}))
        if "response_spec" in vector:
            response = vector["response_spec"]["repeat"] * vector["response_spec"]["count"]
        else:
            response = vector["response"]
        yield "vectors", vector["level"], answer, [response]


def edge() -> Iterator[tuple[str, int, Any, list[str]]]:
    from tests.reference_data import conformance_fixtures

    rows = {(f["config"], f["split"], f["row_index"]): f["row"] for f in conformance_fixtures()}
    document = json.loads((ROOT / "tests/domains/edge_cases.json").read_text("utf-8"))
    for case in document["cases"]:
        if case["domain"] != "mathir":
            continue
        ref = case["ref"]
        answer = (
            ref["answer"]
            if "answer" in ref
            else rows[(ref["fixture"], ref["split"], ref["row_index"])]["answer"]
        )
        spec = case["response"]
        text = (
            spec
            if isinstance(spec, str)
            else spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", "")
        )
        yield "edge", case["level"], answer, [text]


def bundled(rng: random.Random, programs: int) -> Iterator[tuple[str, int, Any, list[str]]]:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 - the data extra, only for this corpus
    except ImportError:
        return
    for level in range(1, 6):
        path = ROOT / "data" / "bundled" / "data" / f"level{level}" / "mathir" / "eval.parquet"
        for row in pq.read_table(path).to_pylist():
            answer = json.loads(row["answer"])
            parsed = reference.validate_reference(level, answer)
            witnesses = [";".join(ids) for _, ids in sorted(check.support(parsed).items())]
            ids = "".join(sorted(answer["actions"]))
            texts = ["\\boxed{" + w + "}" for w in witnesses]
            texts += [dressed(rng, menu_program(rng, ids, 4)) for _ in range(programs)]
            yield "bundled", level, row["answer"], texts


# -- 0.4.0 -------------------------------------------------------------------------------------
SERVE_040 = """
import json, sys
from modebench.verifier_core import grade_local
for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = grade_local(request["level"], "mathir", request["answer"], request["text"])
        out = {k: reply.get(k) for k in ("status", "canonical_key", "detail")}
        if len(json.dumps(reply)) + 1 > 262144:  # its worker's reply cap (ops/fidelity/record_edge_cases.py)
            out = {"status": "worker_failure", "canonical_key": None, "detail": "worker reply byte limit exceeded"}
    except Exception as exc:
        out = {"status": "exception", "canonical_key": None, "detail": type(exc).__name__ + ": " + str(exc)}
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""


def against_040(python: str, sample: list[tuple[int, Any, str, dict[str, Any]]]) -> dict[str, Any]:
    process = subprocess.Popen(
        [python, "-I", "-c", SERVE_040],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert process.stdin is not None and process.stdout is not None
    differences = []
    started = time.perf_counter()
    for level, answer, text, ours in sample:
        process.stdin.write(json.dumps({"level": level, "answer": answer, "text": text}) + "\n")
        process.stdin.flush()
        theirs = json.loads(process.stdout.readline())
        mine = {k: ours.get(k) for k in ("status", "canonical_key", "detail")}
        if mine != theirs:
            differences.append(
                {"level": level, "answer": answer, "text": text[:300], "ours": mine, "0.4.0": theirs}
            )
    process.stdin.close()
    process.wait(60)
    return {
        "python": python,
        "programs": len(sample),
        "statuses": dict(Counter(s[3]["status"] for s in sample)),
        "differences": len(differences),
        "first_differences": differences[:10],
        "seconds": round(time.perf_counter() - started, 1),
    }


class Comparison:
    """Both paths over some corpora: tallies, differences and a sample for 0.4.0."""

    def __init__(self, sample: int, seed: int) -> None:
        self.paths = (Path_("table", TABLE), Path_("sympy", SYMPY))
        self.corpora: dict[str, Counter[str]] = {}
        self.kinds: dict[str, Counter[str]] = {}
        self.differences: list[dict[str, Any]] = []
        self.pool: list[tuple[int, Any, str, dict[str, Any]]] = []
        self._sample = sample
        self._rng = random.Random(seed + 1)
        self._seen = 0

    def add(self, corpus: str, kind: str, level: int, answer: Any, responses: list[str]) -> None:
        tally = self.corpora.setdefault(corpus, Counter())
        by_kind = self.kinds.setdefault(kind, Counter())
        tally["references"] += 1
        by_kind["references"] += 1
        decided = None
        for text in responses:
            (table_result, table_ref), (sympy_result, sympy_ref) = [
                path.run(level, answer, text) for path in self.paths
            ]
            if decided is None:
                decided = isinstance(table_ref, tabled.TableRef)
                if table_result["status"] == "invalid_reference":
                    tally["references_invalid"] += 1
                    by_kind["invalid"] += 1
                else:
                    tally["references_table_decided" if decided else "references_sympy"] += 1
                    by_kind["table_decided" if decided else "sympy"] += 1
            same = table_result == sympy_result and ref_summary(table_ref) == ref_summary(sympy_ref)
            tally["programs"] += 1
            tally[f"status:{table_result['status']}"] += 1
            by_kind["programs"] += 1
            if decided:
                tally["programs_on_table_decided_references"] += 1
            if not same:
                self.differences.append(
                    {
                        "corpus": corpus,
                        "kind": kind,
                        "level": level,
                        "answer": answer,
                        "text": text[:300],
                        "table": table_result,
                        "sympy": sympy_result,
                        "table_ref": repr(ref_summary(table_ref)),
                        "sympy_ref": repr(ref_summary(sympy_ref)),
                    }
                )
                print(
                    f"DIFFERENCE ({corpus}/{kind}): {json.dumps(self.differences[-1], default=str)[:2000]}",
                    file=sys.stderr,
                )
            self._seen += 1
            entry = (level, answer, text, table_result)  # a reservoir sample for the 0.4.0 comparison
            if len(self.pool) < self._sample:
                self.pool.append(entry)
            else:
                slot = self._rng.randrange(self._seen)
                if slot < self._sample:
                    self.pool[slot] = entry

    def summary(self) -> dict[str, Any]:
        return {
            "corpora": {name: dict(sorted(c.items())) for name, c in self.corpora.items()},
            "kinds": {name: dict(sorted(c.items())) for name, c in sorted(self.kinds.items())},
            "programs": sum(c["programs"] for c in self.corpora.values()),
            "compared": [
                "status",
                "verified",
                "canonical_key",
                "graded_text",
                "detail",
                "hint (invalid references)",
                "parsed reference attributes",
            ],
            "differences": len(self.differences),
            "first_differences": self.differences[:10],
        }

    def seconds(self) -> dict[str, float]:
        return {path.name: round(path.seconds, 1) for path in self.paths}


def compare(
    sources: list[tuple[str, Iterator[tuple[str, int, Any, list[str]]]]], sample: int = 0, seed: int = 0
) -> Comparison:
    found = Comparison(sample, seed)
    for corpus, items in sources:
        for kind, level, answer, responses in items:
            found.add(corpus, kind, level, answer, responses)
    return found


# -- main --------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--references", type=int, default=2500, help="generated references (levels 1-5 in turn)"
    )
    parser.add_argument("--programs-per-reference", type=int, default=40)
    parser.add_argument(
        "--variant-every", type=int, default=5, help="every n-th reference also yields its variants"
    )
    parser.add_argument("--programs-per-variant", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument(
        "--sympy-without-table",
        action="store_true",
        help="the SymPy side computes every side and transition with cancel",
    )
    parser.add_argument(
        "--reference-python", help="an interpreter with ModeBench 0.4.0: compare a sample with it"
    )
    parser.add_argument("--sample", type=int, default=3000, help="programs compared with 0.4.0")
    parser.add_argument("--output", type=Path, help="write the summary here (JSON)")
    args = parser.parse_args()

    if args.sympy_without_table:
        algebra.table = SimpleNamespace(  # type: ignore[attr-defined,assignment]
            MISS=table.MISS,
            lookup_side=lambda text: table.MISS,
            lookup_transition=lambda side, op, arg: table.MISS,
            lookup_term=lambda side, op, arg: None,
            tree_text=table.tree_text,
            tokens=table.tokens,
        )
    started = time.perf_counter()
    sources = [
        ("generated", generated(args)),
        ("conformance", conformance()),
        ("edge", edge()),
        ("bundled", bundled(random.Random(args.seed + 2), args.programs_per_reference)),
    ]
    found = compare(sources, args.sample, args.seed)
    elapsed = time.perf_counter() - started
    summary: dict[str, Any] = {
        "script": "ops/fidelity/differential_mathir_table.py",
        "arguments": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "sympy_side": "cancel for everything (table taken away)"
        if args.sympy_without_table
        else "the SymPy path as before (table as cancel memo)",
        "python": platform.python_version(),
        "sympy": table.sympy_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **found.summary(),
        "seconds": {"total": round(elapsed, 1), **found.seconds()},
    }
    if args.reference_python:
        summary["against_0.4.0"] = against_040(args.reference_python, found.pool)
    text = json.dumps(summary, indent=1, default=str)
    print(text)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    failed = summary["differences"] or summary.get("against_0.4.0", {}).get("differences", 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
