"""0.4.0's in-process grading helpers for reward functions (``modebench.grading``).

There is no level or domain argument: the domain comes from the reference's ``verifier`` field.
Every response is graded by the same bounded worker as ``verifier.grade_response`` (model text
never runs in the caller's process); only the legacy conventions differ from the graded path:
a wrong or unparsable answer gives ``None`` rather than a status, the Level 1 Pantry projection
is not applied (a bare mask is not an allocation), and an evaluator failure raises
:class:`~modebench.diagnostics.VerifierExecutionError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from modebench.compat.routes import (
    COUNTDOWN_VALUE_PREFIX,
    MATHIR_SOLUTION_PREFIX,
    countdown_route,
    fraction_text,
    mathir_route,
    python_factor_route_signature,
)
from modebench.diagnostics import UNSCORABLE, VerifierExecutionError
from modebench.domains import DomainPlugin, builtin_plugins
from modebench.domains._protocol import InvalidReference, Malformed
from modebench.domains.countdown.check import operand_key
from modebench.domains.countdown.parse import candidate as countdown_candidate
from modebench.domains.countdown.parse import normalise as countdown_normalise
from modebench.domains.countdown.parse import sides as countdown_sides
from modebench.domains.graph_coloring.grade import KEY_PREFIX as GRAPH_KEY_PREFIX
from modebench.domains.graph_coloring.grade import extract_candidate as graph_candidate
from modebench.domains.graph_coloring.grade import read_coloring
from modebench.domains.graph_coloring.reference import validate_reference as graph_reference
from modebench.domains.mathir.parse import candidate as mathir_candidate
from modebench.domains.mathir.parse import parse_free_program, parse_menu_program
from modebench.domains.pantry_plan.parse import candidate as pantry_candidate
from modebench.domains.python_factors.surface import extract_candidate as extract_python_candidate

COUNTDOWN_VERIFIER = "countdown"
GRAPH_COLORING_VERIFIER = "graph_coloring"
MATHIR_VERIFIER = "mathir_algebra"
MATHIR_MENU_VERIFIER = "mathir_action_menu"
PANTRY_PLAN_VERIFIER = "pantry_plan"
PYTHON_FACTOR_VERIFIER = "python_factor_function"
PYTHON_FACTOR_RESPONSE_SURFACE_VERSION = "python-factor-response-v2-latex-lambda"

#: Verifiers that 0.4.0 ran in a separate process: their unscorable outcomes (an invalid
#: reference included) raise instead of failing closed.
_PROCESS_VERIFIERS = frozenset({PYTHON_FACTOR_VERIFIER})
_CANDIDATES: dict[str, Callable[[str], str | None]] = {
    COUNTDOWN_VERIFIER: countdown_candidate,
    GRAPH_COLORING_VERIFIER: graph_candidate,
    MATHIR_VERIFIER: mathir_candidate,
    MATHIR_MENU_VERIFIER: mathir_candidate,
    PANTRY_PLAN_VERIFIER: pantry_candidate,
}
#: Any level but 1 grades an allocation without the Level 1 support-mask projection.
_LEGACY_LEVEL = 2
_SURFACE_FAILURE = "invalid response surface"


@dataclass(frozen=True)
class VerifiedExplorationIdentity:
    """The identity of one verified response: a prompt-local endpoint and a cross-prompt route."""

    verifier: str
    endpoint_key: str
    route_signature: str | None


def _reference(gt_answer: Any) -> dict[str, Any] | None:
    if isinstance(gt_answer, str):
        try:
            gt_answer = json.loads(gt_answer)
        except ValueError:
            return None
    return gt_answer if isinstance(gt_answer, dict) else None


def _plugin_for(verifier: Any) -> DomainPlugin | None:
    for found in builtin_plugins():
        if verifier in found.verifiers:
            return found
    return None


def _legacy_answer(answer: dict[str, Any]) -> dict[str, Any]:
    # 0.4.0's helper reads the Countdown target with int(), so "18" and 18.0 are accepted here
    # although the graded path rejects them as invalid references (countdown.md, legacy helpers).
    target = answer.get("target")
    if answer.get("verifier") != COUNTDOWN_VERIFIER or isinstance(target, int):
        return answer
    try:
        return {**answer, "target": int(target)}  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return answer


def _grade(model_response: Any, gt_answer: Any) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """(verifier, reference, graded result) for a benchmark reference, else None."""
    answer = _reference(gt_answer)
    if answer is None:
        return None
    found = _plugin_for(answer.get("verifier"))
    if found is None:
        return None
    answer = _legacy_answer(answer)
    verifier = str(answer["verifier"])
    if not isinstance(model_response, str):
        return verifier, answer, {"status": "malformed", "canonical_key": None, "detail": None}
    # Looked up at call time, like every grading entry point (a caller may replace it).
    from modebench import verifier as bounded  # noqa: PLC0415 - up a floor at call time: 0.4.0's helper reaches the bounded worker only when it grades

    graded = bounded.grade_response(_LEGACY_LEVEL, found.name, {"answer": answer}, model_response)
    status = graded.get("status")
    if status in UNSCORABLE and (verifier in _PROCESS_VERIFIERS or status != "invalid_reference"):
        if status != "resource_limit" or verifier in _PROCESS_VERIFIERS:
            raise VerifierExecutionError(graded)
    return verifier, answer, graded


def _has_candidate(verifier: str, text: str) -> bool:
    """Whether the response surface yields a candidate, by the domain's own extraction rules."""
    if verifier == PYTHON_FACTOR_VERIFIER:
        try:
            extract_python_candidate(text)
        except Malformed:
            return False
        return True
    extract = _CANDIDATES.get(verifier)
    if extract is None:
        return False
    try:
        return extract(text) is not None
    except Malformed:
        return False


