"""Request planning: per-draw seeds, grouping into ``n`` choices, skipping recorded draws."""

from __future__ import annotations

import pytest

from modebench.generate import GenerationSettings, draw_seed
from modebench.generate._plan import Prompt, Request, chatml_prompt, plan_requests
from modebench.validation import InputError

PROMPTS = [Prompt("a", [], {}), Prompt("b", [], {})]


def test_draw_seeds_are_reproducible_and_distinct() -> None:
    seeds = {draw_seed(1, f"p{i}", d) for i in range(200) for d in range(16)}
    assert len(seeds) == 3200 and all(0 <= s < 2**31 for s in seeds)
    assert draw_seed(1, "p0", 0) == draw_seed(1, "p0", 0) != draw_seed(2, "p0", 0)


def test_plan_groups_choices_and_skips_recorded_draws() -> None:
    assert plan_requests(PROMPTS, 3, 1, None, set()) == [
        Request(p, d, 1, None) for p in (0, 1) for d in range(3)
    ]
    grouped = plan_requests(PROMPTS, 5, 2, 7, set())
    assert [(r.prompt, r.start, r.count) for r in grouped] == [
        (0, 0, 2),
        (0, 2, 2),
        (0, 4, 1),
        (1, 0, 2),
        (1, 2, 2),
        (1, 4, 1),
    ]
    assert grouped[1].seed == draw_seed(7, "a", 2)
    # A half-recorded group is completed draw by draw; a fully recorded one is not sent.
    resumed = plan_requests(PROMPTS, 4, 2, 7, {("a", 0), ("a", 1), ("b", 3)})
    assert resumed == [
        Request(0, 2, 2, draw_seed(7, "a", 2)),
        Request(1, 0, 2, draw_seed(7, "b", 0)),
        Request(1, 2, 1, draw_seed(7, "b", 2)),
    ]


def test_chatml_prompt_ends_at_the_assistant_turn() -> None:
    text = chatml_prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"k": 0}, "k must be a positive integer"),
        ({"k": 4097}, "k must be at most 4096"),
        ({"choices_per_request": 3, "k": 2}, "choices_per_request must not exceed k"),
        ({"temperature": float("nan")}, "temperature must be a finite number"),
        ({"top_p": 1.5}, "top_p must be at most 1"),
        ({"seed": True}, "seed must be an integer"),
        ({"processes": 4, "concurrency": 2}, "processes must not exceed concurrency"),
        ({"prompt_condition": "other"}, "prompt_condition is not a supported prompt condition"),
    ],
)
def test_settings_are_checked(changes: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"model": "m", "base_url": "http://127.0.0.1:1/v1", "k": 2, **changes}
    with pytest.raises(InputError, match=message):
        GenerationSettings(**arguments)  # type: ignore[arg-type]
