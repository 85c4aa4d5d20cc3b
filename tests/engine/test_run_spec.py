"""The run specification carries its options whole and derives its identity from the options' fields.

The identity rule (``modebench.receipt.run_identity``) reads each ``EvaluationOptions`` field's mark:
``"always"`` fields are bound, ``"unless-default"`` ones only away from their default, unmarked
ones never. These tests check the rule against the fields themselves, so a new field without a
mark, or a later option that would change a 0.4.0-shaped identity, fails here.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from modebench.api_types import EvaluationOptions
from modebench.cli.evaluation import add_commands
from modebench.engine import Execution, RunSpec
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.receipt.run_identity import bound_options, identity_fields
from modebench.validation import InputError, OptionError

#: ModeBench 0.4.0's EvaluationOptions fields (spec/api.md): the ones every identity binds.
OPTIONS_040 = ("min_defined_prompts", "run", "data_root", "config", "split", "allow_partial")
RUN = {
    "model": {"id": "m", "revision": "1"},
    "generation": {"draws_per_prompt": 2},
    "prompt_condition": "registered_hints_v1",
}


def _spec(tmp_path: Path, **options: object) -> RunSpec:
    return RunSpec.build(tmp_path / "in.jsonl", tmp_path / "out.json", EvaluationOptions(**options))  # type: ignore[arg-type]


def test_every_result_changing_040_option_is_always_bound_and_no_other_is() -> None:
    always = {name for name, _, bound, _ in identity_fields() if bound}
    # data_root is where the split is read from: the split record and manifest hash bind it.
    assert always == set(OPTIONS_040) - {"data_root"}


def test_a_run_with_every_later_option_at_its_default_binds_exactly_the_040_options(tmp_path: Path) -> None:
    bound = _spec(tmp_path).identity("0" * 64, None, {"name": "x"})["options"]
    assert bound == {
        "min_defined_prompts": DEFAULT_MIN_DEFINED_PROMPTS,
        "run": None,
        "config": None,
        "split": "eval",
        "allow_partial": False,
    }


def test_a_later_option_enters_the_identity_only_away_from_its_default(tmp_path: Path) -> None:
    for name, key, always, default in identity_fields():
        if always:
            continue
        assert key not in bound_options({name: default})
    ids = tmp_path / "ids.txt"
    ids.write_text("b\na\n", encoding="utf-8")
    options = _spec(tmp_path, ids=ids, unscorable="count-as-incorrect").identity("0" * 64, None, {})[
        "options"
    ]
    assert options["prompt_ids"] == ["a", "b"]  # the listed ids (ordered), not the path
    assert options["unscorable"] == "count-as-incorrect"
    assert "limit" not in options


def test_options_that_cannot_change_a_result_never_enter_the_identity(tmp_path: Path) -> None:
    plain = _spec(tmp_path, config="level1_countdown").identity("0" * 64, None, {})
    busy = _spec(
        tmp_path,
        config="level1_countdown",
        keep_checkpoint=True,
        offline=True,
        registry="bundled",
        cache_dir="c",
    ).identity("0" * 64, None, {})
    assert plain == busy


def test_the_spec_holds_the_callers_objects_whole(tmp_path: Path) -> None:
    execution = Execution(workers=2, resume=False, shard="1/2")
    options = EvaluationOptions(run=RUN, keep_checkpoint=True)  # type: ignore[arg-type]
    spec = RunSpec.build(tmp_path / "in.jsonl", tmp_path / "out.json", options, execution)
    assert spec.options == options  # run validated, equal to what was given
    assert spec.execution.workers == 2 and spec.options.keep_checkpoint
    assert spec.shard is not None and (spec.shard.index, spec.shard.count) == (1, 2)


@pytest.mark.parametrize(
    ("options", "execution", "message"),
    [
        (EvaluationOptions(offline=True), Execution(), "cache_dir and offline require a dataset config"),
        (EvaluationOptions(registry="bundled"), Execution(), "registry requires a dataset config"),
        (
            EvaluationOptions(),
            Execution(cluster_address="ray://h:1"),
            "a cluster address applies only to the ray back end",
        ),
        (EvaluationOptions(limit=3), Execution(), "limit requires a frozen config"),
    ],
)
def test_each_cross_field_rule_is_said_once_by_the_spec(
    tmp_path: Path, options: EvaluationOptions, execution: Execution, message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        RunSpec.build(tmp_path / "in.jsonl", tmp_path / "out.json", options, execution)


def test_the_v3_evaluator_shares_the_specs_rule_and_message() -> None:
    from modebench.evaluation import evaluate

    with pytest.raises(InputError, match="data_root, split, and allow_partial require a frozen config"):
        evaluate([], split="dev")


def test_from_args_maps_every_evaluate_flag_to_its_option(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "evaluate", "in.jsonl", "--output", "o.json", "--run", "run.json", "--config", "level1_countdown",
            "--split", "dev", "--allow-partial", "--min-defined-prompts", "7", "--registry", "bundled",
            "--cache-dir", "c", "--offline", "--keep-work", "--limit", "4", "--unscorable",
            "count-as-incorrect", "--ids", "ids.txt",
        ]
    )  # fmt: skip
    options = EvaluationOptions.from_args(args, "level1_countdown")
    assert options == EvaluationOptions(
        min_defined_prompts=7,
        run_file="run.json",
        config="level1_countdown",
        split="dev",
        allow_partial=True,
        registry="bundled",
        cache_dir="c",
        offline=True,
        keep_checkpoint=True,
        limit=4,
        unscorable="count-as-incorrect",
        ids="ids.txt",
    )
    # Every field of the options is reachable from the command line, except ``run`` (a file there)
    # and ``data_root`` (the other side of ``--cache-dir``'s either-or, checked alone).
    given = {f.name for f in dataclasses.fields(options) if getattr(options, f.name) != f.default}
    assert given == {f.name for f in dataclasses.fields(EvaluationOptions)} - {"run", "data_root"}
    rooted = parser.parse_args(["evaluate", "in.jsonl", "--output", "o.json", "--data-root", "d"])
    assert EvaluationOptions.from_args(rooted, None).data_root == "d"
