"""Active evaluation of rankers on a labelling budget (Sawade et al. (2013)).

- :mod:`maxent.active.moments`: E[L], E[L^2] and E[L_1 L_2] of DCG@k / ERR@k under
  independent per-document grade distributions (Theorem 3's dynamic programme).
- :mod:`maxent.active.sampling`: costs, eqs. 16-17, Algorithm 1, the estimator of eq. 6.
- :mod:`maxent.active.relevance`: ordered logit, cumulative random forests, uniform model.
"""
from maxent.active.moments import check_metric, cross_moment, delta_moments, level_values, metric_moments
from maxent.active.relevance import MODELS, CumulativeForest, OrderedLogit, make_model, uniform_probs
from maxent.active.sampling import METHODS, SampleCounts, estimate, instrumental, query_costs, simulate

__all__ = [
    "check_metric", "metric_moments", "cross_moment", "delta_moments", "level_values",
    "OrderedLogit", "CumulativeForest", "uniform_probs", "make_model", "MODELS",
    "query_costs", "instrumental", "simulate", "estimate", "SampleCounts", "METHODS",
]
from maxent.active.pool import TREC_FEATURES, Pool, compact, drop_fraction, letor_pool, trec_pool
from maxent.active.evaluation import (absolute_errors, crossfit_probabilities, fitted_probabilities, effort_saved, effort_saved_interval, passive_budget, sampling_table, selection_errors,
                                      update_errors)

__all__ += ["Pool", "trec_pool", "letor_pool", "compact", "drop_fraction", "TREC_FEATURES",
            "absolute_errors", "crossfit_probabilities", "fitted_probabilities", "selection_errors", "update_errors", "sampling_table", "passive_budget", "effort_saved", "effort_saved_interval"]
