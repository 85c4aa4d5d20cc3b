"""What happens to an unscorable attempt: fail the run (0.4.0, the default) or count it as incorrect.

Under ``count-as-incorrect`` an attempt whose status is ``timeout`` or ``resource_limit`` is
recorded as an ``incorrect`` draw that keeps its original status in ``unscorable_status`` (and its
detail), so every reader of the journal scores it as a failed draw. ``worker_failure`` and
``invalid_reference`` are evaluator or reference problems, never the model's: they still fail
the run. The receipt says so in its ``evaluation`` block (``unscorable``, ``counted_as_incorrect``
and a scoring-policy string of its own), so it can never pass for a 0.4.0-policy receipt; a
default run's receipt has none of these keys and stays byte-identical to 0.4.0's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from modebench.validation import OptionError

__all__ = [
    "COUNTED",
    "COUNT_AS_INCORRECT",
    "FAIL_RUN",
    "ORIGINAL_STATUS",
    "POLICIES",
    "apply",
    "check",
    "evaluation_extras",
]

FAIL_RUN: Final = "fail-run"
COUNT_AS_INCORRECT: Final = "count-as-incorrect"
POLICIES: Final = (FAIL_RUN, COUNT_AS_INCORRECT)
#: The unscorable statuses the opt-in policy scores: both can come from the response itself
#: (a 32k-token chain of thought, a candidate program that loops or allocates without bound).
COUNTED: Final = frozenset({"timeout", "resource_limit"})
#: Attempt key holding the status a counted attempt had before it was scored as incorrect.
ORIGINAL_STATUS: Final = "unscorable_status"
#: ``evaluation.scoring_policy`` of a count-as-incorrect receipt (0.4.0's string names the default).
COUNTED_SCORING_POLICY: Final = (
    "wrong-or-malformed-count-as-failure; timeout-or-resource-limit-count-as-failure; "
    "other-verifier-errors-suppress-all-aggregates-v1"
)


def check(policy: object) -> str:
    """``policy`` if it is one of :data:`POLICIES`; else an ``OptionError``."""
    if policy not in POLICIES:
        raise OptionError(
            "unscorable_policy",
            f"unscorable must be one of {', '.join(POLICIES)}, not {policy!r}",
            value=policy,
        )
    return str(policy)


def apply(policy: str, attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attempts as the policy records them (the same list under ``fail-run``)."""
    if policy == FAIL_RUN or not any(attempt.get("status") in COUNTED for attempt in attempts):
        return attempts
    return [_counted(attempt) if attempt.get("status") in COUNTED else attempt for attempt in attempts]


def _counted(attempt: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **attempt,
        "status": "incorrect",
        "verified": False,
        "canonical_key": None,
        ORIGINAL_STATUS: attempt["status"],
    }


def evaluation_extras(policy: str, counted: Mapping[str, int]) -> dict[str, Any]:
    """Keys a non-default policy adds to (or replaces in) the receipt's ``evaluation`` block."""
    if policy == FAIL_RUN:
        return {}
    return {
        "scoring_policy": COUNTED_SCORING_POLICY,
        "unscorable": policy,
        "counted_as_incorrect": dict(sorted(counted.items())),
    }
