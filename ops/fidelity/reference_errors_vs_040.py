"""Compare the reference-error messages of tests/domains/reference_hints.json with ModeBench 0.4.0.

Usage (from the repository root)::

    python ops/fidelity/reference_errors_vs_040.py --reference-python /path/to/venv-with-modebench-0.4.0/bin/python

Every case of the file that runs through the public path (``validation.validate_reference``) is
replayed by the given interpreter; the script prints one line per case whose 0.4.0 message
differs from the recorded one and a count at the end. The recorded messages are 0.4.0's own
(``docs/fidelity.md``), so it exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.domains.reference_cases import DATA, edited  # noqa: E402

# Runs inside the 0.4.0 interpreter: reads finished references on stdin, prints each message as JSON.
_REPLAY = r"""
import json, sys
from modebench.validation import validate_reference
for case in json.load(sys.stdin):
    try:
        validate_reference(case["level"], case["domain"], case["answer"])
        message = None
    except Exception as exc:
        message = str(exc)
    print(json.dumps({"id": case["id"], "message": message}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-python", required=True, help="python of a venv with modebench 0.4.0")
    args = parser.parse_args(argv)
    cases = [case for case in DATA["cases"] if case["path"] == "public"]
    # The references are built here, with the tests' own edits; 0.4.0 only validates them.
    finished = [
        {**{key: case[key] for key in ("id", "level", "domain")}, "answer": edited(case)} for case in cases
    ]
    replayed = subprocess.run(
        [args.reference_python, "-c", _REPLAY],
        input=json.dumps(finished),
        capture_output=True,
        text=True,
        check=True,
        cwd="/",  # never import this checkout's modebench
    )
    recorded = {case["id"]: case["detail"] for case in cases}
    differ = 0
    lines = replayed.stdout.splitlines()
    for line in lines:
        case = json.loads(line)
        if case["message"] != recorded[case["id"]]:
            differ += 1
            print(f"{case['id']}: ours {recorded[case['id']]!r}; 0.4.0 {case['message']!r}")
    print(f"{len(lines) - differ} of {len(lines)} messages are 0.4.0's; {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
