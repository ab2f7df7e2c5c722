"""maxent-ir: trec_eval-exact IR metrics, maximum-entropy inference of relevance from a
metric value, and LambdaRank for any metric.

The public API is exactly the names in ``__all__`` (``analysis/`` imports nothing else).
"""
from __future__ import annotations

from maxent.errors import (
    ConvergenceWarning,
    InputError,
    MaxEntError,
    MaxEntWarning,
    MeasureNameError,
    ParameterError,
    TopicMismatchError,
    TopicWarning,
)
# eager: each function must shadow the subpackage or module of its name (a lazy attribute
# would be replaced by the module as soon as that is imported); none of them imports pandas
from maxent.evaluate import aggregate, evaluate
from maxent.compare import Comparison, compare
from maxent.informativeness import informativeness

# Everything else loads on first use (module-level __getattr__, PEP 562), so that
# ``maxent evaluate`` does not pay for pandas, scipy and the solver at start-up.
_LAZY = {
    "METRICS": "maxent.metrics", "parse_measure": "maxent.metrics", "parse_measures": "maxent.metrics",
    "RankedLists": "maxent.ranked", "rank_runs": "maxent.ranked",
    "discriminative_power": "maxent.stats", "paired_bootstrap_asl": "maxent.stats",
    "pr_errors": "maxent.inference", "real_pr_points": "maxent.inference",
    "expected_pr_curve": "maxent.inference", "real_pr_curve": "maxent.inference",
    "threshold_probabilities": "maxent.inference", "graded_pr_errors": "maxent.inference",
    "graded_pr_points": "maxent.inference", "inferred_graded_pr": "maxent.inference",
    "inferred_graded_pr_curve": "maxent.inference",
    "RankingData": "maxent.letor", "read_letor": "maxent.letor",
    "HAS_SOLUTION": "maxent.solver", "NO_SOLUTION": "maxent.solver", "MaxEntResult": "maxent.solver",
    "Status": "maxent.solver", "solve": "maxent.solver", "value_range": "maxent.solver",
    "Qrels": "maxent.trec", "Run": "maxent.trec", "read_qrels": "maxent.trec", "read_run": "maxent.trec",
    "read_runs": "maxent.trec", "run_from_frame": "maxent.inputs",
    "as_qrels": "maxent.inputs", "as_runs": "maxent.inputs", "as_run": "maxent.inputs",
    "as_measure": "maxent.metrics.names", "qrels_frame": "maxent.inputs", "run_frame": "maxent.inputs",
    "qrels_dict": "maxent.inputs", "run_dict": "maxent.inputs",
    "Informativeness": "maxent.informativeness",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'maxent' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


__all__ = [
    # TREC input and ranking; paths, frames and dicts (maxent.inputs)
    "read_run", "read_runs", "read_qrels", "run_from_frame", "Run", "Qrels",
    "as_qrels", "as_runs", "as_run", "as_measure", "qrels_frame", "run_frame", "qrels_dict", "run_dict",
    "rank_runs", "RankedLists",
    # metrics and evaluation
    "evaluate", "aggregate", "parse_measure", "parse_measures", "METRICS",
    # comparing systems: paired tests, corrections, effect sizes (maxent.compare)
    "compare", "Comparison",
    # maximum-entropy inference and its scoring (maxent.solver, maxent.inference)
    "solve", "value_range", "MaxEntResult", "Status", "HAS_SOLUTION", "NO_SOLUTION",
    "threshold_probabilities", "real_pr_points", "real_pr_curve", "expected_pr_curve", "pr_errors",
    "graded_pr_points", "inferred_graded_pr", "inferred_graded_pr_curve", "graded_pr_errors",
    # how informative a metric is: the inference scored on your runs (maxent.informativeness)
    "informativeness", "Informativeness",
    # discriminative power, learning-to-rank data (trainer: maxent.ltr)
    "paired_bootstrap_asl", "discriminative_power", "read_letor", "RankingData",
    # errors and warnings
    "MaxEntError", "InputError", "TopicMismatchError", "MeasureNameError", "ParameterError",
    "MaxEntWarning", "TopicWarning", "ConvergenceWarning",
]
