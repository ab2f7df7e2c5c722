"""maxent-ir: trec_eval-exact IR metrics, maximum-entropy inference of relevance from a
metric value, and LambdaRank for any metric.

The public API is exactly the names in ``__all__`` (``analysis/`` imports nothing else).
"""
from __future__ import annotations

from maxent.errors import (ConvergenceWarning, InputError, MaxEntError, MaxEntWarning, MeasureNameError,
                           ParameterError, TopicMismatchError, TopicWarning)
# eager: each function must shadow the subpackage or module of its name (a lazy attribute
# would be replaced by the module as soon as that is imported); none of them imports pandas
from maxent.evaluate import aggregate, evaluate
from maxent.compare import Comparison, compare
from maxent.informativeness import informativeness

# Everything else loads on first use (module-level __getattr__, PEP 562), so that
# ``maxent evaluate`` does not pay for pandas, scipy and the solver at start-up.
_LAZY = {name: module for module, names in (
    ("maxent.metrics", "METRICS parse_measure parse_measures"),
    ("maxent.ranked", "RankedLists rank_runs"),
    ("maxent.stats", "discriminative_power paired_bootstrap_asl"),
    ("maxent.inference", "pr_errors real_pr_points expected_pr_curve real_pr_curve threshold_probabilities "
                         "graded_pr_errors graded_pr_points inferred_graded_pr inferred_graded_pr_curve"),
    ("maxent.letor", "RankingData read_letor"),
    ("maxent.solver", "HAS_SOLUTION NO_SOLUTION MaxEntResult Status solve value_range"),
    ("maxent.trec", "Qrels Run read_qrels read_run read_runs"),
    ("maxent.inputs", "run_from_frame as_qrels as_runs as_run qrels_frame run_frame qrels_dict run_dict"),
    ("maxent.metrics.names", "as_measure"),
    ("maxent.informativeness", "Informativeness"),
) for name in names.split()}


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
