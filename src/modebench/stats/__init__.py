"""Statistics over receipts: estimators over k, clustered errors, bootstrap, paired comparison.

Layers, bottom up: ``estimators`` (pure per-prompt functions of n, c and mode counts), ``ratio``
(cell estimates and clustered standard errors over categories of identical prompts),
``bootstrap`` (seeded percentile intervals), ``mcnemar``, ``retention``; then ``summary`` (the
``stats`` table) and ``comparison`` (the ``compare`` table), both returning a :class:`StatsTable`.
"""

from __future__ import annotations

from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import compare, iter_prompt_retention, observed_discordant
from modebench.stats.estimators import distinct_at_k, distinct_at_k_exact, pass_at_k, pass_at_k_exact, pcmd
from modebench.stats.mcnemar import McNemar, mcnemar
from modebench.stats.retention import Retention, retention
from modebench.stats.summary import curves
from modebench.stats.table import StatsTable

__all__ = [
    "Bootstrap",
    "McNemar",
    "Retention",
    "StatsTable",
    "compare",
    "curves",
    "distinct_at_k",
    "distinct_at_k_exact",
    "iter_prompt_retention",
    "mcnemar",
    "observed_discordant",
    "pass_at_k",
    "pass_at_k_exact",
    "pcmd",
    "retention",
]
