"""Statistics of IR evaluation over topics: paired tests, bootstrap, intervals, corrections, power.

One module per concept, every public name importable from ``maxent.stats``:

* :mod:`maxent.stats.paired`: paired t-test, Wilcoxon signed-rank, sign test, Sakai's
  bootstrap test and Fisher's randomisation test on per-topic values of two systems;
* :mod:`maxent.stats.bootstrap`: the one topic resampler (indices or weights) and Sakai's
  paired bootstrap test with the discriminative power it gives (Sakai 2006);
* :mod:`maxent.stats.intervals`: percentile bootstrap intervals (mean difference, effect
  sizes, grouped means of a frame);
* :mod:`maxent.stats.corrections`: Holm and Benjamini-Hochberg adjusted p-values;
* :mod:`maxent.stats.power`: minimum detectable effects and the test queries they need;
* :mod:`maxent.stats.proportions`: Wilson intervals and McNemar's test.

Importing the package loads numpy only; scipy and pandas load where they are used.
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