def validated_modebench_outcome_key(model_response: str, gt_answer: Any) -> str | None:
    """The canonical mode key of a response that verifies against a ModeBench reference, else None.

    Non-benchmark references (no known ``verifier``) fail closed with None; an evaluator failure
    raises ``VerifierExecutionError``.
    """
    graded = _grade(model_response, gt_answer)
    if graded is None or graded[2].get("status") != "correct":
        return None
    key = graded[2].get("canonical_key")
    return key if isinstance(key, str) else None


def _endpoint_and_route(
    verifier: str, answer: dict[str, Any], graded: dict[str, Any], response: str
) -> tuple[str, str | None]:
    key = str(graded["canonical_key"])
    if verifier == COUNTDOWN_VERIFIER:
        return f"{COUNTDOWN_VALUE_PREFIX}{answer['target']}/1", countdown_route(key)
    if verifier == PYTHON_FACTOR_VERIFIER:
        # Parsed (never run) here: the route is the candidate's syntax skeleton.
        return key, python_factor_route_signature(extract_python_candidate(response))
    if verifier in (MATHIR_VERIFIER, MATHIR_MENU_VERIFIER):
        found = _plugin_for(verifier)
        assert found is not None  # _grade found it
        parsed = found.validate_reference(_LEGACY_LEVEL, answer)
        program = mathir_candidate(response) or ""
        if parsed.menu:
            ids = parse_menu_program(program, parsed.action_ids, parsed.max_steps)
            commands = [(parsed.actions[i].op, parsed.actions[i].arg) for i in ids]
        else:
            commands = list(parse_free_program(program, parsed.symbols, parsed.max_steps))
        route = mathir_route(parsed.start_key, sorted(parsed.symbols - {"x"}), commands)
        return MATHIR_SOLUTION_PREFIX + fraction_text(parsed.target), route
    return key, None


def validated_modebench_exploration_identity(
    model_response: str, gt_answer: Any
) -> VerifiedExplorationIdentity | None:
    """Endpoint key and route signature of a response, only after it verifies."""
    graded = _grade(model_response, gt_answer)
    if graded is None or graded[2].get("status") != "correct":
        return None
    verifier, answer, result = graded
    endpoint, route = _endpoint_and_route(verifier, answer, result, model_response)
    return VerifiedExplorationIdentity(verifier, endpoint, route)


