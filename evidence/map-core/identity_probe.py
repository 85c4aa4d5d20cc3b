"""Print the checkpoint identity each option combination binds, under the checkout on PYTHONPATH."""
import json, sys, tempfile, os
from modebench.api_types import EvaluationOptions
from modebench.engine.spec import Execution, RunSpec
try:
    from modebench.engine.identity import identity as old_identity
except ImportError:
    old_identity = None
from modebench.identity import canonical

RUN = {"model": {"id": "m", "revision": "1"}, "generation": {"draws_per_prompt": 2}, "prompt_condition": "registered_hints_v1"}
SOFTWARE = {"name": "probe", "git": "x"}
combos = {
    "defaults": {},
    "run": {"run": RUN},
    "min_defined_prompts=5": {"min_defined_prompts": 5},
    "ids": {"ids": "ids.txt"},
    "unscorable=count-as-incorrect": {"unscorable": "count-as-incorrect"},
    "unscorable=fail-run (explicit default)": {"unscorable": "fail-run"},
    "config+limit": {"config": "level1_countdown", "limit": 3},
    "config+split+allow_partial": {"config": "level1_countdown", "split": "dev", "allow_partial": True},
    "config+limit+ids+unscorable+run": {"config": "level1_countdown", "limit": 2, "ids": "ids.txt", "unscorable": "count-as-incorrect", "run": RUN},
    "non-identity options (keep_checkpoint, cache_dir, offline, registry)": {"config": "level1_countdown", "keep_checkpoint": True, "cache_dir": "/tmp/x", "offline": True, "registry": "bundled"},
}
out = {}
for name, kw in combos.items():
    with tempfile.TemporaryDirectory() as d:
        spec = RunSpec.build("in.jsonl", os.path.join(d, "out.json"), EvaluationOptions(**kw), Execution())
        for shard in (None,):
            ident = old_identity(spec, "0" * 64, None, SOFTWARE) if old_identity else spec.identity("0" * 64, None, SOFTWARE)
        out[name] = canonical(ident)
print(json.dumps(out, indent=1, sort_keys=True))
