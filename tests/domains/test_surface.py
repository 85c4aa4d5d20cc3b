"""``_surface.last_boxed`` (found with ``str.find``) against the brace count it replaced.

``counted`` below is the previous implementation, kept as the oracle: the scan of 0.4.0's rule
written out literally (start at the last ``\\boxed``, count every brace from there, take the
content up to the brace that brings the count back to zero, then require ``\\boxed{``). The two
must agree on every text: the edge-case corpus, the conformance responses when the reference
data is present, hand-picked shapes and many generated texts made of the characters that matter.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from modebench.domains._surface import last_boxed
from tests.reference_data import conformance_fixtures

_BRACES = re.compile(r"[{}]")


def counted(text: str) -> str | None:
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    depth = 0
    end = -1
    for match in _BRACES.finditer(text, start):
        if match.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                end = match.start()
                break
    if end < 0 or not text.startswith("\\boxed{", start):
        return None
    content = text[start + len("\\boxed{") : end]
    return content or None


SHAPES = [
    "",
    "\\boxed",
    "\\boxed{",
    "\\boxed{}",
    "\\boxed{}}",
    "\\boxed {1}",
    "\\boxed{1}",
    "\\boxed{{1}}",
    "\\boxed{{1}",
    "\\boxed{1}}",
    "\\boxed{a{b}c{d{e}}f}",
    "\\boxed{a{b}c{d{e}f}",
    "}\\boxed{x}{",
    "\\boxed{1} then \\boxed{2}",
    "\\boxed{1} then \\boxed {2}",
    "\\boxed{1} then \\boxed{",
    "\\boxed{\\frac{1}{2}}",
    "\\boxedx{1}",
    "\\boxed\\boxed{1}",
    "\\boxed{\\boxed{1}}",
    "{{{\\boxed{}}}}",
    "\\boxed{" + "{" * 500 + "}" * 499,
    "\\boxed{" + "{" * 500 + "}" * 501 + "tail",
    "\\boxed{" + "{}" * 1000 + "}",
    "Final answer: \\boxed{2 + 3 = 5}\n",
]


def _edge_texts() -> list[str]:
    document = json.loads(Path(__file__).with_name("edge_cases.json").read_text("utf-8"))
    texts = []
    for case in document["cases"]:
        spec = case.get("response")
        if isinstance(spec, str):
            texts.append(spec)
        elif isinstance(spec, dict):
            texts.append(
                str(spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", ""))
            )
    return texts


def _conformance_texts() -> list[str]:
    texts = []
    for fixture in conformance_fixtures():
        for case in [*fixture["cases"], *fixture["witnesses"]]:
            if isinstance(case.get("response"), str):
                texts.append(case["response"])
    return texts


def test_agrees_on_hand_picked_shapes() -> None:
    for text in SHAPES:
        assert last_boxed(text) == counted(text), text


def test_agrees_on_the_edge_case_corpus() -> None:
    texts = _edge_texts()
    assert texts
    for text in texts:
        assert last_boxed(text) == counted(text)


def test_agrees_on_the_conformance_responses() -> None:
    texts = _conformance_texts()
    if not texts:
        pytest.skip("no conformance responses (ModeBench 0.4.0 reference data not found)")
    for text in texts:
        assert last_boxed(text) == counted(text)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_on_generated_texts(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["\\boxed", "\\boxed{", "{", "}", " ", "a", "1", "\\", "boxed", "\n", "\\frac", "é"]
    found = 0
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        expected = counted(text)
        assert last_boxed(text) == expected, text
        found += expected is not None
    assert found > 200  # the texts reach the interesting branch, not only "no box"
