"""Graded average precision (Robertson, Kanoulas & Yilmaz 2010; docs/method.md, Metrics and
Expectations)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.errors import ParameterError
from maxent.metrics._deltas import DeltaSide, level_groups, valid_ranks
from maxent.metrics._kernels import cutoff_mask, safe_divide
from maxent.metrics.ap import (ap_abs_better, ap_swap_terms, ap_swap_vectors, expected_ap,
                               expected_ap_gradient, expected_ap_hvp)
from maxent.metrics.base import Metric, Param

__all__ = ["GAP", "gap_pivot"]


@dataclass(frozen=True, eq=False, repr=False)
class GAP(Metric):
    r"""Graded average precision with threshold probabilities g = (g_1..g_c), sum g_j = 1.

    g_j is the probability that a user regards grades >= j as relevant (Robertson, Kanoulas &
    Yilmaz 2010). Computed as a weighted mean of thresholded APs (docs/method.md), equal to
    the paper's pivot definition (:func:`gap_pivot`):

    .. math:: GAP(g) = \frac{\sum_j g_j R_{\ge j} AP_{\ge j}}{\sum_j g_j R_{\ge j}}

    Default g: uniform over the qrels' grades above 0; a shorter g is padded with zeros. 0
    when no judged document has a grade >= 1. No trec_eval measure.
    """
    SOLVER_FORM: ClassVar[str | None] = "prefix"

    g: tuple | None = None
    cutoff: int | None = None
    NAME: ClassVar[str] = "GAP"
    TREC_NAME: ClassVar[str | None] = None
    CERTIFIED_ENDS: ClassVar[tuple] = (True, True)   # a positive combination of thresholded APs
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
        """(L,) g_j for thresholds j = 0..L-1 (g_0 = 0); ParameterError for weight on a grade
        above the qrels' highest (it would drop out silently)."""
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
        Q = self._tail_sums(p, js)
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

    def hessian_vector(self, p, d, lists):
        """d^2E[GAP]/dp^2 applied to d (B, N, L); the Hessian does not depend on p:
        sum_j (g_j R_j / Z) T_j^T H_AP(R_j) T_j d with (T_j d)_n = sum_{z>=j} d_n(z)."""
        d = self._graded(d, lists)
        js, Rj, coef, Z = self._thresholds(lists)
        out = np.zeros_like(d)
        for col, j in enumerate(js):
            h = safe_divide(coef[:, col], Z)[:, None] * expected_ap_hvp(d[:, :, j:].sum(axis=2), Rj[:, col], self.cutoff)
            out[:, :, j:] += h[:, :, None]
        return out

    def prefix_hessian(self, lists):
        """The Hessian's structure for the compiled solver: (js, kappa (B, J) = g_j / Z,
        f (N,) = [n <= cutoff]/n), as :meth:`AP.prefix_hessian` per threshold."""
        js, Rj, coef, Z = self._thresholds(lists)
        N = lists.depth
        f = cutoff_mask(N, self.cutoff) / np.arange(1, N + 1, dtype=np.float64)
        kappa = safe_divide(safe_divide(coef, Z[:, None]), Rj)
        return tuple(int(j) for j in js), kappa, f

    HAS_SWAP_DELTA: ClassVar[bool] = True
    DELTA_NO_CUTOFF: ClassVar[bool] = True
    SMOOTH_FORM: ClassVar[str | None] = "pairwise"
    LAMBDA_BLOCK_MIN_N: ClassVar[int] = 256

    def delta_side(self, rel_counts):
        r"""g_j (j = 1..c), :math:`R_{\ge j}` (B, c), :math:`Z = \sum_j g_j R_{\ge j}`."""
        self._require_delta()
        rc = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        B, L = rc.shape
        g = np.asarray(self.weights(L), dtype=np.float64)[1:]
        geq = np.stack([rc[:, j:].sum(axis=1) if j < L else np.zeros(B, np.int64)
                        for j in range(1, len(g) + 1)], axis=1)
        Z = geq @ g
        return DeltaSide(rc, {"R_geq": geq, "Z": Z, "inv_Z": safe_divide(1.0, Z)}, g=g)

    def swap_delta(self, grades, side, lengths=None):
        r"""GAP swap deltas by the identity of docs/method.md (Graded average precision):
        :math:`\sum_j g_j R_{\ge j}\Delta AP_{\ge j} / Z = \sum_j (g_j / Z)\, R_{\ge j}\Delta AP_{\ge j}`."""
        y, single, side = self._delta_args(grades, side)
        B, N = y.shape
        out = np.zeros((B, N, N))
        for j, gj in enumerate(side.g, start=1):   # loop over grade thresholds (c), not documents
            if gj != 0:
                out += (gj * side.inv_Z)[:, None, None] * ap_swap_terms(y >= j)
        valid = valid_ranks(y, lengths)
        out *= valid[:, :, None] & valid[:, None, :]
        return out[0] if single else out

    def abs_delta_better(self, ys, side, valid):
        B, N = ys.shape
        y = np.where(valid, ys, -1)
        W = np.zeros((B, N, N))
        for j, gj in enumerate(side.g, start=1):   # loop over grade thresholds (c of them)
            if gj != 0:
                W += ap_abs_better((y >= j) & valid, gj * side.inv_Z, valid)
        return W

    def delta_blocks(self, y, side, b):
        """Blocks of grade levels (h, l): thresholds l < j <= h separate the pair, so
        |Delta GAP| = sum_j w_j |Delta AP_j| is an outer sum of cumulated AP rank vectors."""
        g = side.g
        c = len(g)
        n = len(y)
        w = g * side.inv_Z[b]
        Ucum = np.zeros((c + 1, n))
        Vcum = np.zeros((c + 1, n))
        for j in range(1, c + 1):     # loop over thresholds (c of them), not documents
            if w[j - 1] != 0:
                U, V = ap_swap_vectors(y >= j)
                Ucum[j] = Ucum[j - 1] + U * w[j - 1]
                Vcum[j] = Vcum[j - 1] + V * w[j - 1]
            else:
                Ucum[j], Vcum[j] = Ucum[j - 1], Vcum[j - 1]
        groups = level_groups(y)
        blocks = []
        for hi in range(len(groups)):
            for lo in range(hi):
                th, tl = min(groups[hi][0], c), max(groups[lo][0], 0)
                if th <= tl:
                    continue
                Us = Ucum[th] - Ucum[tl]
                Vs = Vcum[th] - Vcum[tl]
                if not (Us.any() or Vs.any()):
                    continue
                blocks.append((groups[hi][1], groups[lo][1], Us, Vs, Vs, Us))
        return blocks

    def pair_form(self, y, side, b):
        r"""(delta (n, n), Z) of the pivot form of Robertson, Kanoulas & Yilmaz (2010),
        :math:`\delta_{mn} = \sum_{j\le\min(i_m, i_n)} g_j` (SoftGAP)."""
        g = side.g
        c = len(g)
        gc = np.concatenate(([0.0], np.cumsum(g)))        # gc[l] = sum_{t <= l} g_t
        lv = np.clip(y, 0, c)
        return gc[np.minimum.outer(lv, lv)], float(side.Z[b])

    def pair_factors(self, y, side, b):
        r"""The same delta as :math:`\sum_j g_j [i \ge j][i \ge j]^T`: ``(V (J, n), w (J,), Z)``
        with rows :math:`[i \ge j]` for the thresholds with g_j > 0 (ApproxGAP)."""
        js = np.flatnonzero(side.g > 0) + 1
        V = (y[None, :] >= js[:, None]).astype(np.float64)
        return V, side.g[js - 1], float(side.Z[b])


def gap_pivot(grades: np.ndarray, rel_counts: np.ndarray, g) -> np.ndarray:
    r"""GAP from the pivot definition of Robertson, Kanoulas & Yilmaz (2010), an O(N^2)
    reference: :math:`\sum_{n: i_n > 0} \frac1n\sum_{m\le n}\delta(m,n) / \sum_z R_z \sum_{j\le z} g_j`,
    :math:`\delta(m,n)=\sum_{j\le\min(i_m,i_n)} g_j`; grades (B, N), rel_counts (B, L) -> (B,).
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
