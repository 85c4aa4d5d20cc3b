"""Record ModeBench 0.4.0's verdicts on two families of edge cases into ``tests/domains/edge_cases.json``.

Both families change a *status* near a limit of the reference's worker (docs/fidelity.md):

* ``depth``: Countdown expressions nested ever deeper — flat chains of every operator, unary and
  parenthesised nesting, right-nested powers, calls, and correct chains — at the first depth
  where our grader says the reference gives up, one below and one above. The reference's own
  worker decides what is recorded, so a wrong guess shows up as a disagreement, never as data.
* ``reply_cap``: for every fixture cell (domain × level), responses of up to 131,072 characters
  made of one JSON-escaped character repeated before a boxed answer, at the last length whose
  reply still fits in 262,144 bytes and the first that does not. The length is found with the
  reference's own in-process grading and ``json.dumps`` of its result; the verdicts recorded are
  those of its worker.

The reference runs in its own interpreter (this file, started there with ``--serve``: it only
imports ``modebench`` 0.4.0 and calls its public grading functions). Fixture rows are read in
place from the reference data and stored by name only.

    python ops/fidelity/record_edge_cases.py --reference-python /path/to/venv-0.4.0/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "tests" / "domains" / "edge_cases.json"
REPLY_CAP = 262_144
TEXT_CAP = 131_072

#: Characters whose JSON (ASCII) escape is longer than the character: quote, backslash, the five
#: short escapes, other controls (six bytes), non-ASCII BMP (six) and astral (twelve, a pair).
FILLERS = ['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\u00e9", "\u2028", "\U0001f600"]
FILLERS_PER_CELL = 3
TIMEOUT_RETRIES = 4


# -- the reference side (runs inside the 0.4.0 interpreter) --------------------------------------
def serve() -> None:
    """Answer JSON-line requests with the installed modebench (0.4.0): its worker, or its sizing."""
    from modebench.verifier import grade_response  # type: ignore[import-not-found,unused-ignore]
    from modebench.verifier_core import grade_local  # type: ignore[import-not-found,unused-ignore]

    for line in sys.stdin:
        request = json.loads(line)
        text = expand(request["response"])
        if request["op"] == "grade":
            reply = grade_response(request["level"], request["domain"], {"answer": request["answer"]}, text)
        else:  # "size": the bytes its worker would write for this result, and the result's status
            local = grade_local(request["level"], request["domain"], request["answer"], text)
            reply = {"status": local["status"], "bytes": len(json.dumps(local)) + 1}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def expand(spec: Any) -> str:
    """A stored response: a plain string, or ``prefix + repeat * times + suffix``."""
    if isinstance(spec, str):
        return spec
    return str(spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", ""))


class Reference:
    """The 0.4.0 interpreter running :func:`serve`."""

    def __init__(self, python: str) -> None:
        self._process = subprocess.Popen(
            [python, "-I", str(Path(__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="ascii",
        )
        self.requests = 0

    def ask(self, op: str, level: Any, domain: str, answer: Any, response: Any) -> dict[str, Any]:
        """One answer; a ``timeout`` (its 5 s parent deadline includes starting a worker, which a
        loaded machine can exceed) is asked again after a pause, as it is not the case's verdict."""
        assert self._process.stdin is not None and self._process.stdout is not None
        message = {"op": op, "level": level, "domain": domain, "answer": answer, "response": response}
        for attempt in range(TIMEOUT_RETRIES + 1):
            self._process.stdin.write(json.dumps(message) + "\n")
            self._process.stdin.flush()
            self.requests += 1
            reply: dict[str, Any] = json.loads(self._process.stdout.readline())
            if reply["status"] != "timeout" or attempt == TIMEOUT_RETRIES:
                break
            time.sleep(2.0)
        return reply

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(30)


