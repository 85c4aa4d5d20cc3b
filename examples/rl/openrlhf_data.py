"""Write a frozen split as OpenRLHF prompt data (``--prompt_data``, JSON lines): docs/rl.md, "OpenRLHF".

    python examples/rl/openrlhf_data.py --config level1_countdown --registry bundled --output train.jsonl

Each line has ``prompt`` (the registered chat messages: ``--input_key prompt
--apply_chat_template``) and ``label`` (JSON text with level, domain, answer and prompt id:
``--label_key label``), what ``examples/rl/openrlhf_reward.py`` reads.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from modebench.rl.openrlhf import openrlhf_rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="a frozen configuration, e.g. level1_countdown")
    parser.add_argument("--registry", default=None, help="'bundled' for the release shipped with modebench")
    parser.add_argument("--split", default="eval")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    rows = openrlhf_rows(args.config, args.split, registry=args.registry)
    with open(args.output, "x", encoding="utf-8") as handle:  # never overwrite a training file
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} rows -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
