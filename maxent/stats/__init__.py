"""Statistics of IR evaluation over topics: paired tests (:mod:`~maxent.stats.paired`), the
bootstrap (:mod:`~maxent.stats.bootstrap`), intervals, corrections, power and proportions;
every public name importable from ``maxent.stats``. Importing it loads numpy only.
"""
from __future__ import annotations

from maxent.stats.bootstrap import (discriminative_power, paired_bootstrap_asl, resample_counts, resample_indices,
                                    resample_topics, topic_bootstrap)
from maxent.stats.corrections import CORRECTIONS, adjust, benjamini_hochberg, holm
from maxent.stats.intervals import bootstrap_ci, effect_sizes, percentile_interval, topic_bootstrap_mean
from maxent.stats.paired import (PairedTests, paired_bootstrap, paired_t, paired_tests, randomisation_test,
                                 sign_test, wilcoxon)
from maxent.stats.power import family_mde, minimum_detectable_effect, queries_needed
from maxent.stats.proportions import mcnemar_exact, wilson_interval

__all__ = ["PairedTests", "paired_t", "wilcoxon", "sign_test", "paired_bootstrap", "paired_tests",
           "randomisation_test",
           "resample_topics", "resample_indices", "resample_counts", "topic_bootstrap", "paired_bootstrap_asl",
           "discriminative_power",
           "percentile_interval", "bootstrap_ci", "effect_sizes", "topic_bootstrap_mean",
           "CORRECTIONS", "adjust", "holm", "benjamini_hochberg",
           "minimum_detectable_effect", "family_mde", "queries_needed",
           "wilson_interval", "mcnemar_exact"]
