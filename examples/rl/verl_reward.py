"""modebench's rewards for verl: point ``reward.custom_reward_function.path`` at this file
(verl 0.9; ``custom_reward_function.path`` in earlier releases, the same for the keys below).

Per-response reward managers (``naive``, the default; verl 0.9's asynchronous reward loop
awaits ``compute_score_async`` on its event loop, so a whole burst joins one pool batch)::

    reward.custom_reward_function.path=examples/rl/verl_reward.py reward.custom_reward_function.name=compute_score_async
    reward.custom_reward_function.path=examples/rl/verl_reward.py reward.custom_reward_function.name=compute_score

Batch reward manager of verl up to 0.8 (one pool round trip per batch; identical pairs graded once)::

    reward_model.reward_manager=batch \\
    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score_batch

Worker processes: ``+reward.custom_reward_function.reward_kwargs.workers=2``. Unscorable completions
count as incorrect (score 0.0, ``unscorable`` 1.0) unless
``+reward.custom_reward_function.reward_kwargs.unscorable=raise``. Rows of other data sources (gsm8k…)
are scored by verl's ``default_compute_score``. The training files come from
``examples/rl/verl_data.py``. See docs/rl.md.
"""

from modebench.rl.verl import compute_score, compute_score_async, compute_score_batch

__all__ = ["compute_score", "compute_score_async", "compute_score_batch"]
