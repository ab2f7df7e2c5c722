"""maxent-ir: trec_eval-exact IR metrics, maximum-entropy inference of relevance from a
metric value, and LambdaRank for any metric.

The public API is exactly the names in ``__all__`` (``analysis/`` imports nothing else).
"""
from __future__ import annotations

import warnings as _warnings

# ``python -m maxent.evaluate`` runs a module that this package has already imported (for
# the ``evaluate`` function below); runpy then warns. The warning concerns only that module.
_warnings.filterwarnings(
    "ignore", message=r"'maxent\.evaluate' found in sys\.modules", category=RuntimeWarning
)
_warnings.filterwarnings(  # the same for ``python -m maxent.compare``
    "ignore", message=r"'maxent\.compare' found in sys\.modules", category=RuntimeWarning
)

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
from maxent.evaluate import aggregate, evaluate
from maxent.compare import Comparison, compare
from maxent.metrics import METRICS, parse_measure, parse_measures
from maxent.ranked import RankedLists, rank_runs
from maxent.bootstrap import discriminative_power, paired_bootstrap_asl
from maxent.inference import expected_pr_curve, pr_errors, real_pr_curve, real_pr_points, threshold_probabilities
from maxent.inference import graded_pr_errors, graded_pr_points, inferred_graded_pr
from maxent.letor import RankingData, read_letor
from maxent.solver import HAS_SOLUTION, NO_SOLUTION, MaxEntResult, Status, solve, value_range
from maxent.trec import Qrels, Run, read_qrels, read_run, read_runs, run_from_frame

__all__ = [
    # TREC input and ranking
    "read_run", "read_runs", "read_qrels", "run_from_frame", "Run", "Qrels",
    "rank_runs", "RankedLists",
    # metrics and evaluation
    "evaluate", "aggregate", "parse_measure", "parse_measures", "METRICS",
    # comparing systems: paired tests, corrections, effect sizes (maxent.compare)
    "compare", "Comparison",
    # maximum-entropy inference and its scoring (maxent.solver, maxent.inference)
    "solve", "value_range", "MaxEntResult", "Status", "HAS_SOLUTION", "NO_SOLUTION",
    "threshold_probabilities", "real_pr_points", "real_pr_curve", "expected_pr_curve", "pr_errors",
    "graded_pr_points", "inferred_graded_pr", "graded_pr_errors",
    # discriminative power, learning-to-rank data (trainer: maxent.ltr)
    "paired_bootstrap_asl", "discriminative_power", "read_letor", "RankingData",
    # errors and warnings
    "MaxEntError", "InputError", "TopicMismatchError", "MeasureNameError", "ParameterError",
    "MaxEntWarning", "TopicWarning", "ConvergenceWarning",
]
