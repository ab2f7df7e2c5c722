"""The instances of ``python -m analysis.metric_sets``: for one set of metrics, the solver's
distribution of every (run, topic) list, its precision-recall curve error and its prediction
of every pool metric. The inference is :func:`maxent.solver.solve`'s; this module only
chooses what it is given and scores what it returns."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

from maxent.errors import ConvergenceWarning
from maxent.informativeness import at_threshold
from maxent.metrics import parse_measure

__all__ = ["JOIN", "DEFAULT_POOL", "set_name", "set_members", "enumerate_sets", "infer", "actual_values",
           "solve_set"]

JOIN = " + "
"""Separates the metrics of a set in its name (a metric name never contains it)."""

DEFAULT_POOL = ("AP", "nDCG", "nDCG@10", "P@10", "R-prec", "RR", "ERR@20", "RBP(p=0.8)", "R@100", "GAP")


def set_name(metrics) -> str:
    return JOIN.join(str(m) for m in metrics)


def set_members(name: str) -> list[str]:
    return name.split(JOIN)


def enumerate_sets(pool, max_size: int) -> list[tuple[str, ...]]:
    """Every set of 1..max_size metrics of ``pool``, by size, then in pool order."""
    return [c for k in range(1, max_size + 1) for c in itertools.combinations(pool, k)]


def _bind(names, t: int):
    """The metric objects of ``names``, binary ones at relevance threshold ``t``."""
    return [at_threshold(parse_measure(n), t) for n in names]


def infer(metrics, lists, count: str = "retrieved"):
    """The solver's result for one set of metric objects, their values held at once: the one
    place where a set becomes a call of :func:`maxent.solver.solve`."""
    from maxent.solver import solve

    return solve(list(metrics), np.stack([m.value(lists) for m in metrics], axis=1), lists, count=count)


def actual_values(lists, pool, t: int) -> pd.DataFrame:
    """One row per list: run, topic, R (relevant in the qrels at ``t``), relevant retrieved and
    the actual value of every pool metric (binary ones at ``t``)."""
    frame = {"run": lists.runs, "topic": lists.topics, "R": lists.n_rel(t),
             "relret": (lists.grades >= t).sum(axis=1)}
    for name, m in zip(pool, _bind(pool, t)):
        frame[f"actual {name}"] = m.value(lists)
    return pd.DataFrame(frame)


def solve_set(names, lists, pool, t: int, count: str, alignment: str = "recall") -> pd.DataFrame:
    """One row per list for the set ``names``: status, PR-curve RMS and MAE at threshold ``t``,
    ``eligible`` (solved, with a relevant document in the qrels and one retrieved), and
    ``pred X`` for every pool metric X outside the set (NaN inside it, and for graded X when
    every metric of the set is binary: such a distribution says nothing about grades)."""
    from maxent.inference import pr_errors, threshold_probabilities

    metrics = _bind(names, t)
    with warnings.catch_warnings():
        # statuses are recorded per list and counted in the tables, not warned about
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = infer(metrics, lists, count)
    q = threshold_probabilities(res.p, t)
    err = pr_errors(q, lists, t, alignment)
    success = np.asarray(res.success, dtype=bool)
    frame = {"set": set_name(names), "size": len(names), "run": lists.runs, "topic": lists.topics,
             "status": np.asarray(res.status, dtype=object), "n_points": err.n_points,
             "rms": np.where(success, err.rms, np.nan), "mae": np.where(success, err.mae, np.nan),
             "eligible": success & (lists.n_rel(t) > 0) & (err.n_points > 0)}
    inside = set(names)
    for name, x in zip(pool, _bind(pool, t)):
        if name in inside or (x.GRADED and np.ndim(res.p) != 3):
            frame[f"pred {name}"] = np.full(len(lists), np.nan)
        else:
            frame[f"pred {name}"] = np.where(success, x.expectation(res.p if x.GRADED else q, lists), np.nan)
    return pd.DataFrame(frame)
