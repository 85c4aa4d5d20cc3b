"""Compare the receipts and journals two checkouts write for the same runs, byte for byte.

    python ops/fidelity/compare_checkouts.py --baseline /work/main --candidate . [--json evidence/compare.json]

Each checkout runs, in its own interpreter (``<checkout>/.venv/bin/python``, or ``--*-python``)
with its own ``src`` first on ``PYTHONPATH``, the same scenarios in its own scratch directory:
the walkthrough, the 0.4.0 conformance corpus (read in place from
``../shared/reference/tests/fixtures/conformance-v1.json``) as one custom run, a frozen run of
the bundled release (``--limit``), a two-configuration suite, a run in two shards merged, an
interrupted run resumed, and a standard-input run. Every file the runs publish (receipts, shard
receipts, journals, suite summaries, and the kept checkpoint identities) is then compared.

What is set aside, and why (everything else must be equal byte for byte):
- ``created_at`` and each history entry's ``started_at``: wall-clock times.
- ``software``: it hashes the package's source files, which differ between two checkouts by
  definition; for the same reason ``execution.identity_sha256`` (which binds ``software``)
  is compared through the identity object itself: each checkout's kept ledger identity must
  hash to its receipt's ``identity_sha256``, and the two identities must be byte-identical
  once their ``software`` entries are set aside.
- the resumed run's ``resumed_prompts``: how many prompts the interruption let commit depends
  on timing (commits group up to 128 prompts or 0.5 s).
- the absolute path of each side's scratch directory (a suite summary names its input directory).
Exit status 0 when everything compares equal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT.parent / "shared" / "reference" / "tests" / "fixtures" / "conformance-v1.json"
CONFIGS = ("level1_countdown", "level2_graph_coloring")
RUN = {
    "model": {"id": "compare-checkouts", "revision": "1"},
    "generation": {"draws_per_prompt": 2},
    "prompt_condition": "registered_hints_v1",
}

# Runs inside each checkout: interrupts a run after its first committed group of results through
# the public API only (both checkouts have it), then resumes it.
_INTERRUPT = """
import sys
from modebench.api import EvaluationOptions, evaluate_file

class Stop(Exception):
    pass

def stop(event):
    if event["phase"] == "grading" and event["completed_prompts"] > 0:
        raise Stop

try:
    evaluate_file(sys.argv[1], sys.argv[2], options=EvaluationOptions(keep_checkpoint=True), progress=stop)
except Stop:
    sys.exit(0)
