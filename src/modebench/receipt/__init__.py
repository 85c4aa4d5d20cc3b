"""The receipt and its journal: one home for the file format of a graded run.

``schema`` (every schema id and size bound), ``records`` (the typed receipt and journal line),
``identity`` (the checkpoint identity a receipt binds), ``tallies`` (status counts and cells
from per-prompt results), ``writer`` (journal lines and receipt bytes) and ``reader`` (every
check of the receipt contract, ``docs/receipts.md``). Reader and writer share this package;
neither imports the engine that runs an evaluation.
"""
