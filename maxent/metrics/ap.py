"""Average precision (docs/method.md, Metrics and Expectations; Yilmaz & Robertson 2010
section 3; Robertson, Kanoulas & Yilmaz 2010 section 2)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import DeltaSide, symmetric_from_upper, valid_ranks
from maxent.metrics._kernels import cutoff_mask, prefix_exclusive, safe_divide
from maxent.metrics.base import Metric, Param
from maxent.metrics.precision import REL

__all__ = ["AP", "GMAP", "expected_ap", "expected_ap_gradient", "expected_ap_hvp", "MIN_GEO_MEAN",
           "ap_swap_vectors", "ap_swap_terms", "ap_abs_better"]

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
    r"""Gradient of :func:`expected_ap`, (B, N).

    .. math:: \frac{\partial E[AP]}{\partial q_j} = \frac1R\Big[\frac{1+\sum_{m<j} q_m}{j}[j\le k]
              + \sum_{j<n\le k} \frac{q_n}{n}\Big]
    """
    N = q.shape[1]
    n = np.arange(1, N + 1, dtype=np.float64)
    mask = cutoff_mask(N, cutoff)
    own = (1.0 + prefix_exclusive(q)) / n * mask
    later = q / n * mask
    upto = np.cumsum(later, axis=1)
    after = upto[:, -1:] - upto  # sum_{n>j}
    return safe_divide(own + after, R[:, None])


def expected_ap_hvp(d: np.ndarray, R: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""Hessian-vector product of :func:`expected_ap` (E[AP] is quadratic):
    :math:`H_{jk} = f_{\max(j,k)}/R` for j != k, 0 on the diagonal, :math:`f_n = [n \le k]/n`."""
    N = d.shape[1]
    f = cutoff_mask(N, cutoff) / np.arange(1, N + 1, dtype=np.float64)
    later = np.cumsum(d * f, axis=1)
    return safe_divide(f * prefix_exclusive(d) + later[:, -1:] - later, R[:, None])


