"""Write a frozen split as verl training Parquet (``data.train_files``): docs/rl.md, "verl".

    python examples/rl/verl_data.py --config level1_countdown --registry bundled --output train.parquet

Needs the ``data`` extra (pyarrow). Rows follow verl's own preprocessing scripts
(``examples/data_preprocess/gsm8k.py`` in verl): ``data_source``, ``prompt``, ``ability``,
``reward_model.ground_truth`` (the answer's JSON text) and ``extra_info`` (level, domain, prompt id).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from modebench.rl import verl_rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="a frozen configuration, e.g. level1_countdown")
    parser.add_argument("--registry", default=None, help="'bundled' for the release shipped with modebench")
    parser.add_argument("--split", default="eval")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    if args.output.exists():
        parser.error(f"{args.output} exists; refusing to overwrite it")
    rows = verl_rows(args.config, args.split, registry=args.registry)
    pq.write_table(pa.Table.from_pylist(rows), args.output)
    print(f"{len(rows)} rows -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
