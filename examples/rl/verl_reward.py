"""modebench's rewards for verl: point ``custom_reward_function.path`` at this file.

Per-response reward managers (``naive``, the default; verl 0.9's asynchronous reward loop
awaits ``compute_score_async`` on its event loop, so a whole burst joins one pool batch)::

    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score_async
    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score

Batch reward manager (one pool round trip per batch; identical pairs graded once)::

    reward_model.reward_manager=batch \\
    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score_batch

Worker processes: ``+custom_reward_function.reward_kwargs.workers=2``. Unscorable completions
count as incorrect (score 0.0, ``unscorable`` 1.0) unless
``+custom_reward_function.reward_kwargs.unscorable=raise``. Rows of other data sources (gsm8k…)
are scored by verl's ``default_compute_score``. The training files come from
``examples/rl/verl_data.py``. See docs/rl.md.
"""

from modebench.rl.verl import compute_score, compute_score_async, compute_score_batch

__all__ = ["compute_score", "compute_score_async", "compute_score_batch"]