def ap_swap_vectors(relb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Rank vectors U, V (shape of ``relb``) of R times the AP swap delta.

    With :math:`C(a)` the relevant documents in the top a and :math:`S(a) = \sum_{m\le a}
    rel_m / m`: :math:`U_a = (C(a-1) + 1)/a - S(a)`, :math:`V_b = S(b-1) - C(b)/b`; for a
    relevant document at a and a non-relevant one at b, :math:`R |\Delta AP| = U_a + V_b`
    (a < b) or :math:`V_a + U_b` (a > b) (Donmez, Svore & Burges 2009 eq. 9; Yilmaz &
    Robertson 2010 section 4.2.2).
    """
    rel = relb.astype(np.float64)
    r = np.arange(1, rel.shape[-1] + 1, dtype=np.float64)
    C = np.cumsum(rel, axis=-1)
    S = np.cumsum(rel / r, axis=-1)
    U = (C - rel + 1.0) / r - S
    V = S - rel / r - C / r
    return U, V


def ap_swap_terms(relb: np.ndarray) -> np.ndarray:
    r"""R times the signed AP swap delta for all pairs, (B, N, N), relevance ``relb`` (B, N)
    in rank order: :math:`(U_a + V_b)(rel_b - rel_a)` for a < b, mirrored."""
    U, V = ap_swap_vectors(relb)
    rel = relb.astype(np.float64)
    T = (U[:, :, None] + V[:, None, :]) * (rel[:, None, :] - rel[:, :, None])
    return symmetric_from_upper(T)


_TRI_CACHE: dict[int, np.ndarray] = {}


def _lower(N: int) -> np.ndarray:
    """Boolean (N, N) mask of a > b (row below column in the ranking), cached per N."""
    t = _TRI_CACHE.get(N)
    if t is None:
        t = np.tri(N, N, -1, dtype=bool)
        if len(_TRI_CACHE) > 64:
            _TRI_CACHE.clear()
        _TRI_CACHE[N] = t
    return t


def ap_abs_better(relb: np.ndarray, scale: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """|Delta AP| * scale on pairs (a relevant, b not), zero elsewhere; (B, N, N)."""
    U, V = ap_swap_vectors(relb)
    rel = relb.astype(np.float64)
    W = np.add(U[:, :, None], V[:, None, :])               # a < b:  U_a + V_b
    M2 = V[:, :, None] + U[:, None, :]                    # a > b:  U_b + V_a
    np.copyto(W, M2, where=_lower(relb.shape[1])[None])
    W *= (rel * scale[:, None])[:, :, None]
    W *= (valid & ~relb)[:, None, :]
    return W


@dataclass(frozen=True, eq=False, repr=False)
class AP(Metric):
    r"""Average precision: :math:`AP = \frac1R \sum_n rel_n \, prec(n)`,
    :math:`prec(n) = \frac1n\sum_{m\le n} rel_m`.

    R is the number of judged relevant documents (grade >= rel) of the topic, so unretrieved
    relevant documents contribute 0; AP = 0 when R = 0 (trec_eval ``map``). With a cutoff k
    only ranks n <= k count, still divided by R (trec_eval ``map_cut_k``).
    """
    SOLVER_FORM: ClassVar[str | None] = "prefix"

    cutoff: int | None = None
    rel: int = 1
    NAME: ClassVar[str] = "AP"
    TREC_NAME: ClassVar[str] = "map"
    TREC_CUT_NAME: ClassVar[str] = "map_cut"
    ALIASES: ClassVar[tuple] = ("MAP",)
    TREC_ORDER: ClassVar[tuple] = (3, 14)   # map, map_cut
    CERTIFIED_ENDS: ClassVar[tuple] = (True, True)
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k (None: whole list)"), "rel": REL}

    def value(self, lists):
        rel = lists.grades >= self.rel
        if self.cutoff is not None:
            rel = rel[:, : self.cutoff]
        # precision at the relevant ranks only, summed in rank order as trec_eval
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
        """The Hessian's structure for the compiled solver: (js = (1,), kappa (B, 1) = 1/R,
        f (N,) = [n <= cutoff]/n) with d^2E/dQ_n dQ_m = kappa (f_{max(n,m)} - [n = m] f_n)."""
        N = lists.depth
        f = cutoff_mask(N, self.cutoff) / np.arange(1, N + 1, dtype=np.float64)
        return (1,), safe_divide(1.0, lists.n_rel(self.rel))[:, None], f

    HAS_SWAP_DELTA: ClassVar[bool] = True
    DELTA_NO_CUTOFF: ClassVar[bool] = True
    SMOOTH_FORM: ClassVar[str | None] = "pairwise"

    def delta_side(self, rel_counts):
        self._require_delta()
        rc = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        R = rc[:, self.rel:].sum(axis=1)
        return DeltaSide(rc, {"R": R, "inv_R": safe_divide(1.0, R)})

    def swap_delta(self, grades, side, lengths=None):
        r"""AP swap deltas: :math:`\frac{rel_b - rel_a}{R}(U_a + V_b)` for a < b
        (:func:`ap_swap_vectors`; Donmez, Svore & Burges 2009 eq. 9)."""
        y, single, side = self._delta_args(grades, side)
        out = ap_swap_terms(y >= self.rel) * side.inv_R[:, None, None]
        valid = valid_ranks(y, lengths)
        out *= valid[:, :, None] & valid[:, None, :]
        return out[0] if single else out

    def abs_delta_better(self, ys, side, valid):
        y = np.where(valid, ys, -1)
        return ap_abs_better((y >= self.rel) & valid, side.inv_R, valid)

    def delta_blocks(self, y, side, b):
        relb = y >= self.rel
        I = np.flatnonzero(relb)
        J = np.flatnonzero(~relb)
        if len(I) == 0 or len(J) == 0:
            return []
        U, V = ap_swap_vectors(relb)
        s = side.inv_R[b]
        U, V = U * s, V * s
        return [(I, J, U, V, V, U)]

    def pair_form(self, y, side, b):
        r"""(delta (n, n), Z): AP = :math:`\frac1Z\sum_n \frac1n\sum_{m\le n}\delta_{mn}` with
        :math:`\delta = rel\,rel^T`, Z = R (SoftAP)."""
        rel = (y >= self.rel).astype(np.float64)
        return np.multiply.outer(rel, rel), float(side.R[b])

    def pair_factors(self, y, side, b):
        r"""The same delta as :math:`\sum_k w_k v_k v_k^T`: ``(V (K, n), w (K,), Z)`` (ApproxAP)."""
        rel = (y >= self.rel).astype(np.float64)
        return rel[None, :], np.ones(1), float(side.R[b])


@dataclass(frozen=True, eq=False, repr=False)
class GMAP(Metric):
    r"""Geometric mean average precision (trec_eval ``gm_map``).

    Per topic AP; over topics :math:`\exp\big(\frac1T\sum_t \ln\max(AP_t, 10^{-5})\big)`
    (trec_eval's ``MIN_GEO_MEAN``), printed in the summary only. No expectation.
    """

    rel: int = 1
    NAME: ClassVar[str] = "GMAP"
    TREC_NAME: ClassVar[str] = "gm_map"
    TREC_ORDER: ClassVar[tuple] = (4,)
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    AGGREGATE: ClassVar[str] = "gmean"
    PER_TOPIC: ClassVar[bool] = False
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        """Per-topic AP, (B,); the geometric mean is taken by the aggregation."""
        return AP(rel=self.rel).value(lists)
