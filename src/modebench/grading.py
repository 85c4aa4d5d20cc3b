"""ModeBench 0.4.0's in-process grading API for reward functions (a thin module over ``compat``).

``from modebench.grading import extract_answer, VerifiedExplorationIdentity`` works as it did in
0.4.0: the domain comes from the reference's ``verifier`` field, the candidate from the last
``\\boxed{}`` or a bare answer, and only a response that verifies yields a key.
"""

from __future__ import annotations

from modebench.compat.grading import (
    MATHIR_MENU_VERIFIER,
    MATHIR_VERIFIER,
    PANTRY_PLAN_VERIFIER,
    PYTHON_FACTOR_RESPONSE_SURFACE_VERSION,
    PYTHON_FACTOR_VERIFIER,
    VerifiedExplorationIdentity,
    boxed_reward_fn,
    extract_answer,
    extract_boxed_answer,
    extract_normalized_final_answer,
    last_boxed_only_string,
    remove_boxed,
    validated_modebench_exploration_identity,
    validated_modebench_outcome_key,
)

# 0.4.0's private helpers: Re:Max's ``legacy_modebench`` imports them from here.
from modebench.compat.legacy import _canonical_countdown_expression_key as _canonical_countdown_expression_key
from modebench.compat.legacy import _extract_modebench_candidate as _extract_modebench_candidate
from modebench.compat.legacy import _graph_coloring_from_candidate as _graph_coloring_from_candidate
from modebench.compat.legacy import _verify_graph_coloring_colors as _verify_graph_coloring_colors
from modebench.compat.routes import python_factor_route_signature
from modebench.domains.mathir.verifier import validate_mathir_action_menu, validate_mathir_algebra
from modebench.domains.pantry_plan.verifier import validate_pantry_plan
from modebench.domains.python_factors.process import validate_python_factor_function_external

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
    "python_factor_route_signature",
    "remove_boxed",
    "validate_mathir_action_menu",
    "validate_mathir_algebra",
    "validate_pantry_plan",
    "validate_python_factor_function_external",
    "validated_modebench_exploration_identity",
    "validated_modebench_outcome_key",
]