sys.exit("the run finished before it could be interrupted")
"""


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Checkout:
    """One checkout's interpreter and environment."""

    def __init__(self, root: Path, python: str | None) -> None:
        self.root = root.resolve()
        self.python = python or str(self.root / ".venv" / "bin" / "python")
        if not Path(self.python).exists():
            raise SystemExit(
                f"no interpreter for {self.root}: {self.python} (pass --baseline-python/--candidate-python)"
            )
        self.env = {**os.environ, "PYTHONPATH": str(self.root / "src"), "PYTHONHASHSEED": "0"}

    def cli(self, cwd: Path, *args: str, stdin: bytes | None = None) -> str:
        return self.run(cwd, "-m", "modebench", *args, stdin=stdin)

    def run(self, cwd: Path, *args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(
            [self.python, *args], cwd=cwd, env=self.env, input=stdin, capture_output=True, timeout=1800
        )
        if done.returncode not in (0, 3):  # 3: a failed (unscorable) run still publishes its receipt
            raise SystemExit(
                f"{self.root}: {' '.join(args)} exited {done.returncode}:\n{done.stderr.decode()}"
            )
        return done.stdout.decode()


def _conformance_input(path: Path) -> bool:
    """The conformance corpus as one evaluate input: one record per fixture, its cases' responses."""
    if not CONFORMANCE.is_file():
        return False
    data = json.loads(CONFORMANCE.read_bytes())
    with open(path, "w", encoding="utf-8") as handle:
        for index, fixture in enumerate(data["fixtures"]):
            responses = [case["response"] for case in fixture["cases"]] or ["(no case)"]
            record = {
                "id": f"conformance-{index}",
                "level": fixture["level"],
                "domain": fixture["domain"],
                "answer": fixture["row"]["answer"],
                "responses": responses,
            }
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    return True


def _respond(requests: Path, responses: Path) -> None:
    """Every request with two stand-in responses (one well-formed, one not)."""
    responses.mkdir()
    for path in sorted(requests.glob("*.jsonl")):
        with open(responses / path.name, "w", encoding="utf-8") as handle:
            for line in path.read_text(encoding="utf-8").splitlines():
                handle.write(json.dumps({**json.loads(line), "responses": ["\\boxed{1}", "bad"]}) + "\n")


def scenarios(checkout: Checkout, work: Path, inputs: Path) -> list[str]:
    """Run every scenario in ``work``; return the names of the scenarios that ran."""
    ran = []
    walk = work / "walkthrough"
    checkout.cli(work, "walkthrough", "--directory", str(walk))
    common = ["--progress-every", "0", "--keep-work"]
    checkout.cli(work, "evaluate", str(walk / "responses.jsonl"), "--run", str(walk / "run.json"),
                 "--output", str(work / "walkthrough.json"), *common)  # fmt: skip
    ran.append("walkthrough")
    if (inputs / "conformance.jsonl").is_file():
        checkout.cli(work, "evaluate", str(inputs / "conformance.jsonl"), "--output", str(work / "conformance.json"),
                     "--workers", "2", *common)  # fmt: skip
        ran.append("conformance")
    (work / "run.json").write_text(json.dumps(RUN))
    requests = work / "requests"
    checkout.cli(work, "prepare", "--registry", "bundled", *(f"--config={name}" for name in CONFIGS),
                 "--limit", "5", "--output", str(requests))  # fmt: skip
    _respond(requests, work / "responses")
    frozen = work / "responses" / f"{CONFIGS[0]}.jsonl"
    checkout.cli(work, "evaluate", str(frozen), "--registry", "bundled", "--config", CONFIGS[0], "--limit", "5",
                 "--run", str(work / "run.json"), "--output", str(work / "frozen.json"), *common)  # fmt: skip
    ran.append("frozen")
    checkout.cli(work, "evaluate", str(work / "responses"), "--registry", "bundled", "--config", ",".join(CONFIGS),
                 "--limit", "5", "--run", str(work / "run.json"), "--output", str(work / "suite"),
                 "--progress-every", "0", "--keep-work")  # fmt: skip
    ran.append("suite")
    source = walk / "responses.jsonl"
    for index in (1, 2):
        checkout.cli(work, "evaluate", str(source), "--run", str(walk / "run.json"), "--shard", f"{index}/2",
                     "--output", str(work / f"shard{index}.json"), *common)  # fmt: skip
    checkout.cli(
        work,
        "merge",
        str(work / "shard1.json"),
        str(work / "shard2.json"),
        "--output",
        str(work / "merged.json"),
    )
    ran.append("sharded+merged")
    big = inputs / "resume.jsonl"
    checkout.run(work, "-c", _INTERRUPT, str(big), str(work / "resumed.json"))
    checkout.cli(work, "evaluate", str(big), "--output", str(work / "resumed.json"), "--resume", *common)
    ran.append("resumed")
    checkout.cli(work, "evaluate", "-", "--run", str(walk / "run.json"), "--output", str(work / "stdin.json"),
                 *common, stdin=source.read_bytes())  # fmt: skip
    ran.append("stdin")
    return ran


def _resume_input(path: Path, walkthrough: Path) -> None:
    """An input big enough to be interrupted after its first commit: the walkthrough's records, repeated."""
    records = [
        json.loads(line) for line in walkthrough.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    with open(path, "w", encoding="utf-8") as handle:
        for copy in range(40):
            for record in records:
                handle.write(json.dumps({**record, "id": f"{record['id']}-{copy}"}, sort_keys=True) + "\n")


def _ledger_identity(work_dir: Path) -> Any:
    import sqlite3

    ledger = work_dir / "ledger.sqlite3"
    if not ledger.is_file():
        return None
    with sqlite3.connect(ledger) as db:
        row = db.execute("SELECT value FROM info WHERE key = 'identity'").fetchone()
    return json.loads(row[0]) if row else None


def _normal(path: Path, resumed: bool, side: Path) -> bytes:
    """A published JSON file with wall-clock times, the software block and its side's scratch path set aside."""
    data = path.read_bytes().replace(str(side).encode(), b"<scratch>")
    if path.suffix == ".jsonl":
        return data
    payload = json.loads(data)
    if not isinstance(payload, dict):
        return data
    payload.pop("created_at", None)
    payload.pop("software", None)
    execution = payload.get("execution")
    if isinstance(execution, dict):
        execution.pop("identity_sha256", None)
        for entry in execution.get("history", []):
            entry.pop("started_at", None)
            if resumed:
                entry.pop("resumed_prompts", None)
    for entry in payload.get("configs", []) if isinstance(payload.get("configs"), list) else []:
        if isinstance(entry, dict):
            entry.pop("receipt_sha256", None)  # hashes a receipt whose software block differs
    return json.dumps(payload, sort_keys=True, indent=1).encode()


def _identity_ok(receipt: Path, identity: Any) -> bool:
    payload = json.loads(receipt.read_bytes())
    # A shard receipt binds the unsharded run's identity: the shard's without its "shard" entry.
    identity = {key: value for key, value in identity.items() if key != "shard"}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return bool(hashlib.sha256(canonical.encode()).hexdigest() == payload["execution"]["identity_sha256"])


def compare(base: Path, cand: Path) -> dict[str, Any]:
    files = sorted(
        path.relative_to(base)
        for path in base.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl") and "requests" not in path.parts
        and "responses" not in path.parts and not path.name.startswith("run")
    )  # fmt: skip
    theirs = {
        path.relative_to(cand)
        for path in cand.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl") and "requests" not in path.parts
        and "responses" not in path.parts and not path.name.startswith("run")
    }  # fmt: skip
    report: dict[str, Any] = {"compared": [], "differ": [], "missing": sorted(map(str, set(files) ^ theirs))}
    for relative in files:
        if relative not in theirs:
            continue
        resumed = relative.name.startswith("resumed")
        left, right = _normal(base / relative, resumed, base), _normal(cand / relative, resumed, cand)
        entry = {"file": str(relative), "bytes": (base / relative).stat().st_size, "equal": left == right}
        if relative.suffix == ".jsonl":
            entry["sha256"] = [_sha(base / relative), _sha(cand / relative)]
        report["compared"].append(entry)
        if left != right:
            diff = difflib.unified_diff(
                left.decode().splitlines(), right.decode().splitlines(), lineterm="", n=1
            )
            report["differ"].append({"file": str(relative), "diff": list(diff)[:40]})
    identities = []
    for work in sorted(base.rglob("*.work")):
        relative = work.relative_to(base)
        receipt = base / str(relative)[: -len(".work")]
        mine, other = _ledger_identity(work), _ledger_identity(cand / relative)
        if mine is None or other is None or not receipt.is_file():
            continue
        ok = _identity_ok(receipt, mine) and _identity_ok(cand / receipt.relative_to(base), other)
        same = {k: v for k, v in mine.items() if k != "software"} == {
            k: v for k, v in other.items() if k != "software"
        }
        identities.append(
            {"checkpoint": str(relative), "receipt_binds_it": ok, "equal_without_software": same}
        )
    report["identities"] = identities
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, type=Path)
    parser.add_argument("--candidate", required=True, type=Path)
    parser.add_argument("--baseline-python")
    parser.add_argument("--candidate-python")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories")
    args = parser.parse_args()
    baseline = Checkout(args.baseline, args.baseline_python)
    candidate = Checkout(args.candidate, args.candidate_python)
    scratch = Path(tempfile.mkdtemp(prefix="modebench-compare-"))
    try:
        inputs = scratch / "inputs"
        inputs.mkdir()
        has_conformance = _conformance_input(inputs / "conformance.jsonl")
        sides = {}
        for name, checkout in (("baseline", baseline), ("candidate", candidate)):
            work = scratch / name
            work.mkdir()
            if not (inputs / "resume.jsonl").exists():
                walk = scratch / "walk-input"
                checkout.cli(scratch, "walkthrough", "--directory", str(walk))
                _resume_input(inputs / "resume.jsonl", walk / "responses.jsonl")
            sides[name] = scenarios(checkout, work, inputs)
            print(f"{name} ({checkout.root}): ran {', '.join(sides[name])}", flush=True)
        report = compare(scratch / "baseline", scratch / "candidate")
        report["scenarios"] = sides["baseline"]
        report["conformance_corpus"] = str(CONFORMANCE) if has_conformance else "absent (skipped)"
        report["baseline"], report["candidate"] = str(baseline.root), str(candidate.root)
    finally:
        if args.keep:
            print(f"scratch kept at {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    equal = [entry for entry in report["compared"] if entry["equal"]]
    print(f"files compared: {len(report['compared'])}, equal: {len(equal)}, differ: {len(report['differ'])}")
    for entry in report["compared"]:
        digest = f" sha256 {entry['sha256'][0][:16]}" if "sha256" in entry else ""
        print(
            f"  {'EQUAL ' if entry['equal'] else 'DIFFER'} {entry['file']} ({entry['bytes']} bytes){digest}"
        )
    for entry in report["identities"]:
        print(
            f"  identity {entry['checkpoint']}: bound by its receipt {entry['receipt_binds_it']}, "
            f"equal (software aside) {entry['equal_without_software']}"
        )
    for entry in report["differ"]:
        print(f"--- {entry['file']}\n" + "\n".join(entry["diff"]))
    if report["missing"]:
        print(f"present in one checkout only: {report['missing']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    identities_ok = all(e["receipt_binds_it"] and e["equal_without_software"] for e in report["identities"])
    return 0 if not report["differ"] and not report["missing"] and identities_ok else 1


if __name__ == "__main__":
    sys.exit(main())
