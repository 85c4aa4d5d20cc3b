"""The receipt and its journal: one home for the file format of a graded run.

``schema`` (every schema id and size bound), ``records`` (the typed ``Receipt`` the reader
returns and the ``JournalLine`` writer and reader share), ``run_identity`` (the checkpoint
identity a receipt binds: one rule, read from the options' field marks), ``tallies`` (status
counts and cells from per-prompt results), ``writer`` (journal lines and receipt bytes),
``reader`` (every check of the receipt contract, ``docs/receipts.md``) and ``text`` (the report
``modebench report`` prints). Reader and writer share this package; neither imports the engine
that runs an evaluation (the layered import contract in ``pyproject.toml`` fails on it).
"""
