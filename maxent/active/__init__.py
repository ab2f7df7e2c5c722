"""Active evaluation of rankers on a labelling budget (Sawade et al. (2013)): metric moments
(Theorem 3), sampling (eqs. 16-17, Algorithm 1, eq. 6), relevance models, pools and experiments.
"""
from maxent.active.evaluation import (absolute_errors, crossfit_probabilities, effort_saved, effort_saved_interval,
                                      fitted_probabilities, passive_budget, sampling_table, selection_errors,
                                      update_errors)
from maxent.active.moments import check_metric, cross_moment, delta_moments, level_values, metric_moments
from maxent.active.pool import TREC_FEATURES, Pool, compact, drop_fraction, letor_pool, trec_pool
from maxent.active.relevance import MODELS, CumulativeForest, OrderedLogit, make_model, uniform_probs
from maxent.active.sampling import METHODS, SampleCounts, estimate, instrumental, query_costs, simulate

__all__ = [
    "check_metric", "metric_moments", "cross_moment", "delta_moments", "level_values",
    "OrderedLogit", "CumulativeForest", "uniform_probs", "make_model", "MODELS",
    "query_costs", "instrumental", "simulate", "estimate", "SampleCounts", "METHODS",
    "Pool", "trec_pool", "letor_pool", "compact", "drop_fraction", "TREC_FEATURES",
    "absolute_errors", "crossfit_probabilities", "fitted_probabilities", "selection_errors", "update_errors",
    "sampling_table", "passive_budget", "effort_saved", "effort_saved_interval",
]
