"""modebench's reward function for OpenRLHF's ``--remote_rm_url /path/to/file.py`` convention.

How OpenRLHF calls it (read from ``OpenRLHF/OpenRLHF`` at commit 3c3be623):

* ``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor.__init__``: a ``remote_rm_url`` ending
  in ``.py`` is loaded with ``importlib.util.spec_from_file_location("reward_func", path)`` and
  its module attribute ``reward_func`` is kept.
* ``SingleTurnAgentExecutor.execute``: after generating one sample, ``query =
  hf_tokenizer.decode(observation_tokens, skip_special_tokens=False)`` (the prompt text followed
  by the response, special tokens kept), then ``_fetch_rewards_via_func([query], [prompt],
  [label])``, which runs ``reward_func(queries, prompts, labels)`` in ``asyncio.to_thread`` (one
  sample per call, many samples at once). From the returned dict it takes ``rewards``,
  ``scores`` (``rewards`` when absent) and ``extra_logs``; an exception is logged and leaves the
  sample without a reward.
* ``openrlhf/trainer/ppo_utils/samples_generator.py``,
  ``_process_response_into_experience``: ``info["reward"] = torch.tensor([reward_val])`` and,
  per ``extra_logs`` entry, ``value.flatten()[0].item()`` for a tensor: so each value holds the
  sample's own number first. The upstream examples (``examples/python/reward_func.py``,
  ``math_reward_func.py``) return float tensors.
* ``prompt`` is the dataset's ``--input_key`` column with the chat template applied
  (``openrlhf/datasets/prompts_dataset.py``, ``preprocess_data``) and ``label`` its
  ``--label_key`` column.

:func:`openrlhf_rows` writes a split with a ``label`` column (JSON text: level, domain, answer,
prompt_id) beside the ``prompt`` messages; train with ``--input_key prompt --label_key label
--apply_chat_template``. The graded response is the query after its prompt, less trailing
end-of-turn tokens (``end_tokens``). Unscorable completions count as incorrect by default
(reward 0.0, ``unscorable`` 1.0 in the logs): OpenRLHF has no way to leave a sample out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from modebench.rl.batch import (
    BatchGrader,
    Completion,
    Graded,
    RewardInputError,
    SeenModes,
    UnscorableCompletion,
    UnscorablePolicy,
    check_policy,
)
from modebench.rl.coalesce import Coalescer

__all__ = ["END_TOKENS", "OpenRLHFReward", "openrlhf_label", "openrlhf_rows", "response_of"]

#: End-of-turn and padding tokens that ``decode(..., skip_special_tokens=False)`` leaves at the end
#: of a query (Qwen/ChatML, Llama 3, Llama 2/Mistral, Phi, GPT-2 style).
END_TOKENS: Final = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "</s>", "<|end|>")


def openrlhf_label(row: dict[str, Any]) -> str:
    """The ``label`` of a :func:`modebench.rl.trainer_rows` row: JSON with level, domain, answer
    (the reference object) and prompt_id."""
    answer = row["answer"]
    return json.dumps(
        {
            "level": row["level"],
            "domain": row["domain"],
            "answer": json.loads(answer) if isinstance(answer, str) else answer,
            "prompt_id": row.get("prompt_id"),
        },
        ensure_ascii=False,
        sort_keys=True,
    )


def openrlhf_rows(config: str, split: str = "eval", **options: Any) -> list[dict[str, Any]]:
    """:func:`modebench.rl.trainer_rows` with the ``label`` column OpenRLHF's ``--label_key``
    reads (``prompt`` stays the chat messages for ``--apply_chat_template``)."""
    from modebench.rl.dataset import trainer_rows

    return [
        {"prompt": row["prompt"], "label": openrlhf_label(row)}
        for row in trainer_rows(config, split, **options)
    ]


def response_of(query: str, prompt: str, end_tokens: Sequence[str] = END_TOKENS) -> str:
    """The response in an OpenRLHF query: the text after the prompt (the whole query when the
    prompt is not its start), less trailing ``end_tokens``."""
    if query.startswith(prompt):
        response = query[len(prompt) :]
    else:
        head, found, tail = query.partition(prompt) if prompt else ("", "", query)
        response = tail if found else query
    stripped = True
    while stripped:
        stripped = False
        for token in end_tokens:
            if token and response.endswith(token):
                response = response[: -len(token)]
                stripped = True
    return response


def _completion(query: Any, prompt: Any, label: Any, row: int, end_tokens: Sequence[str]) -> Completion:
    if not isinstance(query, str) or not isinstance(prompt, str):
        raise RewardInputError(row, None, "query and prompt must be strings")
    try:
        fields = json.loads(label) if isinstance(label, str) else label
    except ValueError as exc:
        raise RewardInputError(row, None, f"label is not JSON: {exc}") from None
    if not isinstance(fields, dict) or not {"level", "domain", "answer"} <= set(fields):
        raise RewardInputError(
            row,
            None,
            "label must be JSON with level, domain and answer (modebench.rl.openrlhf_rows writes it)",
        )
    pid = fields.get("prompt_id")
    return Completion(
        level=fields["level"],
        domain=fields["domain"],
        answer=fields["answer"],
        response=response_of(query, prompt, end_tokens),
        prompt_id=None if pid is None else str(pid),
    )


class OpenRLHFReward:
    """``reward_func(queries, prompts, labels, **kwargs)`` for OpenRLHF (module docstring).

    One-sample calls made concurrently (OpenRLHF's ``asyncio.to_thread`` per sample) are
    coalesced into pool batches; a longer call is graded as one batch. Returns ``rewards`` and
    ``scores`` (float tensors: 1.0 verified, else 0.0) and ``extra_logs`` with ``verified``,
    ``new_mode`` and ``unscorable`` (0/1 float tensors, one value per query). The pool starts on
    the first call.
    """

    def __init__(
        self,
        workers: int = 1,
        *,
        unscorable: UnscorablePolicy = "count-as-incorrect",
        end_tokens: Sequence[str] = END_TOKENS,
    ) -> None:
        if check_policy(unscorable) == "mask":
            raise ValueError(
                "unscorable='mask' cannot be used with OpenRLHF: a sample without a reward cannot be "
                "left out of its batch (use 'count-as-incorrect', the default, or 'raise')"
            )
        self.workers = workers
        self.unscorable: UnscorablePolicy = unscorable
        self.end_tokens = tuple(end_tokens)
        self.seen = SeenModes()
        self._grader: BatchGrader | None = None
        self._coalescer: Coalescer | None = None
        #: The last call's verdicts (a single call's, under concurrency).
        self.last: list[Graded] = []

    @property
    def coalescer(self) -> Coalescer:
        if self._coalescer is None:
            self._grader = BatchGrader(self.workers)
            self._coalescer = Coalescer(self._grader)
        return self._coalescer

    def close(self) -> None:
        if self._grader is not None:
            self._grader.close()
        self._grader = self._coalescer = None

    def __call__(
        self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any
    ) -> dict[str, Any]:
        try:
            import torch  # noqa: PLC0415 - OpenRLHF always has torch; modebench does not need it
        except ImportError:
            raise ImportError("modebench.rl.openrlhf needs torch (OpenRLHF's own dependency)") from None
        if not len(queries) == len(prompts) == len(labels):
            raise ValueError("queries, prompts and labels differ in length")
        batch = [
            _completion(query, prompt, label, row, self.end_tokens)
            for row, (query, prompt, label) in enumerate(zip(queries, prompts, labels))
        ]
        coalescer = self.coalescer
        if len(batch) == 1:
            graded = [coalescer.grade(batch[0])]
        else:
            graded = coalescer.grader.grade(batch, unscorable="mask")
        if self.unscorable == "raise":
            for result in graded:
                if not result.scorable:
                    raise UnscorableCompletion(result, graded)
        new = self.seen.new(graded)
        self.last = graded
        rewards = torch.tensor([1.0 if result.verified else 0.0 for result in graded], dtype=torch.float)
        return {
            "rewards": rewards,
            "scores": rewards.clone(),
            "extra_logs": {
                "verified": torch.tensor([float(result.verified) for result in graded]),
                "new_mode": torch.tensor([float(flag) for flag in new]),
                "unscorable": torch.tensor([float(not result.scorable) for result in graded]),
            },
        }
