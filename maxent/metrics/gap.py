"""Graded average precision (Robertson, Kanoulas & Yilmaz 2010 = paper [004]; METHOD 2-3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import safe_divide
from maxent.metrics.ap import expected_ap, expected_ap_gradient
from maxent.errors import ParameterError
from maxent.metrics.base import Metric, Param

__all__ = ["GAP", "gap_pivot"]


@dataclass(frozen=True, eq=False, repr=False)
class GAP(Metric):
    r"""Graded average precision with threshold probabilities g = (g_1..g_c), sum g_j = 1.

    g_j is the probability that a user regards grades >= j as relevant. Computed from the
    identity (METHOD section 2)

    .. math:: GAP(g) = \frac{\sum_j g_j R_{\ge j} AP_{\ge j}}{\sum_j g_j R_{\ge j}}

    (a weighted mean of thresholded APs), which equals paper [004]'s pivot definition
    (:func:`gap_pivot`). Default g: uniform over the grades above 0 of the qrels. A g shorter
    than the number of grades is padded with zeros. 0 when no judged document has a grade
    >= 1. Expectation: the same weighted mean of E[AP_{>=j}] with q_n = Q_n(j).
    """

    g: tuple | None = None
    cutoff: int | None = None
    NAME: ClassVar[str] = "GAP"
    TREC_NAME: ClassVar[str | None] = None
    PARAMS: ClassVar = {
        "g": Param(tuple, None, "threshold probabilities g_1..g_c (sum 1); default uniform"),
        "cutoff": Param(int, None, "rank cutoff k"),
    }
    GRADED: ClassVar[bool] = True

    def __post_init__(self):
        if self.g is not None:
            g = self.g if isinstance(self.g, (tuple, list)) else (self.g,)
            object.__setattr__(self, "g", tuple(float(x) for x in g))
        super().__post_init__()

    def validate(self):
        if self.g is not None:
            g = np.asarray(self.g)
            self._check(len(g) >= 1 and (g >= 0).all() and abs(g.sum() - 1.0) < 1e-9,
                        f"g must be non-negative and sum to 1, got {self.g}")
        super().validate()

    def weights(self, levels: int) -> np.ndarray:
        """(L,) g_j for thresholds j = 0..L-1 (g_0 = 0).

        Raises ParameterError when g puts weight on a grade above the highest the qrels
        know (L - 1): that weight would multiply R_{>=j} = 0 and drop out silently.
        """
        c = max(levels - 1, 1)
        if self.g is None:
            g = np.full(c, 1.0 / c)
        else:
            beyond = np.flatnonzero(np.asarray(self.g[c:]) > 0)
            if len(beyond):
                raise ParameterError(
                    f"{self}: weight g_{c + 1 + beyond[0]} on grade {c + 1 + beyond[0]}, but the "
                    f"qrels' grades go up to {levels - 1}; give g for grades 1..{c} only")
            g = np.zeros(max(c, len(self.g)))
            g[: len(self.g)] = self.g
        return np.concatenate(([0.0], g))[: max(levels, 2)]

    def _thresholds(self, lists):
        w = self.weights(lists.levels)
        js = np.flatnonzero(w > 0)
        js = js[js < lists.levels]
        Rj = np.stack([lists.n_rel(j) for j in js], axis=1) if len(js) else np.zeros((len(lists), 0))
        coef = w[js][None, :] * Rj                     # g_j R_{>=j}, (B, J)
        Z = coef.sum(axis=1)
        return js, Rj, coef, Z

    def value(self, lists):
        js, Rj, coef, Z = self._thresholds(lists)
        n = np.arange(1, lists.depth + 1)
        total = np.zeros(len(lists))
        for col, j in enumerate(js):  # loop over grade thresholds (c <= a handful)
            rel = lists.grades >= j
            if self.cutoff is not None:
                rel = rel[:, : self.cutoff]
            cum = np.cumsum(rel, axis=1)
            prec_sum = np.where(rel, cum / n[: rel.shape[1]], 0.0).sum(axis=1)
            total += safe_divide(coef[:, col] * prec_sum, Rj[:, col])
        return safe_divide(total, Z)

    @staticmethod
    def _tail_sums(p, js) -> dict:
        """Q_n(j) = sum_{z>=j} p_n(z) for the thresholds j in use: {j: (B, N)}."""
        return {int(j): p[:, :, j:].sum(axis=2) for j in js}

    def _expectation(self, p, lists):
        js, Rj, coef, Z = self._thresholds(lists)
        Q = self._tail_sums(p, js)  # Q_n(j) = sum_{z>=j} p_n(z)
        total = np.zeros(len(p))
        for col, j in enumerate(js):
            total += coef[:, col] * expected_ap(Q[j], Rj[:, col], self.cutoff)
        return safe_divide(total, Z)

    def _gradient(self, p, lists):
        js, Rj, coef, Z = self._thresholds(lists)
        Q = self._tail_sums(p, js)
        grad = np.zeros_like(p)
        for col, j in enumerate(js):
            dq = safe_divide(coef[:, col], Z)[:, None] * expected_ap_gradient(Q[j], Rj[:, col], self.cutoff)
            grad[:, :, j:] += dq[:, :, None]  # dQ_n(j)/dp_n(z) = [z >= j]
        return grad


def gap_pivot(grades: np.ndarray, rel_counts: np.ndarray, g) -> np.ndarray:
    r"""GAP from paper [004]'s pivot definition (an independent O(N^2) reference).

    For each rank n with grade i_n > 0:
    :math:`E[PC_n] = \frac1n\sum_{m\le n}\delta(m,n)`, :math:`\delta(m,n)=\sum_{j\le\min(i_m,i_n)} g_j`;
    GAP = :math:`\sum_n E[PC_n] / \sum_z R_z \sum_{j\le z} g_j`.

    grades: (B, N) (-1 = unjudged), rel_counts: (B, L), g: (c,) -> (B,).
    """
    grades = np.maximum(np.asarray(grades), 0)
    L = rel_counts.shape[1]
    G = np.concatenate(([0.0], np.cumsum(np.pad(np.asarray(g, float), (0, max(0, L - 1 - len(g))))))) # G(z)
    B, N = grades.shape
    mn = np.minimum(grades[:, :, None], grades[:, None, :])           # (B, N, N): min(i_n, i_m)
    lower = np.tril(np.ones((N, N), dtype=bool))                        # m <= n
    delta = np.where(lower[None], G[mn], 0.0)
    n = np.arange(1, N + 1)
    pc = np.where(grades > 0, delta.sum(axis=2) / n, 0.0)
    denom = (rel_counts[:, 1:] * G[1:L][None, :]).sum(axis=1)
    out = np.zeros(B)
    np.divide(pc.sum(axis=1), denom, out=out, where=denom > 0)
    return out
