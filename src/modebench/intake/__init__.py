"""The input side of an evaluation: reading lines, the record schema and preflight, selections.

``lines`` (bounded JSONL reading, the input file), ``preflight`` (phases A–C over records; also
run on the workers by ``modebench.isolation.prepare``), ``ids`` (prompt-id lists) and ``shards``
(which input positions a shard grades). Nothing here imports the engine.
"""
