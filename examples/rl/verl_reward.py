"""modebench's rewards for verl: point ``custom_reward_function.path`` at this file.

Per-response reward manager (``reward_model.reward_manager=naive``, the default)::

    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score

Batch reward manager (one pool round trip per batch; identical pairs graded once)::

    reward_model.reward_manager=batch \\
    custom_reward_function.path=examples/rl/verl_reward.py custom_reward_function.name=compute_score_batch

Worker processes: ``+custom_reward_function.reward_kwargs.workers=2``. The training files come
from ``examples/rl/verl_data.py``. See docs/rl.md.
"""

from modebench.rl import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
