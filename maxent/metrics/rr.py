"""Reciprocal rank (docs/method.md, Metrics and Expectations)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import DeltaSide, symmetric_from_upper, valid_ranks
from maxent.metrics._kernels import cutoff_mask, exclusive_product
from maxent.metrics.base import Metric, Param
from maxent.metrics.precision import REL

__all__ = ["RR"]

_ONE = 1.0 - 1e-15  # q is clipped below 1 inside the gradient's log-space suffix sums


@dataclass(frozen=True, eq=False, repr=False)
class RR(Metric):
    r"""Reciprocal rank: 1 / (rank of the first relevant document), 0 if none (``recip_rank``).

    .. math:: E[RR] = \sum_n \frac{q_n}{n}\prod_{m<n}(1-q_m)
    """
    SOLVER_FORM: ClassVar[str | None] = "cascade"

    cutoff: int | None = None
    rel: int = 1
    NAME: ClassVar[str] = "RR"
    TREC_NAME: ClassVar[str] = "recip_rank"
    ALIASES: ClassVar[tuple] = ("MRR",)
    TREC_ORDER: ClassVar[tuple] = (7,)
    CERTIFIED_ENDS: ClassVar[tuple] = (False, True)
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
        A = exclusive_product(1.0 - q, axis=1)
        return (q / n * A * cutoff_mask(N, self.cutoff)).sum(axis=1)

    def _gradient(self, q, lists):
        # A_j (1/j - T_j), T_j = sum_{n>j} q_n/n prod_{j<m<n}(1-q_m) by a reversed log-sum-exp,
        # so nothing is divided by a vanishing product
        N = q.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        mask = cutoff_mask(N, self.cutoff)
        A = exclusive_product(1.0 - q, axis=1)
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

    def cascade_form(self, lists):
        r"""(s, c) for the compiled solver: :math:`E = \sum_n c_n r_n \prod_{m<n}(1 - r_m)` with
        s = [0, 1] (r_n = q_n) and c_n = [n <= k]/n."""
        N = lists.depth
        return np.array([0.0, 1.0]), cutoff_mask(N, self.cutoff) / np.arange(1, N + 1, dtype=np.float64)

    HAS_SWAP_DELTA: ClassVar[bool] = True
    DELTA_NO_CUTOFF: ClassVar[bool] = True

    def delta_side(self, rel_counts):
        self._require_delta()
        return DeltaSide(rel_counts)

    @staticmethod
    def _first_two(relb):
        """Ranks (1-based, inf when absent) of the first and second relevant documents, and 1/f."""
        B, N = relb.shape
        r = np.arange(1, N + 1, dtype=np.float64)
        srt = np.sort(np.where(relb, r[None, :], np.inf), axis=1)
        f = srt[:, 0] if N else np.full(B, np.inf)
        f2 = srt[:, 1] if N > 1 else np.full(B, np.inf)
        return f, f2, np.where(np.isfinite(f), 1.0 / f, 0.0)

    def swap_delta(self, grades, side, lengths=None):
        r"""RR swap deltas (Donmez, Svore & Burges 2009 eq. 11), f and f_2 the ranks of the first
        two relevant documents: :math:`1/a - 1/f` when a relevant one moves up to a < f,
        :math:`1/\min(b, f_2) - 1/f` when the first moves down to b, else 0."""
        y, single, side = self._delta_args(grades, side)
        B, N = y.shape
        valid = valid_ranks(y, lengths)
        rel = (y >= self.rel) & valid
        r = np.arange(1, N + 1, dtype=np.float64)
        f, f2, inv_f = self._first_two(rel)
        a = r[None, :, None]
        b = r[None, None, :]
        c1 = (~rel)[:, :, None] & rel[:, None, :] & (a < f[:, None, None])
        c2 = rel[:, :, None] & (~rel)[:, None, :] & (a == f[:, None, None])
        newf = np.minimum(b, f2[:, None, None])
        T = (np.where(c1, 1.0 / a - inv_f[:, None, None], 0.0)
             + np.where(c2, 1.0 / newf - inv_f[:, None, None], 0.0))
        out = symmetric_from_upper(T)
        out *= valid[:, :, None] & valid[:, None, :]
        return out[0] if single else out

    def abs_delta_better(self, ys, side, valid):
        """A rank-one outer product (relevant x non-relevant above f) plus the row of f."""
        B, N = ys.shape
        r = np.arange(1, N + 1, dtype=np.float64)
        y = np.where(valid, ys, -1)
        rel = (y >= self.rel) & valid
        non = valid & ~rel
        f, f2, inv_f = self._first_two(rel)
        c1 = np.where(non & (r[None, :] < f[:, None]), 1.0 / r[None, :] - inv_f[:, None], 0.0)
        c2 = np.where(non & (r[None, :] > f[:, None]),
                      inv_f[:, None] - 1.0 / np.minimum(r[None, :], f2[:, None]), 0.0)
        W = rel[:, :, None] * c1[:, None, :]
        first = (r[None, :] == f[:, None])
        W += first[:, :, None] * c2[:, None, :]
        return W

    def delta_blocks(self, y, side, b):
        n = len(y)
        r = np.arange(1, n + 1, dtype=np.float64)
        relb = y >= self.rel
        I = np.flatnonzero(relb)
        J = np.flatnonzero(~relb)
        if len(I) == 0 or len(J) == 0:
            return []
        f = I[0]
        f2 = I[1] if len(I) > 1 else n
        blocks = []
        Jup = J[J < f]
        if len(Jup):      # a relevant document moves above the first one: RR 1/(f+1) -> 1/(c+1)
            blocks.append((I, Jup, 0.0, 0.0, 0.0, 1.0 / r - 1.0 / (f + 1)))
        Jdn = J[J > f]
        if len(Jdn):      # the first relevant one moves down to c: new first min(c, f2)
            blocks.append((I[:1], Jdn, 0.0, 1.0 / (f + 1) - 1.0 / np.minimum(r, f2 + 1), 0.0, 0.0))
        return blocks
