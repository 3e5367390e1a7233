"""Token health: which rows did training leave behind? No Qt here.

Indicators for every row of any table, from the table and its tokenizer
alone (the method of Land & Bartolo, "Fishing for Magikarp", EMNLP 2024,
in our own code), plus the tokenizer's round trip over its vocabulary.

==============  ==============================================================
``job``         :func:`iter_health`, the job a worker runs (and
                :func:`health_report` to run it to the end)
``report``      :class:`HealthReport`, :class:`Candidate`, :class:`Reference`,
                the categories and flags
``roundtrip``   the tokenizer's round-trip category of every id
``reference``   the known-untrained rows and the first principal component
``indicators``  scores, robust z-scores, the chance-level bar, the ranking
``duplicates``  exact and near duplicate rows, found through sketches
``lesson``      the training corpus's counts, where it is known
==============  ==============================================================
"""

from explorer.core.health.indicators import CHANCE, z_threshold
from explorer.core.health.job import health_report, iter_health
from explorer.core.health.lesson import training_counts
from explorer.core.health.report import (
    CATEGORIES,
    CATEGORY_LABELS,
    FLAG_NAMES,
    Candidate,
    Flag,
    HealthReport,
    Reference,
)
from explorer.core.health.roundtrip import iter_token_categories, token_categories

__all__ = [
    "iter_health",
    "health_report",
    "HealthReport",
    "Candidate",
    "Reference",
    "Flag",
    "FLAG_NAMES",
    "CATEGORIES",
    "CATEGORY_LABELS",
    "CHANCE",
    "z_threshold",
    "training_counts",
    "iter_token_categories",
    "token_categories",
]
