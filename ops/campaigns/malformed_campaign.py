"""Malformed-input campaign: thousands of generated bad JSONL files through ``modebench evaluate``.

Every file holds a few valid records and one bad line (bad JSON, hostile JSON, or a record the
contract refuses). Each must end with exit code 2, an error naming that line, no traceback and
nothing left beside the input (no output, no work directory).

    python ops/campaigns/malformed_campaign.py --files 2000 --output evidence/malformed-campaign.json

Most files run in-process through ``modebench.cli.main``, with one warm verifier worker shared
by all of them for reference validation (a worker started per file would cost seconds each on a
busy machine, and its start-up is not under test); ``--subprocesses N`` of them run as real
``python -m modebench`` processes instead, unmodified. The
test suite runs a reduced version (``tests/engine/test_campaigns.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
ANSWER = {"verifier": "countdown", "numbers": [2, 3, 4], "target": 9}


def _valid(index: int) -> dict[str, Any]:
    return {
        "id": f"v{index}",
        "level": 1,
        "domain": "countdown",
        "answer": ANSWER,
        "responses": ["2+3+4", "x"],
    }


def _line(value: Any) -> bytes:
    return json.dumps(value).encode()


def _record(rng: random.Random, **change: Any) -> bytes:
    record: dict[str, Any] = _valid(rng.randrange(10**6, 10**7))
    for key, value in change.items():
        if value is _DROP:
            record.pop(key, None)
        else:
            record[key] = value
    return _line(record)


_DROP = object()


def _deep(rng: random.Random) -> bytes:
    depth = rng.randrange(1000, 20000)
    opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
    inner = opener * depth + b"1" + closer * depth
    return inner if rng.random() < 0.5 else b'{"id": "d", "responses": ["x"], "run": ' + inner + b"}"


def _long_int(rng: random.Random) -> bytes:
    digits = b"7" * rng.randrange(4301, 20000)
    return rng.choice([digits, b'{"id": ' + digits + b', "responses": ["x"]}', b'{"level": ' + digits + b"}"])


# Each generator returns the bad line; all are refused at that line (Phase A).
GENERATORS: dict[str, Callable[[random.Random], bytes]] = {
    "truncated": lambda r: _record(r)[: r.randrange(1, 60)],
    "trailing-comma": lambda r: _record(r)[:-1] + b",}",
    "single-quotes": lambda r: _record(r).replace(b'"', b"'"),
    "bare-word": lambda r: r.choice([b"hello", b"True", b"None", b"undefined", b"{id: 1}"]),
    "nan": lambda r: (
        _record(r)[:-1] + b', "x": ' + r.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999"]) + b"}"
    ),
    "duplicate-key": lambda r: _record(r)[:-1] + b', "id": "again"}',
    "control-char": lambda r: b'{"id": "a' + bytes([r.randrange(0, 32)]) + b'", "responses": ["x"]}',
    "bad-utf8": lambda r: (
        b'{"id": "' + bytes([r.choice([0x80, 0xC3, 0xFF, 0xED])]) + b'", "responses": ["x"]}'
    ),
    "bom": lambda r: b" \xef\xbb\xbf" + _record(r),  # a leading BOM is read as 0.4.0 reads it
    "deep-nesting": _deep,
    "long-integer": _long_int,
    "not-object": lambda r: _line(r.choice([[1, 2], "text", 3, None, True, 1.5])),
    "missing-id": lambda r: _record(r, id=_DROP),
    "bad-id": lambda r: _record(r, id=r.choice([True, 1.5, "", "   ", None, [], {}])),
    "missing-responses": lambda r: _record(r, responses=_DROP),
    "bad-responses": lambda r: _record(r, responses=r.choice([[], "x", [1], [None], {"a": "b"}, ["x", 2]])),
    "too-many-responses": lambda r: _record(r, responses=["x"] * 4097),
    "bad-level": lambda r: _record(r, level=r.choice([0, 6, -1, "one", 1.0, 1.5, True, None, []])),
    "missing-level": lambda r: _record(r, level=_DROP),
    "bad-domain": lambda r: _record(r, domain=r.choice(["sudoku", "", 3, None, "COUNTDOWN "])),
    "missing-answer": lambda r: _record(r, answer=_DROP),
    "bad-answer": lambda r: _record(
        r,
        answer=r.choice(
            [
                {"verifier": "countdown", "numbers": [2, 3, 4]},
                {"verifier": "countdown", "numbers": "234", "target": 9},
                {"verifier": "countdown", "numbers": [2, 3, 4], "target": True},
                {"verifier": "mathir", "numbers": [2, 3, 4], "target": 9},
                {},
                [],
                "not json",
            ]
        ),
    ),
    "unknown-field": lambda r: _record(r, **{r.choice(["model", "score", "Responses", "ID"]): 1}),
    "bad-problem": lambda r: _record(r, problem=r.choice(["", "  ", 3, None, []])),
    "dataset-sha-custom": lambda r: _record(r, dataset_sha256="0" * 64),
    "bad-run": lambda r: _record(r, run=r.choice([{}, [], "run", {"model": 1}])),
}
DUPLICATE = "duplicate-prompt"
OVERSIZE = "oversize-line"


def make_file(path: Path, rng: random.Random, kind: str) -> int:
    """Write one malformed file; return the number of the line that must be named."""
    before = rng.choice([0, 0, 0, 0, 0, 0, 1, 2])  # mostly the first line: no worker needed
    lines = [_line(_valid(index)) for index in range(before)]
    if kind == DUPLICATE:
        lines = [_line(_valid(0))] * 2
        bad_number = 2
    elif kind == OVERSIZE:
        lines.append(b'{"id": "big", "responses": ["' + b"a" * (16_777_216 + 10) + b'"]}')
        bad_number = before + 1
    else:
        lines.append(GENERATORS[kind](rng))
        bad_number = before + 1
    lines += [_line(_valid(100 + index)) for index in range(rng.randrange(0, 3))]
    blank = rng.random() < 0.2  # blank lines are skipped but still counted
    if blank and bad_number > 1:
        lines.insert(0, b"")
        bad_number += 1
    path.write_bytes(b"\n".join(lines) + b"\n")
    return bad_number


def _in_process(source: Path, output: Path) -> tuple[int | None, str, str | None]:
    from modebench import cli

    err = io.StringIO()
    crash = None
    code: int | None = None
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(["evaluate", str(source), "--output", str(output), "--progress-every", "0"])
        except SystemExit as exc:
            code = int(exc.code or 0)
        except BaseException:  # a traceback the user would see
            crash = traceback.format_exc()
    return code, err.getvalue(), crash


def _subprocess(source: Path, output: Path) -> tuple[int | None, str, str | None]:
    done = subprocess.run(
        [sys.executable, "-m", "modebench", "evaluate", str(source), "--output", str(output)],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stderr, done.stderr if "Traceback" in done.stderr else None


def campaign(root: Path, files: int, subprocesses: int, seed: int, oversize: int) -> dict[str, Any]:
    from modebench import parallel, verifier, worker_process

    # One warm worker validates the references of every in-process run (see the module
    # docstring); nothing here reaches grading.
    shared = worker_process.BoundedWorker()

    def reference_check(self: Any, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        return verifier.reference_check_with(shared, level, domain, answer)

    saved = parallel.ParallelGrader.prestart, parallel.ParallelGrader.reference_check
    parallel.ParallelGrader.prestart = lambda self: None  # type: ignore[method-assign]
    parallel.ParallelGrader.reference_check = reference_check  # type: ignore[method-assign]
    try:
        return _run_cases(root, files, subprocesses, seed, oversize)
    finally:
        parallel.ParallelGrader.prestart, parallel.ParallelGrader.reference_check = saved  # type: ignore[method-assign]
        shared.close()


def _run_cases(root: Path, files: int, subprocesses: int, seed: int, oversize: int) -> dict[str, Any]:
    rng = random.Random(seed)
    kinds = sorted(GENERATORS) + [DUPLICATE]
    plan = [OVERSIZE] * oversize + [kinds[index % len(kinds)] for index in range(files - oversize)]
    rng.shuffle(plan)
    real = set(rng.sample(range(files), min(subprocesses, files)))
    failures: list[dict[str, Any]] = []
    by_kind: Counter[str] = Counter()
    started = time.monotonic()
    for index, kind in enumerate(plan):
        case = root / f"case{index}"
        case.mkdir()
        source = case / "in.jsonl"
        number = make_file(source, rng, kind)
        runner = _subprocess if index in real else _in_process
        code, err, crash = runner(source, case / "out.json")
        left = sorted(entry.name for entry in case.iterdir() if entry.name != "in.jsonl")
        # the error line names the line; a `hint:` line may follow it (reference errors)
        errors = [line for line in err.strip().splitlines() if "error:" in line]
        last = errors[-1] if errors else (err.strip().splitlines() or [""])[-1]
        named = f"error: line {number}:" in last or f"error: line {number}," in last
        if code != 2 or crash is not None or left or not named:
            failures.append(
                {
                    "case": index,
                    "kind": kind,
                    "line": number,
                    "exit": code,
                    "error": last[-300:],
                    "left": left,
                }
                | ({"traceback": crash[-1500:]} if crash else {})
            )
        by_kind[kind] += 1
        source.unlink()
        case.rmdir() if not left else None
    return {
        "files": files,
        "subprocess_runs": len(real),
        "kinds": dict(sorted(by_kind.items())),
        "seconds": round(time.monotonic() - started, 1),
        "failures": len(failures),
        "all_ok": not failures,
        "failure_details": failures[:50],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--subprocesses", type=int, default=40)
    parser.add_argument("--oversize", type=int, default=3, help="files with a line over 16 MiB")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--output", help="write the result JSON here (e.g. evidence/malformed-campaign.json)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="modebench-malformed-") as directory:
        summary = campaign(Path(directory), args.files, args.subprocesses, args.seed, args.oversize)
    text = json.dumps(summary, indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    print(json.dumps({key: value for key, value in summary.items() if key != "failure_details"}, indent=1))
    return 0 if summary["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
