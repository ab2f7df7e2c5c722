"""Labelling costs, the instrumental distributions of eqs. 16-17, Algorithm 1 (sampling queries
with replacement under a budget) and the importance-weighted estimator (eq. 6) of Sawade et al.
(2013). A pool holds m queries (p(x) = 1/m); costs are in units of the pool's mean query cost.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maxent.errors import ParameterError

__all__ = ["query_costs", "instrumental", "SampleCounts", "simulate", "estimate", "METHODS"]

METHODS = ("active", "active_uniD", "active_uniC", "passive")
"""active: eq. 16/17 with the relevance model and costs; active_uniD: uniform label model
p(y = z) = 1/|Y|; active_uniC: unit costs in the distribution (still paid); passive: q = p."""


def query_costs(doc_cost: np.ndarray, *rankings: np.ndarray, normalize: bool = True) -> np.ndarray:
    r"""Per-query labelling cost :math:`\lambda(x) = \sum_{u \in r_1(x) \cup r_2(x) \cup \dots} c_u`.

    Parameters
    ----------
    doc_cost : (Q, U) cost of labelling each candidate document
    rankings : one or more (Q, k) index arrays into the candidates (-1: none); a document
        ranked by several rankers is paid once
    normalize : scale so the mean over the pool is 1

    Raises
    ------
    ParameterError
        when a query has no document to label in any ranking.
    """
    doc_cost = np.asarray(doc_cost, dtype=np.float64)
    Q, U = doc_cost.shape
    used = np.zeros((Q, U + 1), dtype=bool)
    rows = np.arange(Q)[:, None]
    for r in rankings:
        r = np.asarray(r)
        used[np.broadcast_to(rows, r.shape), np.where(r >= 0, r, U)] = True
    cost = (doc_cost * used[:, :U]).sum(axis=1)
    if (cost <= 0).any():
        bad = np.flatnonzero(cost <= 0)
        raise ParameterError(f"{len(bad)} queries (first: #{bad[0]}) have no retrieved document to "
                             "label: every query of the pool needs a positive cost")
    return cost / cost.mean() if normalize else cost


def instrumental(second_moment: np.ndarray, mean: np.ndarray, cost: np.ndarray, *,
                 target: float | None = None, mix: float = 0.0) -> np.ndarray:
    r"""Eq. 16 / 17: :math:`q^*(x) \propto \lambda(x)^{-1/2}\sqrt{E[(L - R_\theta)^2 | x;\theta]}`
    (uniform when every query has zero expected loss).

    Parameters
    ----------
    second_moment, mean : (m,) E[L^2 | x] and E[L | x] under the model (for a comparison:
        of delta = L_1 - L_2)
    cost : (m,) lambda(x); pass ones for active_uniC
    target : R_theta (resp. Delta_theta); default the pool mean of ``mean`` (Corollary 1)
    mix : share of the uniform distribution mixed in, (1 - mix) q* + mix / m (0 = the paper;
        a positive share keeps q > 0 where the model is certain, which consistency needs)
    """
    mean = np.asarray(mean, dtype=np.float64)
    R = float(mean.mean()) if target is None else float(target)
    v = np.clip(np.asarray(second_moment, dtype=np.float64) - 2 * R * mean + R * R, 0.0, None)
    q = np.sqrt(v / np.asarray(cost, dtype=np.float64))
    m = len(q)
    q = np.full(m, 1.0 / m) if q.sum() <= 0 else q / q.sum()
    if not 0.0 <= mix <= 1.0:
        raise ParameterError(f"mix must be in [0, 1], got {mix}")
    return (1.0 - mix) * q + mix / m


@dataclass(frozen=True)
class SampleCounts:
    """How often each pool query was drawn, per budget and repetition.

    Attributes
    ----------
    counts : (nb, R, m) float draws of each query (rows where the whole pool was labelled
        within the budget hold q itself: the limit of infinitely many free re-draws)
    labelled : (nb, R) distinct queries labelled
    spent : (nb, R) labelling cost actually paid
    draws : (nb, R) queries drawn (with repeats)
    """

    counts: np.ndarray
    labelled: np.ndarray
    spent: np.ndarray
    draws: np.ndarray


def _first_occurrence(draws: np.ndarray, m: int) -> np.ndarray:
    """(R, T) bool: the draw is the first of its query in its row."""
    R, T = draws.shape
    key = (np.arange(R)[:, None] * m + draws).ravel()
    order = np.argsort(key, kind="stable")
    first = np.ones(key.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    out = np.empty(key.size, dtype=bool)
    out[order] = first
    return out.reshape(R, T)


def simulate(q: np.ndarray, cost: np.ndarray, budgets, repetitions: int,
             rng: np.random.Generator, *, max_draws: int | None = None, block: int = 256) -> SampleCounts:
    """Algorithm 1 of Sawade et al. (2013), for every budget and repetition at once.

    Queries are drawn i.i.d. from ``q``; a query drawn again reuses its labels at no cost; the
    first new query whose cost exceeds the rest of the budget ends the sample. One sequence of
    draws per repetition serves every budget. When the budget covers every query q can draw
    the counts are their limit, q; a sample is otherwise cut after ``max_draws`` draws
    (default 64 times what the largest budget buys at the mean cost under q).

    Raises
    ------
    ParameterError
        for a budget below the cheapest query, a pool of one query, or q not a distribution.
    """
    q = np.asarray(q, dtype=np.float64)
    cost = np.asarray(cost, dtype=np.float64)
    budgets = np.asarray(sorted(budgets), dtype=np.float64)
    m = len(q)
    if m < 2:
        raise ParameterError(f"the pool has {m} query; active evaluation samples from a pool of at least 2")
    if cost.shape != q.shape or (cost <= 0).any():
        raise ParameterError("cost must be positive, one per pool query")
    if (q < 0).any() or not np.isclose(q.sum(), 1.0):
        raise ParameterError("q must be a probability distribution over the pool")
    if budgets.size == 0 or budgets[0] < cost.min():
        raise ParameterError(f"budget {budgets[0] if budgets.size else None} is below the cheapest "
                             f"query's cost {cost.min():.4g} (costs are scaled to mean 1)")
    if repetitions < 1:
        raise ParameterError(f"repetitions must be >= 1, got {repetitions}")
    R = int(repetitions)
    support = q > 0
    never_stops = cost[support].sum() <= budgets          # (nb,) the whole support is affordable
    T0 = int(max(16, 4 * budgets[-1] / max(float(cost @ q), 1e-12)))
    T_max = max(T0, 64 * T0 if max_draws is None else int(max_draws))
    cq = np.cumsum(q)
    cq[-1] = 1.0
    parts = [_simulate_block(cq, support, cost, budgets, never_stops, min(block, R - s), T0, T_max, rng)
             for s in range(0, R, block)]
    return SampleCounts(*(np.concatenate([getattr(p, f) for p in parts], axis=1)
                          for f in ("counts", "labelled", "spent", "draws")))


def _simulate_block(cq, support, cost, budgets, never_stops, R, T, T_max, rng) -> SampleCounts:
    m, nb = len(cq), len(budgets)
    q = np.diff(np.concatenate(([0.0], cq)))
    while True:
        draws = np.minimum(np.searchsorted(cq, rng.random((R, T)), side="right"), m - 1)
        draws = np.where(support[draws], draws, np.argmax(support))  # guard against rounding at q = 0
        first = _first_occurrence(draws, m)
        paid = np.where(first, cost[draws], 0.0)
        cum = np.cumsum(paid, axis=1)
        n_new = np.cumsum(first, axis=1)
        over = cum[None, :, :] > budgets[:, None, None]               # (nb, R, T)
        stopped = over.any(axis=2)
        if (stopped | never_stops[:, None]).all() or T >= T_max:
            break
        T = min(2 * T, T_max)
    stop = np.where(stopped, over.argmax(axis=2), T)                  # draws kept: [0, stop)
    everything = np.broadcast_to(never_stops[:, None], stopped.shape)  # limit of endless free re-draws
    counts = np.zeros((nb, R, m))
    t = np.arange(T)
    rows = np.broadcast_to(np.arange(R)[:, None], draws.shape)
    for b in range(nb):
        keep = t[None, :] < stop[b][:, None]
        np.add.at(counts[b], (rows[keep], draws[keep]), 1.0)
    counts[everything] = q
    idx = np.clip(stop - 1, 0, T - 1)
    rr = np.arange(R)[None, :]
    labelled = np.where(stop > 0, n_new[rr, idx], 0)
    spent = np.where(stop > 0, cum[rr, idx], 0.0)
    labelled = np.where(everything, support.sum(), labelled)
    spent = np.where(everything, cost[support].sum(), spent)
    return SampleCounts(counts, labelled, spent, np.where(everything, np.inf, stop))


def estimate(counts: np.ndarray, q: np.ndarray, values: np.ndarray) -> np.ndarray:
    r"""Eq. 6: :math:`\hat R = \sum_j w_j L_j / \sum_j w_j`, :math:`w_j = p(x_j)/q(x_j) = 1/(m q(x_j))`.

    Parameters
    ----------
    counts : (..., m) draws of each pool query
    q : (m,) instrumental distribution
    values : (m,) or (m, S) per-query metric (or difference of two rankers' metrics)

    Returns
    -------
    (...) or (..., S) estimates; NaN where nothing was drawn.
    """
    q = np.asarray(q, dtype=np.float64)
    w = np.where(q > 0, 1.0 / (len(q) * np.where(q > 0, q, 1.0)), 0.0)
    cw = counts * w
    den = cw.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (cw @ values) / (den if np.ndim(values) == 1 else den[..., None])
