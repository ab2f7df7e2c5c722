"""Reciprocal rank (METHOD sections 2-3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import cutoff_mask
from maxent.metrics.base import Metric, Param
from maxent.metrics.precision import REL

__all__ = ["RR"]

_ONE = 1.0 - 1e-15  # q is clipped below 1 inside the gradient's log-space suffix sums


@dataclass(frozen=True, eq=False, repr=False)
class RR(Metric):
    r"""Reciprocal rank: 1 / (rank of the first relevant document), 0 if none (``recip_rank``).

    .. math:: E[RR] = \sum_n \frac{q_n}{n}\prod_{m<n}(1-q_m)

    The gradient :math:`\frac{A_j}{j} - A_j T_j` with :math:`A_j=\prod_{m<j}(1-q_m)` and
    :math:`T_j=\sum_{n>j}\frac{q_n}{n}\prod_{j<m<n}(1-q_m)` is evaluated with a reversed
    cumulative log-sum-exp, so no division by a vanishing product occurs.
    """

    cutoff: int | None = None
    rel: int = 1
    NAME: ClassVar[str] = "RR"
    TREC_NAME: ClassVar[str] = "recip_rank"
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k (None: whole list)"), "rel": REL}

    def value(self, lists):
        rel = lists.grades >= self.rel
        if self.cutoff is not None:
            rel = rel[:, : self.cutoff]
        first = np.argmax(rel, axis=1)
        return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)

    def _expectation(self, q, lists):
        N = q.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        A = np.cumprod(np.concatenate((np.ones((len(q), 1)), 1.0 - q[:, :-1]), axis=1), axis=1)
        return (q / n * A * cutoff_mask(N, self.cutoff)).sum(axis=1)

    def _gradient(self, q, lists):
        N = q.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        mask = cutoff_mask(N, self.cutoff)
        A = np.cumprod(np.concatenate((np.ones((len(q), 1)), 1.0 - q[:, :-1]), axis=1), axis=1)
        with np.errstate(divide="ignore"):
            logq = np.log(q * mask / n)                       # log(q_n / n), -inf where 0
            log1m = np.log1p(-np.minimum(q, _ONE))            # log(1 - q_m)
        logP = np.cumsum(log1m, axis=1)                       # log prod_{m<=n}(1-q_m)
        c = logq + logP - log1m                               # log(q_n/n prod_{m<n}(1-q_m))
        # S_j = log sum_{n>j} exp(c_n); T_j = exp(S_j - logP_j)
        rev = np.logaddexp.accumulate(c[:, ::-1], axis=1)[:, ::-1]
        S = np.concatenate((rev[:, 1:], np.full((len(q), 1), -np.inf)), axis=1)
        with np.errstate(invalid="ignore"):
            T = np.exp(S - logP)
        T = np.where(np.isfinite(S), T, 0.0)
        return A * (mask / n - T)
