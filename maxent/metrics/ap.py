"""Average precision (METHOD sections 2-3; paper [000] section 3, [004] section 2)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import cutoff_mask, prefix_exclusive, safe_divide
from maxent.metrics.base import Metric, Param
from maxent.metrics.precision import REL

__all__ = ["AP", "GMAP", "expected_ap", "expected_ap_gradient", "expected_ap_hvp", "MIN_GEO_MEAN"]

MIN_GEO_MEAN = 1e-5
"""Floor of a topic's AP before the logarithm of the geometric mean (trec_eval's value)."""


def expected_ap(q: np.ndarray, R: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""E[AP] under independent relevance probabilities q (B, N) -> (B,).

    .. math:: E[AP] = \frac1R \sum_{n\le k} \frac{q_n}{n}\Big(1 + \sum_{m<n} q_m\Big)

    (exact: E[rel_n rel_m] = q_n q_m for m != n and E[rel_n^2] = q_n). 0 when R = 0.
    """
    N = q.shape[1]
    n = np.arange(1, N + 1, dtype=np.float64)
    terms = q / n * (1.0 + prefix_exclusive(q)) * cutoff_mask(N, cutoff)
    return safe_divide(terms.sum(axis=1), R)


def expected_ap_gradient(q: np.ndarray, R: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""Gradient of :func:`expected_ap`, (B, N), in O(N) with prefix sums.

    .. math:: \frac{\partial E[AP]}{\partial q_j} = \frac1R\Big[\frac{1+\sum_{m<j} q_m}{j}[j\le k]
              + \sum_{j<n\le k} \frac{q_n}{n}\Big]
    """
    N = q.shape[1]
    n = np.arange(1, N + 1, dtype=np.float64)
    mask = cutoff_mask(N, cutoff)
    own = (1.0 + prefix_exclusive(q)) / n * mask
    later = q / n * mask
    upto = np.cumsum(later, axis=1)
    after = upto[:, -1:] - upto  # sum_{n>j} = total - sum_{n<=j} (no reversed copies)
    return safe_divide(own + after, R[:, None])


def expected_ap_hvp(d: np.ndarray, R: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""Hessian-vector product of :func:`expected_ap` (constant Hessian: E[AP] is quadratic).

    .. math:: \frac{\partial^2 E[AP]}{\partial q_j \partial q_k} = \frac{f_{\max(j,k)}}{R}
              \;(j \ne k),\ 0\ (j = k),\qquad f_n = [n \le k_{cut}]/n

    so (H d)_j = (1/R)[f_j sum_{m<j} d_m + sum_{n>j} f_n d_n], O(N) with prefix sums.
    """
    N = d.shape[1]
    f = cutoff_mask(N, cutoff) / np.arange(1, N + 1, dtype=np.float64)
    later = np.cumsum(d * f, axis=1)
    return safe_divide(f * prefix_exclusive(d) + later[:, -1:] - later, R[:, None])


@dataclass(frozen=True, eq=False, repr=False)
class AP(Metric):
    r"""Average precision: :math:`AP = \frac1R \sum_n rel_n \, prec(n)`,
    :math:`prec(n) = \frac1n\sum_{m\le n} rel_m`.

    R is the number of judged relevant documents (grade >= rel) of the topic, so unretrieved
    relevant documents contribute 0; AP = 0 when R = 0 (trec_eval ``map``). With a cutoff k
    only ranks n <= k count, still divided by R (trec_eval ``map_cut_k``).
    """

    cutoff: int | None = None
    rel: int = 1
    NAME: ClassVar[str] = "AP"
    TREC_NAME: ClassVar[str] = "map"
    TREC_CUT_NAME: ClassVar[str] = "map_cut"
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k (None: whole list)"), "rel": REL}

    def value(self, lists):
        rel = lists.grades >= self.rel
        if self.cutoff is not None:
            rel = rel[:, : self.cutoff]
        # precision at the relevant ranks only (sparse), summed per list in rank order as
        # trec_eval does
        rows, cols = np.nonzero(rel)
        per_list = rel.sum(axis=1)
        hits = np.arange(1, len(rows) + 1) - np.repeat(np.cumsum(per_list) - per_list, per_list)
        prec_sum = np.bincount(rows, weights=hits / (cols + 1.0), minlength=len(rel))
        return safe_divide(prec_sum, lists.n_rel(self.rel))

    def _expectation(self, q, lists):
        return expected_ap(q, lists.n_rel(self.rel), self.cutoff)

    def _gradient(self, q, lists):
        return expected_ap_gradient(q, lists.n_rel(self.rel), self.cutoff)

    def hessian_vector(self, p, d, lists):
        """d^2E[AP]/dp^2 applied to d (same shape as p; the Hessian does not depend on p)."""
        if np.ndim(d) == 3:
            dq = expected_ap_hvp(self._binary(d), lists.n_rel(self.rel), self.cutoff)
            z = np.arange(np.shape(d)[2])
            return dq[:, :, None] * (z >= self.binary_threshold)[None, None, :]
        return expected_ap_hvp(np.asarray(d, dtype=np.float64), lists.n_rel(self.rel), self.cutoff)

    def prefix_hessian(self, lists):
        """Structure of the Hessian for the Newton solver (:mod:`maxent.solver.newton_kkt`).

        Returns (js, kappa, f): category thresholds js (here (1,), the relevant category of
        the binary form), kappa (B, 1) = 1/R and f (N,) = [n <= cutoff]/n such that
        d^2E/dQ_j dQ_j = kappa_j (f_{max(n,m)} - [n = m] f_n), Q_j = P(category >= j).
        """
        N = lists.depth
        f = cutoff_mask(N, self.cutoff) / np.arange(1, N + 1, dtype=np.float64)
        return (1,), safe_divide(1.0, lists.n_rel(self.rel))[:, None], f


@dataclass(frozen=True, eq=False, repr=False)
class GMAP(Metric):
    r"""Geometric mean average precision (trec_eval ``gm_map``).

    Per topic this is AP (see :class:`AP`); over topics the mean is geometric:
    :math:`\exp\big(\frac1T\sum_t \ln\max(AP_t, 10^{-5})\big)` (trec_eval's
    ``MIN_GEO_MEAN`` floor, so a topic with AP = 0 counts as 1e-5). trec_eval reports it only
    in the summary over all topics (no per-topic lines); with ``-c`` missing topics count as
    1e-5. No expectation (not a MaxEnt constraint).
    """

    rel: int = 1
    NAME: ClassVar[str] = "GMAP"
    TREC_NAME: ClassVar[str] = "gm_map"
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    AGGREGATE: ClassVar[str] = "gmean"
    PER_TOPIC: ClassVar[bool] = False
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        """Per-topic AP, (B,); the geometric mean is taken by the aggregation."""
        return AP(rel=self.rel).value(lists)
