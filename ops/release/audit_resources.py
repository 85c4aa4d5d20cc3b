"""Resource audit of the bundled release: observed reference sizes and task shapes against the caps.

Writes ``evidence/resource-audit.json``. The caps are the worker's (references over 65,536
encoded bytes are invalid; requests over 1 MiB are refused), so every bundled row must sit well
below them; the audit also times the slowest certified witness per domain.

    python ops/release/audit_resources.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.api import load_tasks  # noqa: E402
from modebench.dataset_cache import load_registry  # noqa: E402
from modebench.diagnostics import MAX_REFERENCE_BYTES, MAX_REQUEST_BYTES, RESOURCE_POLICY  # noqa: E402
from modebench.domains import plugin  # noqa: E402
from modebench.domains._pipeline import grade_local  # noqa: E402


def main() -> None:
    registry = load_registry("bundled")
    observed: dict[str, dict[str, object]] = {}
    for record in registry.records:
        config, domain, level = record["config_name"], record["domain"], record["level"]
        entry = observed.setdefault(
            domain,
            {"rows": 0, "max_reference_encoded_bytes": 0, "max_problem_chars": 0, "slowest_witness_ms": 0.0},
        )
        found = plugin(domain)
        assert found.witnesses is not None
        for task in load_tasks(config, registry="bundled"):
            answer = dict(task.answer)
            entry["rows"] = int(entry["rows"]) + 1  # type: ignore[call-overload]
            entry["max_reference_encoded_bytes"] = max(
                int(entry["max_reference_encoded_bytes"]), len(json.dumps(answer))
            )  # type: ignore[call-overload]
            entry["max_problem_chars"] = max(int(entry["max_problem_chars"]), len(task.problem))  # type: ignore[call-overload]
            for text in found.witnesses(level, answer)[:4]:
                grade_local(level, domain, answer, text)  # validate and cache the reference
                started = time.perf_counter()
                grade_local(level, domain, answer, text + " ")
                elapsed = (time.perf_counter() - started) * 1000
                entry["slowest_witness_ms"] = round(max(float(entry["slowest_witness_ms"]), elapsed), 3)  # type: ignore[arg-type]
    audit = {
        "schema": "modebench-resource-audit-v1",
        "release": "bundled",
        "registry_sha256": registry.sha256,
        "caps": RESOURCE_POLICY,
        "observed": observed,
        "headroom": {
            domain: round(MAX_REFERENCE_BYTES / int(values["max_reference_encoded_bytes"]), 1)  # type: ignore[call-overload]
            for domain, values in observed.items()
        },
        "scope": "Observed sizes across every row of the bundled release; a witness grade is timed in process "
        "(first grade of a new response text, reference cached). Not a guarantee for custom references: "
        f"worker deadlines and the address-space cap bound those, and requests over {MAX_REQUEST_BYTES} bytes are refused.",
    }
    target = ROOT / "evidence" / "resource-audit.json"
    target.write_text(json.dumps(audit, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(audit["observed"], indent=2))
    print(f"written: {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
