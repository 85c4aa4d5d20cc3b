"""Unscorable attempts: the opt-in policy that scores some of them, and the explanation of a run
they voided (which prompts, lines and draws; which status and why; what to do).

ModeBench 0.4.0 fails the whole run when any response cannot be scored (``docs/evaluation.md``,
"Statuses"); that stays the default. ``policy`` holds the explicit alternative, ``explain`` reads
a receipt and its journal back into a short, plain account of the unscorable attempts.

Import the submodules themselves (``modebench.failures.policy``, ``modebench.failures.explain``):
the evaluator needs the policy without the receipt reader the explanation uses.
"""
