r"""Effective training pairs (Donmez et al. 2009 section 7.1, Fig. 5): pairs of one query whose
LambdaRank gradient is non-zero, i.e. of different grades with :math:`|\Delta M_{ab}| > 0`.
"""
from __future__ import annotations

import numpy as np

from maxent.ltr.lambdas import rank_by_score, swap_deltas
from maxent.ltr.train import QuerySet

__all__ = ["effective_pairs", "candidate_pairs"]


def _ranked_grades(model, theta, qs: QuerySet) -> np.ndarray:
    S = qs.padded_scores(model.score(np.asarray(theta, dtype=np.float64), qs.X))
    order = rank_by_score(S, qs.lengths)
    return np.take_along_axis(qs.yp, order, axis=1)


def effective_pairs(model, theta, qs: QuerySet, metric, *, chunk: int = 64, tol: float = 1e-12) -> np.ndarray:
    r"""Per query (Q,), the pairs a < b of judged documents with :math:`y_a \ne y_b` and
    :math:`|\Delta M_{ab}| > \mathrm{tol}` in the ranking by the model's scores."""
    Y = _ranked_grades(model, theta, qs)
    ctx = qs.context(metric)
    out = np.empty(qs.n_queries, dtype=np.int64)
    for a in range(0, qs.n_queries, chunk):                # chunks of queries bound the (b, N, N) memory
        rows = np.arange(a, min(qs.n_queries, a + chunk))
        y = Y[rows]
        D = swap_deltas(metric, y, context=ctx, rows=rows, lengths=qs.lengths[rows])
        judged = y >= 0
        diff = (y[:, :, None] != y[:, None, :]) & judged[:, :, None] & judged[:, None, :]
        upper = np.triu(np.ones(y.shape[1], dtype=bool), 1)
        out[rows] = ((np.abs(D) > tol) & diff & upper).sum(axis=(1, 2))
    return out


def candidate_pairs(qs: QuerySet) -> np.ndarray:
    """Per query (Q,), the pairs of judged documents with different grades (the upper bound)."""
    counts = qs.rel_counts
    n = counts.sum(axis=1)
    return (n * n - (counts * counts).sum(axis=1)) // 2
