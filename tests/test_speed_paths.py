"""Speed paths that must not change a byte: per-domain warm-up, the spliced prepared-record encoding."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from modebench.domains._pipeline import encode_answer
from modebench.worker_process import BoundedWorker
from tests.samples import sample_row


def test_worker_warms_only_the_named_domains() -> None:
    script = textwrap.dedent(
        """
        import sys
        from modebench import verifier_worker as worker
        worker._warm(["countdown", "graph_coloring", "pantry_plan", "python_factors", "no-such-domain"])
        print("sympy" in sys.modules)
        worker._warm_for("mathir")
        print("sympy" in sys.modules, sorted(worker._WARMED))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    first, second = done.stdout.splitlines()
    assert first == "False"
    assert second.startswith("True") and "'mathir'" in second


def test_requests_announce_their_domain_before_grading() -> None:
    with BoundedWorker() as worker:
        row = sample_row("countdown")
        reply = worker.request(
            {"operation": "grade", "level": 1, "domain": "countdown", "answer": row["answer"], "text": "x"}
        )
        assert reply["status"] == "malformed"
        assert worker._warmed == frozenset({"countdown"})
        answer = encode_answer(sample_row("mathir")["answer"])
        (replies,) = worker.grade_groups([(1, "mathir", answer, ["\\boxed{A}"])])
        assert replies[0]["status"] in ("correct", "incorrect"), replies
        assert worker._warmed == frozenset({"countdown", "mathir"})
        assert worker.starts == 1  # warmed in place, not restarted


def test_prepared_text_is_the_canonical_encoding() -> None:
    from modebench.identity import canonical
    from modebench.streaming import prepared_text

    raw = {"id": "p", "responses": ['a\u00e9"', "raw"], "answer": {"raw": None}}
    cases = [
        {"raw": raw},
        {"raw": raw, "id": "p", "label": "line 1", "binding": {"raw": None, "z": [1, 2]}},
        {"raw": raw, "row": {"answer": {"raw": None}}, "record_sha256": "x", "level": 1},
        {"a": 1, "raw": raw, "rawer": 2, "ra": 3, "Raw": 4},
    ]
    for prepared in cases:
        assert prepared_text(prepared, canonical(raw)) == canonical(prepared)