# -- case families (run in this project's interpreter) -------------------------------------------
def fixtures() -> dict[tuple[int, str], dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from tests.reference_data import conformance_fixtures

    found = {(f["level"], f["domain"]): f for f in conformance_fixtures()}
    if not found:
        raise SystemExit("conformance fixtures not found (set MODEBENCH_REFERENCE_DIR)")
    return found


def fixture_ref(fixture: dict[str, Any]) -> dict[str, Any]:
    return {"fixture": fixture["config"], "split": fixture["split"], "row_index": fixture["row_index"]}


def expected(reply: dict[str, Any], text: str) -> dict[str, Any]:
    shown = reply["graded_text"]
    return {
        "status": reply["status"],
        "canonical_key": reply["canonical_key"],
        "graded_text": {"same_as_response": True} if shown == text and text else shown,
        "detail": reply["detail"],
    }


def first_change(make: Callable[[int], str], answer: Any, lo: int, hi: int) -> int:
    """Smallest k in (lo, hi] where *our* grader's outcome differs from the one at ``lo``.

    Only a guess of where to look: what is recorded comes from the reference.
    """
    sys.path.insert(0, str(ROOT / "src"))
    from modebench.domains._pipeline import grade_in_process

    def outcome(k: int) -> str:
        try:
            got = grade_in_process(1, "countdown", {"answer": answer}, "\\boxed{" + make(k) + "}")
        except (RecursionError, MemoryError) as exc:
            return type(exc).__name__
        return str(got["status"])

    first = outcome(lo)
    while hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (lo, middle) if outcome(middle) != first else (middle, hi)
    return hi


def chain(before: str, unit: str, after: str = "", closing: str = "") -> Callable[[int], str]:
    """``before + unit * k + after + closing * k``: a family of expressions indexed by depth."""
    return lambda k: before + unit * k + after + closing * k


def depth_cases(reference: Reference, cells: dict[tuple[int, str], dict[str, Any]]) -> list[dict[str, Any]]:
    families: list[tuple[str, int, Any, Callable[[int], str], int, int]] = []

    def base(level: int) -> tuple[dict[str, Any], str]:
        answer = cells[(level, "countdown")]["row"]["answer"]
        return answer, "+".join(str(n) for n in answer["numbers"])

    flat = {"add": "+0", "sub": "-0", "mul": "*1", "div": "/1", "pow": "**1", "floordiv": "//1"}
    for level in range(1, 6):
        answer, start = base(level)
        for name, step in flat.items():
            if name == "add" or level in (1, 3):
                families.append((f"flat-{name}", level, answer, chain(start, step), 800, 1200))
    for level, (name, unit) in zip((2, 4), (("neg", "-"), ("negpos", "-+"))):
        answer, start = base(level)
        families.append((f"unary-{name}", level, answer, chain("", unit, start), 300, 1200))
    answer, start = base(1)
    (answer3, start3), (answer4, start4), (answer5, _) = base(3), base(4), base(5)
    families += [
        ("parens-add", 1, answer, chain(start, "+(0", "", ")"), 100, 400),
        ("parens-mul", 3, answer3, chain(start3, "*(1", "", ")"), 100, 400),
        ("pow-right", 4, answer4, chain(start4 + "+2", "**1"), 800, 1200),
        ("parse-depth-pow", 5, answer5, chain("1.5", "**1"), 2500, 2987),
        ("parse-depth-call", 5, answer5, chain("1", "(1)"), 2500, 3500),
        ("parse-depth-unary", 5, answer5, chain("1.5**", "-", "1"), 2500, 3500),
        ("parser-stack-pow", 5, answer5, chain("1.5", "**1"), 2966, 4000),
        ("parser-stack-unary", 5, answer5, chain("1.5**", "-", "1"), 2965, 8000),
    ]
    for name, step in (("add", "+1"), ("mul", "*1")):
        answer = {"verifier": "countdown", "numbers": [1] * 992, "target": 1 if name == "mul" else 992}
        families.append((f"correct-{name}", 1, answer, chain("1", step), 900, 991))
    cases: list[dict[str, Any]] = []
    for name, level, answer, make, lo, hi in families:
        if name.startswith("correct"):
            edge = first_change(make, answer, lo, hi)
            ks = [edge - 1, edge]
        elif name.startswith("parser-stack"):
            edge = _parser_stack_edge(make, lo, hi)
            ks = [edge - 1, edge, edge + 1]
        else:
            edge = first_change(make, answer, lo, hi)
            ks = [edge - 1, edge, edge + 1]
        for k in ks:
            if name.startswith("correct"):
                # A correct chain uses every number once: the reference grows with the chain.
                count = k + 1
                answer = {
                    "verifier": "countdown",
                    "numbers": [1] * count,
                    "target": 1 if "mul" in name else count,
                }
            text = "\\boxed{" + make(k) + "}"
            reply = reference.ask("grade", level, "countdown", answer, text)
            ref = (
                {"answer": answer} if name.startswith("correct") else fixture_ref(cells[(level, "countdown")])
            )
            cases.append(
                {
                    "id": f"depth/{name}/L{level}/{k}",
                    "level": level,
                    "domain": "countdown",
                    "ref": ref,
                    "response": text if len(text) <= 200 else _compress(text),
                    "expected": expected(reply, text),
                }
            )
        print(
            f"{name} L{level}: edge {edge}: " + ", ".join(c["expected"]["status"] for c in cases[-len(ks) :])
        )
    return cases


def _parser_stack_edge(make: Callable[[int], str], lo: int, hi: int) -> int:
    """First k where CPython's parser itself gives up (MemoryError): independent of any stack."""
    import ast

    def fails(k: int) -> bool:
        try:
            ast.parse(make(k), mode="eval")
        except MemoryError:
            return True
        except (RecursionError, SyntaxError):
            return False
        return False

    while hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (lo, middle) if fails(middle) else (middle, hi)
    return hi


def _compress(text: str) -> dict[str, Any]:
    """``prefix + repeat * times + suffix`` for a response built that way (long ones only)."""
    for size in range(1, 6):
        for start in range(0, 64):
            unit = text[start : start + size]
            times = 0
            while text.startswith(unit, start + times * size):
                times += 1
            if times * size > len(text) // 2:
                end = start + times * size
                return {"prefix": text[:start], "repeat": unit, "times": times, "suffix": text[end:]}
    raise ValueError("response is not a repetition")


def cap_cases(reference: Reference, cells: dict[tuple[int, str], dict[str, Any]]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for index, ((level, domain), fixture) in enumerate(sorted(cells.items())):
        answer = fixture["row"]["answer"]
        tails = [case["response"] for case in fixture["cases"] if "\\boxed" in case["response"]]
        tails = tails or [case["response"] for case in fixture["cases"]]
        for j in range(FILLERS_PER_CELL):
            filler = FILLERS[(FILLERS_PER_CELL * index + j) % len(FILLERS)]
            tail = "x" + tails[(index + j) % len(tails)]

            def spec(n: int, filler: str = filler, tail: str = tail) -> dict[str, Any]:
                return {"repeat": filler, "times": n, "suffix": tail}

            most = TEXT_CAP - len(tail)
            if reference.ask("size", level, domain, answer, spec(most))["bytes"] <= REPLY_CAP:
                print(f"{domain} L{level} {filler!r}: reply never reaches the cap")
                continue
            lo, hi = 0, most  # size(lo) fits, size(hi) does not
            while hi - lo > 1:
                middle = (lo + hi) // 2
                fits = reference.ask("size", level, domain, answer, spec(middle))["bytes"] <= REPLY_CAP
                lo, hi = (middle, hi) if fits else (lo, middle)
            for n in (lo, hi):
                text = expand(spec(n))
                reply = reference.ask("grade", level, domain, answer, spec(n))
                cases.append(
                    {
                        "id": f"reply_cap/{domain}/L{level}/U+{ord(filler):04X}/{n}",
                        "level": level,
                        "domain": domain,
                        "ref": fixture_ref(fixture),
                        "response": spec(n),
                        "expected": expected(reply, text),
                    }
                )
            print(
                f"{domain} L{level} {filler!r} x{lo}/{hi}: {cases[-2]['expected']['status']} / {cases[-1]['expected']['status']}"
            )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-python", default=os.environ.get("MODEBENCH_040_PYTHON"))
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if not args.reference_python:
        raise SystemExit("give --reference-python (an interpreter with modebench==0.4.0 installed)")
    cells = fixtures()
    started = time.monotonic()
    reference = Reference(args.reference_python)
    try:
        cases = depth_cases(reference, cells) + cap_cases(reference, cells)
    finally:
        reference.close()
    version = subprocess.run(
        [
            args.reference_python,
            "-c",
            "import modebench, sys; print(modebench.__version__, sys.version.split()[0])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # A timeout is the machine's speed, not a verdict: such cases are reported, never recorded.
    slow = [case["id"] for case in cases if case["expected"]["status"] == "timeout"]
    cases = [case for case in cases if case["expected"]["status"] != "timeout"]
    for name in slow:
        print(f"not recorded (reference timed out): {name}")
    document = {
        "source": "recorded from ModeBench by ops/fidelity/record_edge_cases.py; see docs/fidelity.md",
        "reference": {"modebench": version[0], "python": version[1]},
        "conventions": "ref.fixture/split/row_index = conformance fixture row; "
        "ref.answer = inline answer; object responses = prefix + repeat*times + suffix",
        "cases": cases,
    }
    args.output.write_text(json.dumps(document, indent=0, ensure_ascii=True) + "\n", encoding="utf-8")
    statuses: dict[str, int] = {}
    for case in cases:
        statuses[case["expected"]["status"]] = statuses.get(case["expected"]["status"], 0) + 1
    print(
        f"{len(cases)} cases ({statuses}) in {time.monotonic() - started:.0f} s, "
        f"{reference.requests} reference requests → {args.output.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main()
