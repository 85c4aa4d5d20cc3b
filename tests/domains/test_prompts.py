"""Registered prompts: byte-for-byte messages and hashes for the 25 fixture rows."""

from __future__ import annotations

import hashlib
import json

import pytest

from modebench.prompts import make_messages, profile_metadata, prompt_sha256
from tests.reference_data import SKIP_REASON, conformance_fixtures

FIXTURES = conformance_fixtures()


#: Prompt hashes of fixture rows as the domain specs list them (verified there against 0.4.0).
SPEC_HASHES = {
    "level1_countdown": "4e9cb851bf109dc22e7df0ddc22a600c17bdf6fd7595cd16fc2428b5878c66a9",
    "level2_countdown": "891cd92b0f6cb1f900a757f07d9412794ee8622b8394454d9617a12c1858100e",
    "level3_countdown": "0331ffc58db032bc6a587d9c069d59c1ef802718f9e0e887fd5448f0bf88f873",
    "level4_countdown": "829dabba25ac03891e78715e1e73f79ee8c58b4420c5ed21997a9368f7f17b4f",
    "level5_countdown": "981795bc9e6fe45926e3cd4713938a61ae078cb79ba191250594d87a3ecf75c6",
    "level1_graph_coloring": "e3eeffb279e8032ce7a2ea3abd653ed2c07363db0452b084ee392886fb39f252",
    "level2_graph_coloring": "0ef91c6f3a51961a189265cfae20855a48aa2473c1b6883420d77f2221681322",
    "level3_graph_coloring": "2f0ba3d4755882749452e08cd13f88ce887eb23e3a162ebf88fc6a08f71c96fd",
    "level4_graph_coloring": "5c5199d797ba589934c870e46813131f3c433a8a3580b23475e24d8d73efdda5",
    "level5_graph_coloring": "b862b52da5dff480a89f57ca07729c68a1b40b94383c5b61a5c4be7712b174dd",
    "level1_mathir": "4a31b296f367a989b16889d8c08b6ca2eb058429604ac6fc05833e3e595111bb",
    "level2_mathir": "7d6ba499cb8e5ba9e4d1024bc476025273493f6451ef3aa05fac5cdce6b2c132",
    "level1_pantry_plan": "8edaaa24edadd953887e783a08e94fb1239f8870382e638213c50f36f3bddad7",
    "level2_pantry_plan": "ca05f70baa4c9b4913facb2783c16d057da13f32097f1501a7c78dd98fce97c1",
    "level1_python_factors": "7e7cd4b18331c8d66b0afd7bc4714ec47b0ff3d43252a27301b09f99824c27bf",
    "level2_python_factors": "23e8b5ee58618434d3ff9c44f5d7f4128ec4cc72b057fbacd2b91262260c9782",
}


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("config", sorted(SPEC_HASHES))
def test_fixture_prompt_hashes_match_spec(config: str) -> None:
    fixture = next(f for f in FIXTURES if f["config"] == config)
    assert prompt_sha256(fixture["level"], fixture["domain"], fixture["row"]) == SPEC_HASHES[config]


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
def test_every_fixture_row_renders() -> None:
    for fixture in FIXTURES:
        messages = make_messages(fixture["level"], fixture["domain"], fixture["row"])
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[1]["content"].strip()


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
def test_hash_is_canonical_json_of_messages() -> None:
    fixture = FIXTURES[0]
    messages = make_messages(fixture["level"], fixture["domain"], fixture["row"])
    assert [m["role"] for m in messages] == ["system", "user"]
    raw = json.dumps(messages, sort_keys=True, separators=(",", ":")).encode()
    assert (
        prompt_sha256(fixture["level"], fixture["domain"], fixture["row"]) == hashlib.sha256(raw).hexdigest()
    )


def test_rendering_errors() -> None:
    with pytest.raises(ValueError, match="nonempty problem"):
        make_messages(1, "countdown", {"problem": "  "})
    with pytest.raises(ValueError, match="role marker"):
        make_messages(1, "countdown", {"problem": "x <|im_start|> y"})
    with pytest.raises(ValueError, match="unknown prompt condition"):
        make_messages(1, "countdown", {"problem": "x"}, "other")
    with pytest.raises(ValueError, match="frozen PantryPlan answer suffix"):
        make_messages(1, "pantry_plan", {"problem": "no suffix"})


def test_neutral_condition_changes_only_level3_python() -> None:
    row = {"problem": "Write a lambda."}
    neutral = "python_level3_neutral_v1"
    assert make_messages(3, "python_factors", row, neutral) != make_messages(3, "python_factors", row)
    for level in (1, 2, 4, 5):
        assert make_messages(level, "python_factors", row, neutral) == make_messages(
            level, "python_factors", row
        )
    profile = profile_metadata(3, "python_factors", neutral)
    assert (
        profile["system_wording"] == "neutral" and profile["choice_informed_by_existing_evaluation"] is True
    )
    assert (
        profile_metadata(1, "pantry", "registered_hints_v1")["response_surface"]
        == "six_bit_ingredient_support"
    )
