"""Without the rl extra, everything but the trainer callback imports; the callback names the fix."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
sys.modules["transformers"] = None  # as if the rl extra were not installed
import modebench.rl as rl
assert rl.ModeBank and rl.TRLReward and rl.compute_score
try:
    rl.ModebenchCallback
except ImportError as exc:
    print(exc)
"""


def test_callback_without_transformers_gives_an_install_hint():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "modebench.rl.ModebenchCallback needs the rl extra (transformers is missing): pip install -e '.[rl]'"
    )
