"""Deterministic MathIR task generator: one menu row per call, all randomness from ``rng``.

A row is a family template with sampled integer bindings and the
template commands shuffled onto IDs A–F. The mode count and key digest come from exhaustive
enumeration with this package's own verifier (:func:`check.support`); a sample whose support is
not the family's certified 5-key support is rejected and redrawn from the same ``rng``.
Construction details of the release that were never published (level-2 selection, level-3 preset mix,
level-3/4/5 metadata column values) are approximated and documented in ``LEVELS``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from modebench.domains.mathir.check import support
from modebench.domains.mathir.reference import MENU_VERIFIER, validate_reference

PROBLEM = (
    "MathIR linear-menu-v1. Solve for x by choosing an executable action sequence. Every selected action is "
    "applied exactly to BOTH sides of the current equation, followed by exact simplification. Bindings: "
    "{bindings}. Initial equation: {display}. Action menu: {menu}. Choose 1-4 action IDs. Illegal operations, "
    "repeated states, and paths that do not finish with x isolated are rejected. Return only the IDs separated "
    "by semicolons inside the answer box; for example formatting only: \\boxed{{A;C}}. Do not return x's "
    "numeric value."
)
MODE_COUNT = 5
MAX_ATTEMPTS = 1000


@dataclass(frozen=True)
class Family:
    name: str
    display: str
    lhs: str
    rhs: str
    commands: tuple[str, ...]
    digest: str  # certified support digest (identical for every row of the family)


def _fam(name: str, display: str, lhs: str, rhs: str, commands: str, digest: str) -> Family:
    return Family(name, display, lhs, rhs, tuple(commands.split()), digest)


FAMILIES = {
    f.name: f
    for f in (
        _fam(
            "ax_plus_b_eq_c",
            "a*x + b = c",
            "add(mul(a,x),b)",
            "c",
            "sub(b) div(a) sub(div(b,a)) add(b) mul(a) sub(c)",
            "74fa6c88c9374d1ea62ef16e1052215fb07d3e7444aae7ef4b91fd2dda3a5e0c",
        ),
        _fam(
            "x_over_a_plus_b_eq_c",
            "x/a + b = c",
            "add(div(x,a),b)",
            "c",
            "sub(b) mul(a) sub(mul(a,b)) add(b) div(a) sub(c)",
            "712b6aa21de2beaecd85fbb7cb4934a4cdb22b4fffde923c092e21ed1e819809",
        ),
        _fam(
            "ax_plus_b_eq_dx_plus_c",
            "a*x + b = d*x + c",
            "add(mul(a,x),b)",
            "add(mul(d,x),c)",
            "sub(b) sub(mul(d,x)) div(sub(a,d)) sub(add(mul(d,x),b)) add(b) div(a)",
            "15dac6b473087cd34d061a619eff1e23daabea994e48ee354392a1b3290c4894",
        ),
        _fam(
            "ax_plus_b_eq_c_minus_dx",
            "a*x + b = c - d*x",
            "add(mul(a,x),b)",
            "sub(c,mul(d,x))",
            "sub(b) add(mul(d,x)) div(add(a,d)) sub(sub(b,mul(d,x))) add(b) div(a)",
            "63eea5fdb392676524bacf855420853a372d42f80eb9671596ec46df662e1327",
        ),
        _fam(
            "level3_rational_equation_1",
            "a*x/e + b/f = d*x + c",
            "add(div(mul(a,x),e),div(b,f))",
            "add(mul(d,x),c)",
            "sub(div(b,f)) sub(mul(d,x)) div(sub(div(a,e),d)) sub(add(mul(d,x),div(b,f))) add(div(b,f)) "
            "div(div(a,e))",
            "417414a741a76129558315a57af4b20920b69c959666dd63e53e1cc167c1143c",
        ),
        _fam(
            "level3_rational_equation_2",
            "(a*x + b)/e = (d*x + c)/f",
            "div(add(mul(a,x),b),e)",
            "div(add(mul(d,x),c),f)",
            "sub(div(b,e)) sub(mul(div(d,f),x)) div(sub(div(a,e),div(d,f))) "
            "sub(add(mul(div(d,f),x),div(b,e))) add(div(b,e)) div(div(a,e))",
            "3345ecd175ad72cc5367458834c561ce7de2aaeccf18faeee23125321c982797",
        ),
        _fam(
            "level3_rational_equation_3",
            "a*(x + b)/e = (c - d*x)/f",
            "div(mul(a,add(x,b)),e)",
            "div(sub(c,mul(d,x)),f)",
            "sub(div(mul(a,b),e)) add(div(mul(d,x),f)) div(add(div(a,e),div(d,f))) "
            "sub(sub(div(mul(a,b),e),div(mul(d,x),f))) add(div(mul(a,b),e)) div(div(a,e))",
            "8a1dc42f8197a1cce32c910400882c73bf7a77bfc412146423db638ba1eb145b",
        ),
        _fam(
            "scale_split_linear_sum_coefficient_denominator_v1",
            "a*x/(a+e) + b/f = d*x + c",
            "add(div(mul(a,x),add(a,e)),div(b,f))",
            "add(mul(d,x),c)",
            "sub(div(b,f)) sub(mul(d,x)) div(sub(div(a,add(a,e)),d)) sub(add(mul(d,x),div(b,f))) "
            "add(div(b,f)) div(div(a,add(a,e)))",
            "81559288b63102d25d9c74de1127dc49b14d08698b666ee4ebd6573e5455b0c0",
        ),
        _fam(
            "scale_split_linear_difference_offset_denominator_v1",
            "a*x/e + b/(b-f) = d*x + c",
            "add(div(mul(a,x),e),div(b,sub(b,f)))",
            "add(mul(d,x),c)",
            "sub(div(b,sub(b,f))) sub(mul(d,x)) div(sub(div(a,e),d)) sub(add(mul(d,x),div(b,sub(b,f)))) "
            "add(div(b,sub(b,f))) div(div(a,e))",
            "89e296fa400d1c8e18ed0ab71f37535b2119fba149c8a3f28f5a8d44fc920d17",
        ),
        _fam(
            "scale_split_linear_sum_difference_denominators_v1",
            "a*x/(a+e) + b/(b-f) = d*x + c",
            "add(div(mul(a,x),add(a,e)),div(b,sub(b,f)))",
            "add(mul(d,x),c)",
            "sub(div(b,sub(b,f))) sub(mul(d,x)) div(sub(div(a,add(a,e)),d)) "
            "sub(add(mul(d,x),div(b,sub(b,f)))) add(div(b,sub(b,f))) div(div(a,add(a,e)))",
            "0c329c76b6755743cd380effd4537893fbc25f91fb21ed095b07d0a679deda71",
        ),
    )
}


def _nonzero(rng: random.Random, bound: int) -> int:
    value = 0
    while value == 0:
        value = rng.randint(-bound, bound)
    return value


def _linear(family: str, rng: random.Random) -> dict[str, int]:
    """Level-1 laws: integer solution s (x = a·s for the x/a family)."""
    s, a, b = _nonzero(rng, 9), _nonzero(rng, 9), rng.randint(-12, 12)
    if family == "ax_plus_b_eq_c":
        return {"a": a, "b": b, "c": a * s + b}
    if family == "x_over_a_plus_b_eq_c":
        return {"a": a, "b": b, "c": s + b}
    d = _nonzero(rng, 9)
    while d == (a if family == "ax_plus_b_eq_dx_plus_c" else -a):
        d = _nonzero(rng, 9)
    coefficient = a - d if family == "ax_plus_b_eq_dx_plus_c" else a + d
    return {"a": a, "b": b, "c": coefficient * s + b, "d": d}


def _fixed_sign(preset: str, rng: random.Random) -> dict[str, int]:
    """Level-3 fixed-sign laws on a*x + b = c: |a| ≤ 9, 1 ≤ |b| ≤ 12, 1 ≤ |s| ≤ 9."""
    while True:
        a, b, s = _nonzero(rng, 9), _nonzero(rng, 12), _nonzero(rng, 9)
        if {"a_pos_b_neg": a > 0 > b, "a_neg_b_pos": a < 0 < b, "ab_neg": a * b < 0}[preset]:
            return {"a": a, "b": b, "c": a * s + b}


def _rational3(rng: random.Random, bound: int, positive_denominators: bool) -> dict[str, int]:
    """``a*(x + b)/e = (c - d*x)/f`` with a·f + d·e ≠ 0."""
    while True:
        values = {name: _nonzero(rng, bound) for name in "abcd"}
        for name in "ef":
            values[name] = rng.randint(1, bound) if positive_denominators else _nonzero(rng, bound)
        if values["a"] * values["f"] + values["d"] * values["e"] != 0:
            return values


def _rational2(rng: random.Random, bound: int) -> dict[str, int]:
    """``(a*x + b)/e = (d*x + c)/f`` with a·f ≠ d·e."""
    while True:
        values = {name: _nonzero(rng, bound) for name in "abcdef"}
        if values["a"] * values["f"] != values["d"] * values["e"]:
            return values


L5_TIERS = (
    "level3_rational_equation_1",
    "scale_split_linear_sum_coefficient_denominator_v1",
    "scale_split_linear_difference_offset_denominator_v1",
    "scale_split_linear_sum_difference_denominators_v1",
)


def _structural(tier: int, rng: random.Random) -> dict[str, int]:
    """Level-5 laws: a..f nonzero in [−13, 13], D1 ≠ 0, D2 ≠ 0, a ≠ d·D1."""
    while True:
        v = {name: _nonzero(rng, 13) for name in "abcdef"}
        d1 = v["a"] + v["e"] if tier in (1, 3) else v["e"]
        d2 = v["b"] - v["f"] if tier in (2, 3) else v["f"]
        if d1 != 0 and d2 != 0 and v["a"] != v["d"] * d1:
            return v


Sample = tuple[str, dict[str, int], dict[str, Any], str]  # family, bindings, extra columns, source


def _level1(rng: random.Random) -> Sample:
    family = rng.choice(
        ("ax_plus_b_eq_c", "x_over_a_plus_b_eq_c", "ax_plus_b_eq_dx_plus_c", "ax_plus_b_eq_c_minus_dx")
    )
    return family, _linear(family, rng), {}, "synthetic_mathir_action_menu_v1"


def _level2(rng: random.Random) -> Sample:
    # Approximation: the exact-support-cell preference of the release is not public.
    family = rng.choice(("ax_plus_b_eq_dx_plus_c", "ax_plus_b_eq_c_minus_dx"))
    return family, _linear(family, rng), {}, "synthetic_mathir_action_menu_v1"


_L3_PRESETS = ("a_pos_b_neg", "a_neg_b_pos", "ab_neg", "rational_equation_3")


def _level3(rng: random.Random) -> Sample:
    # The released preset mix is not public: presets are drawn uniformly.
    index = rng.randrange(len(_L3_PRESETS))
    preset = _L3_PRESETS[index]
    if preset == "rational_equation_3":
        family, bindings = "level3_rational_equation_3", _rational3(rng, 29, positive_denominators=True)
    else:
        family, bindings = "ax_plus_b_eq_c", _fixed_sign(preset, rng)
    extra = {"level3_difficulty": index, "level3_generation_profile": preset, "level3_cell_index": index}
    return family, bindings, extra, "synthetic_mathir_level3_fixed_sign_candidates_v1"


_L4_BOUNDS = (9, 13, 19, 29)


def _level4(rng: random.Random) -> Sample:
    difficulty = rng.randrange(len(_L4_BOUNDS))
    bound = _L4_BOUNDS[difficulty]
    family = rng.choice(("level3_rational_equation_2", "level3_rational_equation_3"))
    if family == "level3_rational_equation_2":
        bindings = _rational2(rng, bound)
    else:
        bindings = _rational3(rng, bound, positive_denominators=False)
    extra = {
        "scale_origin_metadata": json.dumps(
            {"family": family, "rational_difficulty": difficulty}, sort_keys=True
        ),
        "scale_candidate_generator": "synthetic_mathir_level3_candidates_v1",
        "scale_candidate_tier": difficulty,
        "scale_candidate_profile": f"rational_difficulty_{difficulty}",
        "scale_cell_index": difficulty,
    }
    return family, bindings, extra, "synthetic_mathir_level3_candidates_v1"


def _level5(rng: random.Random) -> Sample:
    tier = rng.randrange(len(L5_TIERS))
    family = L5_TIERS[tier]
    seed = rng.getrandbits(40)
    extra = {
        "scale_candidate_generator": "modebench_scale_l5_mathir_structural_candidate_laws_v1",
        "scale_candidate_tier": tier,
        "scale_candidate_profile": family,
        "scale_origin_metadata": json.dumps({"family": family, "tier": tier}, sort_keys=True),
        "scale_cell_index": tier,
        "scale_generation_seed": seed,
        "scale_structural_law_version": "v1",
    }
    return family, _structural(tier, rng), extra, "modebench_scale_l5_mathir_structural_candidate_laws_v1"


LEVELS: dict[int, Callable[[random.Random], Sample]] = {
    1: _level1,
    2: _level2,
    3: _level3,
    4: _level4,
    5: _level5,
}


def key_digest(keys: list[str]) -> str:
    """``valid_mode_key_sha256``: SHA-256 of the de-duplicated sorted keys joined by LF, no trailing newline."""
    return hashlib.sha256("\n".join(sorted(set(keys))).encode("utf-8")).hexdigest()


def _answer(
    family: Family, bindings: dict[str, int], order: list[int], instance_id: str, source: str
) -> dict[str, Any]:
    return {
        "actions": {chr(ord("A") + i): family.commands[j] for i, j in enumerate(order)},
        "bindings": dict(sorted(bindings.items())),
        "family": family.name,
        "initial_lhs": family.lhs,
        "initial_rhs": family.rhs,
        "instance_id": instance_id,
        "mathir_version": "linear-menu-v1",
        "max_steps": 4,
        "source": source,
        "support_is_open": False,
        "verifier": MENU_VERIFIER,
    }


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    """One row of the released schema for ``level`` (problem, answer string, metadata columns)."""
    if level not in LEVELS:
        raise ValueError(f"level must be 1..5, got {level!r}")
    for _ in range(MAX_ATTEMPTS):
        name, bindings, extra, source = LEVELS[level](rng)
        family = FAMILIES[name]
        order = list(range(len(family.commands)))
        rng.shuffle(order)
        instance_id = f"generated-level{level}-{rng.getrandbits(48):012x}"
        answer = _answer(family, bindings, order, instance_id, source)
        keys = sorted(support(validate_reference(level, answer)))
        digest = key_digest(keys)
        if len(keys) != MODE_COUNT or digest != family.digest:
            continue  # degenerate bindings: redraw (never expected under the guards)
        answer.update(num_completions=len(keys), valid_mode_count=len(keys), valid_mode_key_sha256=digest)
        problem = PROBLEM.format(
            bindings=", ".join(f"{k}={v}" for k, v in sorted(bindings.items())),
            display=family.display,
            menu="; ".join(f"{i} means {c}" for i, c in answer["actions"].items()),
        )
        return {
            "problem": problem,
            "answer": json.dumps(answer, sort_keys=True, separators=(",", ":")),
            "modebench_task": MENU_VERIFIER,
            "answer_mode_count": len(keys),
            "answer_mode_split": "multi_answer",
            "mathir_family": family.name,
            **extra,
        }
    raise RuntimeError("could not draw a MathIR row with the certified support")


__all__ = ["FAMILIES", "generate", "key_digest"]
