"""Speed paths that must not change a byte: per-domain warm-up, the spliced prepared-record encoding."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

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
        from modebench.domains.mathir import table
        print("sympy" in sys.modules, sorted(worker._WARMED), bool(table._load().transitions))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    first, second = done.stdout.splitlines()
    assert first == "False"
    # MathIR's warm-up loads its transition table, not SymPy: SymPy waits until something the
    # table does not decide needs it (tests/domains/mathir/test_table_only.py)
    assert second.startswith("False") and "'mathir'" in second and second.endswith("True")


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


@pytest.mark.parametrize("domain", ["countdown", "pantry_plan", "mathir"])
def test_a_reference_checked_as_a_string_is_not_checked_again_as_its_object(
    domain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Preflight checks ``answer`` as written (here a compact JSON string); grading sends the
    decoded object, whose encoding differs. That check is answered from the cache, and grading
    against it gives what a fresh check gives."""
    from modebench.domains import _pipeline, plugin

    found = plugin(domain)
    answer = sample_row(domain)["answer"]
    text = json.dumps(answer, separators=(",", ":"))
    encoded = json.dumps(answer)
    assert json.dumps(text) != encoded
    fresh = _pipeline.ReferenceCache().get_encoded(1, found, encoded)
    cache = _pipeline.ReferenceCache()
    assert cache.get(1, found, text)[0] == answer

    def no_check(*args: object) -> object:
        raise AssertionError("the reference was validated again")

    monkeypatch.setattr(_pipeline, "_validate", no_check)
    cached = cache.get_encoded(1, found, encoded)
    assert cached[0] == fresh[0] == answer
    witness = found.witnesses(1, answer)[0]  # type: ignore[misc]
    for text_graded in (witness, "\\boxed{0}", ""):
        assert _pipeline.grade_text(1, found, cached[1], text_graded) == _pipeline.grade_text(
            1, found, fresh[1], text_graded
        )


@pytest.mark.parametrize(
    "value",
    ["countdown", 'é\ud800\n"\\', "", 3, -(10**40), 0, True, False, None, 2.5, [1, "a"], {"a": 1}, "3"],
)
def test_encoded_size_fast_paths_equal_json_dumps(value: object) -> None:
    from modebench.domains._pipeline import encoded_size

    assert encoded_size(value) == len(json.dumps(value, allow_nan=False))


def test_encoded_size_refuses_what_json_dumps_refuses() -> None:
    from modebench.domains._pipeline import encoded_size

    for value in (10**5000, float("nan")):
        with pytest.raises(ValueError):
            json.dumps(value, allow_nan=False)
        with pytest.raises(ValueError):
            encoded_size(value)


def test_an_encoded_answer_is_sent_as_its_own_encoding() -> None:
    import copy
    import pickle

    from modebench.domains._pipeline import EncodedAnswer

    answer = sample_row("graph_coloring")["answer"]
    answer = answer if isinstance(answer, dict) else json.loads(answer)
    encoded = EncodedAnswer(answer)
    assert encoded == answer and encode_answer(encoded) == encode_answer(answer) == json.dumps(encoded)
    for twin in (copy.deepcopy(encoded), pickle.loads(pickle.dumps(encoded))):
        assert twin == answer and encode_answer(twin) == encode_answer(answer)
    with pytest.raises(ValueError):
        EncodedAnswer({"x": float("nan")})


def test_grade_text_results_equal_diagnostics_result() -> None:
    """``grade_text`` spells the three verdicts' dicts out; they are ``result``'s, member order too."""
    from modebench.diagnostics import result
    from modebench.domains._pipeline import REFERENCES, grade_text, resolve

    statuses = set()
    for domain in ("countdown", "graph_coloring", "pantry_plan", "python_factors"):
        answer = sample_row(domain)["answer"]
        number, found = resolve(1, domain)
        parsed = REFERENCES.get(number, found, answer)[1]
        assert found.witnesses is not None
        for text in ["not a solution", "\\boxed{1}", "", *found.witnesses(1, answer)[:2]]:
            got = grade_text(number, found, parsed, text)
            statuses.add(got["status"])
            extra = dict(list(got.items())[5:])  # python_factors' outputs, through ``result`` as before
            want = result(
                got["status"],
                key=got["canonical_key"],
                text=got["graded_text"],
                detail=got["detail"],
                **extra,
            )
            assert list(got.items()) == list(want.items())
    assert statuses == {"correct", "incorrect", "malformed"}
