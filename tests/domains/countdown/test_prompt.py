"""Countdown prompt rendering against the spec §7 reference hashes of the fixture rows."""

from __future__ import annotations

import pytest

from modebench.domains.countdown import PLUGIN
from modebench.prompts import make_messages, prompt_sha256
from tests.reference_data import SKIP_REASON, conformance_fixtures

HASHES = {
    1: "4e9cb851bf109dc22e7df0ddc22a600c17bdf6fd7595cd16fc2428b5878c66a9",
    2: "891cd92b0f6cb1f900a757f07d9412794ee8622b8394454d9617a12c1858100e",
    3: "0331ffc58db032bc6a587d9c069d59c1ef802718f9e0e887fd5448f0bf88f873",
    4: "829dabba25ac03891e78715e1e73f79ee8c58b4420c5ed21997a9368f7f17b4f",
    5: "981795bc9e6fe45926e3cd4713938a61ae078cb79ba191250594d87a3ecf75c6",
}
FIXTURES = {f["level"]: f for f in conformance_fixtures() if f["domain"] == "countdown"}


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("level", sorted(HASHES))
def test_fixture_prompt_hash(level: int) -> None:
    row = FIXTURES[level]["row"]
    assert prompt_sha256(level, "countdown", row) == HASHES[level]
    messages = make_messages(level, "countdown", row)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == row["problem"]


def test_template_names_and_profiles() -> None:
    assert PLUGIN.prompt(1, "registered_hints_v1").template_name == "qwen_boxed"
    for level in (2, 3, 4, 5):
        template = PLUGIN.prompt(level, "python_level3_neutral_v1")
        assert template.template_name == "qwen_level2_countdown"
        assert template.reference_syntax_profile == "countdown_legal_v3"