def boxed_reward_fn(model_response: Any, gt_answer: Any, fast: bool = False) -> tuple[dict[str, bool], float]:
    """``({"formatted": bool}, 1.0 or 0.0)``; non-benchmark references fail closed (0.0, unformatted)."""
    del fast  # 0.4.0 accepts and ignores it: grading is exact either way
    graded = _grade(model_response, gt_answer)
    if graded is None:
        return {"formatted": False}, 0.0
    verifier, _, result = graded
    status = result.get("status")
    formatted = not (status == "malformed" and result.get("detail") == _SURFACE_FAILURE)
    if status in ("invalid_reference", "resource_limit") and isinstance(model_response, str):
        formatted = _has_candidate(verifier, model_response)  # the surface alone decides
    return {"formatted": formatted}, 1.0 if status == "correct" else 0.0


def extract_normalized_final_answer(
    model_response: Any, *, template: str = "qwen_boxed", gt_answer: Any = None
) -> str | None:
    """Legacy display key; without a reference there is none. Use the validated key for admission."""
    del template  # every 0.4.0 template shares the boxed/bare response surface
    if gt_answer is None:
        return None
    answer = _reference(gt_answer)
    verifier = answer.get("verifier") if answer is not None else None
    if isinstance(model_response, str) and verifier in _DISPLAY_KEYS:
        # 0.4.0 keyed these without checking the value or the colouring (not an admission key).
        return _DISPLAY_KEYS[verifier](model_response, answer)
    return validated_modebench_outcome_key(model_response, gt_answer)


def _countdown_display_key(text: str, answer: Any) -> str | None:
    numbers = answer.get("numbers")
    found = countdown_candidate(text)
    if found is None or not isinstance(numbers, list) or not all(type(n) is int for n in numbers):
        return None
    return operand_key(tuple(numbers), countdown_sides(countdown_normalise(found)))


def _graph_display_key(text: str, answer: Any) -> str | None:
    found = graph_candidate(text)
    if found is None:
        return None
    try:
        ref = graph_reference(_LEGACY_LEVEL, answer)
        coloring, _ = read_coloring(ref, found)
    except (InvalidReference, Malformed):
        return None
    return GRAPH_KEY_PREFIX + coloring


_DISPLAY_KEYS: dict[str, Callable[[str, Any], str | None]] = {
    COUNTDOWN_VERIFIER: _countdown_display_key,
    GRAPH_COLORING_VERIFIER: _graph_display_key,
}


def last_boxed_only_string(string: str) -> str | None:
    """The last ``\\boxed{…}`` (or, without one, ``\\fbox{…}``) including the command, by brace count."""
    start = string.rfind("\\boxed")
    if start < 0:
        start = string.rfind("\\fbox")
        if start < 0:
            return None
    depth = 0
    for index in range(start, len(string)):
        if string[index] == "{":
            depth += 1
        elif string[index] == "}":
            depth -= 1
            if depth == 0:
                return string[start : index + 1]
    return None


def remove_boxed(s: Any) -> str | None:
    """The content of a ``\\boxed{…}`` string, or None when it is not one."""
    opening = "\\boxed{"
    if isinstance(s, str) and s.startswith(opening) and s.endswith("}"):
        return s[len(opening) : -1]
    return None


def extract_answer(passage: str) -> str | None:
    """The content of the last ``\\boxed{…}`` of a passage, or None."""
    if "\\boxed" not in passage:
        return None
    return remove_boxed(last_boxed_only_string(passage))


def extract_boxed_answer(solution: str) -> str | None:
    """Extract the answer from inside a LaTeX ``\\boxed{}`` command."""
    return remove_boxed(last_boxed_only_string(solution))


__all__ = [
    "MATHIR_MENU_VERIFIER",
    "MATHIR_VERIFIER",
    "PANTRY_PLAN_VERIFIER",
    "PYTHON_FACTOR_RESPONSE_SURFACE_VERSION",
    "PYTHON_FACTOR_VERIFIER",
    "VerifiedExplorationIdentity",
    "boxed_reward_fn",
    "extract_answer",
    "extract_boxed_answer",
    "extract_normalized_final_answer",
    "last_boxed_only_string",
    "remove_boxed",
    "validated_modebench_exploration_identity",
    "validated_modebench_outcome_key",
]
