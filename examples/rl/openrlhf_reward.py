"""modebench's reward for OpenRLHF: pass this file as ``--remote_rm_url``.

OpenRLHF loads the file with importlib and calls its ``reward_func(queries, prompts, labels)``
once per sample (``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor``)::

    python examples/rl/openrlhf_data.py --config level1_countdown --registry bundled --output train.jsonl
    python -m openrlhf.cli.train_ppo_ray ... --prompt_data train.jsonl --input_key prompt \\
        --label_key label --apply_chat_template --remote_rm_url examples/rl/openrlhf_reward.py

Worker processes: ``MODEBENCH_WORKERS=2`` (default 1) in the environment of the process that
loads this file. Unscorable completions count as incorrect (reward 0.0, ``unscorable`` 1.0 in
the logs). See docs/rl.md.
"""

import os

from modebench.rl.openrlhf import OpenRLHFReward

__all__ = ["reward_func"]

reward_func = OpenRLHFReward(workers=int(os.environ.get("MODEBENCH_WORKERS", "1")))
