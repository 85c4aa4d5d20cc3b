"""Deterministic graph-coloring task generator, one eval-style row per call.

Construction (the documented Level-1 "exact answer mode" recipe, with each level's vertex and
hidden-vertex ranges of the released levels): draw n; draw an edge count uniformly from max(1, n-2) to
min(8, n(n-1)/2) and that many distinct pairs, stored sorted as [u, v] with u < v; skip graphs
with fewer than 4 proper 3-colourings; plant a uniformly chosen proper colouring; up to 128 times
hide a random vertex set and keep the first whose completion count lies in [4, 24].

Mode counts come from exact enumeration through this domain's own ``grade`` (every fill string
is graded and the distinct canonical keys counted), so they certify the verifier itself.

Known differences from the frozen release (reported, not hidden):
* Levels 3-5 were built by calibrated candidate pools whose generators are not shipped; here
  they use the same recipe with their level's n / hidden ranges, and their ``level3_*`` /
  ``scale_*`` columns describe THIS generator (label ``GENERATOR``), not the reference pools.
* Dataset-level rules (duplicate skipping, train/eval identity disjointness, Level 2's
  histogram matching) need state across rows; a one-row ``generate`` cannot apply them.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from typing import Any

from modebench.domains._protocol import Incorrect, Malformed
from modebench.domains.graph_coloring.grade import KEY_PREFIX, grade
from modebench.domains.graph_coloring.reference import GraphRef, validate_reference

SOURCE = "exact_answer_mode_graph_coloring"
#: Provenance label for the construction columns of levels 3-5 (not a reference value).
GENERATOR = "modebench_py_graph_coloring_generator_v1"
MAX_EDGES = 8
MIN_COMPLETIONS = 4
MAX_COMPLETIONS = 24
HIDDEN_TRIES = 128
#: Bound on graph draws, so a broken verifier fails loudly instead of looping forever.
GRAPH_TRIES = 10_000


@dataclass(frozen=True)
class LevelParams:
    vertices: tuple[int, ...]
    hidden: tuple[int, ...]
    split_tag: str


LEVELS: dict[int, LevelParams] = {
    1: LevelParams((4, 5, 6), (3,), "eval_multi_answer"),
    2: LevelParams((5, 6), (4,), "level2_eval"),
    3: LevelParams((5,), (3,), "level3_eval"),
    4: LevelParams((5, 6), (3, 4), "level4_eval"),
    5: LevelParams((6, 7), (3, 4), "level5_eval"),
}

PROBLEM = (
    "Color this graph with vertices 1 through {n}. The undirected edges are: {edges}. Assign each "
    "vertex one color from {{1, 2, 3}} so that no edge has the same color on both endpoints. A partial "
    "coloring is {partial}, where ? means uncolored. Keep every shown digit fixed. There are exactly "
    "{h} question marks. Return exactly one final answer and no explanation: exactly {h} digits, each "
    "one 1, 2, or 3, for the missing positions from left to right, inside \\boxed{{}}."
)


def render_problem(answer: dict[str, Any]) -> str:
    """The released problem text for an answer object (edges in stored order, ``?`` for hidden)."""
    edges = ", ".join(f"({u},{v})" for u, v in answer["edges"]) or "none"
    partial = answer.get("partial_colors") or []
    shown = "".join("?" if c is None else str(c) for c in partial)
    return PROBLEM.format(n=answer["n"], edges=edges, partial=shown, h=shown.count("?"))


def accepted_keys(level: int, ref: GraphRef, candidates: Any) -> set[str]:
    """Distinct canonical keys the verifier gives to the candidate strings it accepts."""
    keys = set()
    for candidate in candidates:
        try:
            keys.add(grade(level, ref, candidate).key)
        except Incorrect:
            continue
        except Malformed as exc:  # every enumerated candidate has a legal digit count
            raise RuntimeError(f"generator candidate {candidate!r} was malformed") from exc
    return keys


def _digit_strings(length: int) -> Any:
    return ("".join(p) for p in itertools.product("123", repeat=length))


def _make_row(level: int, params: LevelParams, answer: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    h = answer["partial_colors"].count(None)
    answer["instance_id"] = f"{params.split_tag}-{rng.randrange(10**9)}-0"
    row: dict[str, Any] = {
        "problem": render_problem(answer),
        "answer": json.dumps(answer, sort_keys=True, separators=(",", ":")),
        "modebench_task": "graph_coloring",
        "answer_mode_count": answer["num_completions"],
        "answer_mode_split": params.split_tag,
    }
    shape = f"n{answer['n']}-e{len(answer['edges'])}-h{h}"
    if level == 3:
        row.update(
            level3_difficulty=f"hidden{h}",
            level3_generator=GENERATOR,
            level3_graph_preset=shape,
            level3_cell_index=answer["num_completions"],
        )
    elif level in (4, 5):
        origin = {"generator": GENERATOR, "level": level, "shape": shape}
        row.update(
            scale_candidate_generator=GENERATOR,
            scale_candidate_tier=f"h{h}",
            scale_candidate_profile=shape,
            scale_origin_metadata=json.dumps(origin, sort_keys=True, separators=(",", ":")),
            scale_cell_index=answer["num_completions"],
        )
        row["scale_bridge_law_version" if level == 4 else "scale_graph_topology_law_version"] = GENERATOR
    return row


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    """One row for ``level`` (1-5); the same ``rng`` state always yields the same row."""
    if level not in LEVELS:
        raise ValueError("level must be 1, 2, 3, 4, or 5")
    params = LEVELS[level]
    for _ in range(GRAPH_TRIES):
        n = rng.choice(params.vertices)
        pairs = [[u, v] for u in range(1, n + 1) for v in range(u + 1, n + 1)]
        count = rng.randint(max(1, n - 2), min(MAX_EDGES, len(pairs)))
        edges = sorted(rng.sample(pairs, count))
        graph = {"verifier": "graph_coloring", "n": n, "edges": edges}
        solutions = sorted(
            k.removeprefix(KEY_PREFIX)
            for k in accepted_keys(level, validate_reference(level, graph), _digit_strings(n))
        )
        if len(solutions) < MIN_COMPLETIONS:
            continue
        planted = rng.choice(solutions)
        h = rng.choice(params.hidden)
        for _ in range(HIDDEN_TRIES):
            hidden = set(rng.sample(range(n), h))
            partial = [None if i in hidden else int(planted[i]) for i in range(n)]
            answer = {**graph, "partial_colors": partial}
            completions = accepted_keys(level, validate_reference(level, answer), _digit_strings(h))
            if MIN_COMPLETIONS <= len(completions) <= MAX_COMPLETIONS:
                answer.update(source=SOURCE, num_solutions=len(solutions), num_completions=len(completions))
                return _make_row(level, params, answer, rng)
    raise RuntimeError(f"no level-{level} graph task found in {GRAPH_TRIES} draws")


__all__ = ["GENERATOR", "LEVELS", "accepted_keys", "generate", "render_problem"]
