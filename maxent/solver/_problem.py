"""One batch of maximum-entropy problems in a common categorical form (docs/method.md).

Internally every problem is graded: a binary metric is the special case of L = 2 categories
(0 = not relevant, 1 = relevant at the metric's threshold), so one code path serves both.
Shapes: B problems, N ranks, L categories (grade levels), K = L + 1 multipliers
stored as ``theta = [a_0, ..., a_{L-1}, b]`` with a_ref = 0 for the reference category.
Distributions are held *category-major*, ``PT`` of shape (B, L, N): numpy reduces a short
last axis slowly, and softmax over L <= 5 categories is then a few whole-array operations.
The metric sees the (B, N, L) view ``PT.transpose(0, 2, 1)`` (or PT[:, 1] if binary).

The optimum has the exponential form ``p_n(z) = softmax_z(a_z + b W_n(z))`` with
``W = dE/dp`` (constant for metrics linear in p; at the solution itself otherwise).
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.ranked import RankedLists
from maxent.solver._engine import CONSTANTS as _K   # one definition: maxent/solver/_constants.h

COUNTS = ("retrieved", "total")

BOUNDARY_RTOL = _K["RTOL"]
"""A target within this (relative to max(1, |end|)) of an end of the range is ``boundary``."""


def count_constraints(metric, lists: RankedLists, count: str) -> np.ndarray:
    """Right-hand sides K of the count constraints, (B, L) floats, summing to each length.

    Binary metrics (threshold t): column 1 is K = number of documents with grade >= t,
    column 0 is length - K. Graded metrics: K_z per grade z = 0..L-1.

    ``count="retrieved"`` (default; docs/method.md): counts of the real list (unjudged
    documents count as grade 0), so the real list is always feasible.
    ``count="total"``: the qrels totals R (binary) or R_z (graded) capped at the list
    length. The graded cap fills from the highest grade down:
    K_z = min(R_z, length - sum_{z' > z} K_z'), so the most relevant documents are kept
    when the qrels hold more judged-relevant documents than the list has ranks; K_0 takes
    the remaining ranks.
    """
    return category_counts(lists, count, None if metric.GRADED else metric.binary_threshold)


def category_counts(lists: RankedLists, count: str, threshold: int | None = None) -> np.ndarray:
    """The count constraints of :func:`count_constraints` for a form rather than a metric:
    binary at ``threshold`` (B, 2), or graded (B, L) when it is None."""
    if count not in COUNTS:
        raise ParameterError(f"count must be one of {COUNTS}, got {count!r}")
    length = lists.lengths.astype(np.int64)
    if threshold is not None:
        t = threshold
        if count == "retrieved":
            K = lists.retrieved_counts()[:, t:].sum(axis=1)
        else:
            K = np.minimum(lists.n_rel(t), length)
        return np.stack([length - K, K], axis=1).astype(np.float64)
    if count == "retrieved":
        return lists.retrieved_counts().astype(np.float64)
    L = lists.levels
    out = np.zeros((len(lists), L), dtype=np.int64)
    room = length.copy()
    for z in range(L - 1, 0, -1):  # loop over grade levels (a handful)
        out[:, z] = np.minimum(lists.rel_counts[:, z], room)
        room -= out[:, z]
    out[:, 0] = room
    return out.astype(np.float64)


def certified_ends(metric) -> tuple[bool, bool]:
    """Whether the (min, max) of E[M] over the relaxed polytope equals that of the
    deterministic lists (so a target beyond it is certainly infeasible, and a target on it
    is certainly a boundary): the metric's class attribute ``CERTIFIED_ENDS``.

    - linear metrics (P@k, nDCG, ...): an LP over a transportation polytope has integral
      vertices;
    - AP (and GAP, a positive combination of thresholded APs): AP*R <= |x| pointwise with
      equality only for prefix lists, so E[AP] <= K / R with equality only at the
      top-packed list; the minimum f(K) = sum_{i<=K} i / (N - K + i) is convex in K, so by
      Jensen E[AP] >= f(K) with equality only for a deterministic count;
    - RR: the maximum 1 needs p_1 = 1 (certified); the minimum is not (a fractional list can
      leave every rank empty with positive probability, RR = 0);
    - ERR (and RR) when the stopping probabilities s_z strictly increase with the grade:
      the maximum is the ideal list's. With c_n non-increasing (1/n, 0 beyond a cutoff),
      Abel summation gives E = sum_n (c_n - c_{n+1}) (1 - prod_{m<=n} (1 - r_m)), a
      non-negative combination; each sum_{m<=n} log(1 - r_m) is concave in p (r is
      linear), so its minimum over the transportation polytope is at a vertex, a
      deterministic list, where it is least with the n highest grades first: the ideal
      list does that for every n at once. The minimum is not certified (as RR's), but a
      target below :func:`cascade_lower_bound` is certainly infeasible;
    - others: not certified (the solver is tried outside the deterministic range).
    """
    lo, hi = metric.CERTIFIED_ENDS
    return bool(lo), bool(hi)


def cascade_lower_bound(metric, lists: RankedLists, worst: np.ndarray) -> np.ndarray | None:
    """A lower bound of E[M] over every distribution meeting the counts, (B,), for the
    cascade metrics (RR, ERR: ``metric.cascade_form``), whose minimum is not certified
    (a fractional list can go below the deterministic one); None for other metrics.
    ``worst``: the deterministic list with the lowest stopping probabilities first,
    one-hot (B, L, N) (:meth:`Batch.extreme` with top=False).

    With c_n non-increasing (w_n = c_n - c_{n+1} >= 0) and 0 <= s <= 1,
    E = sum_n w_n (1 - prod_{m<=n} (1 - r_m)) >= sum_n w_n (1 - exp(-R_n)), R_n =
    sum_{m<=n} r_m (1 - x <= e^-x). The bound is concave in p, so its minimum over the
    transportation polytope is at a deterministic list, where every R_n is least with the
    lowest stopping probabilities first: that list's value of the bound. A target below
    it is certainly infeasible (below the deterministic minimum but above the bound: not
    known)."""
    if not hasattr(metric, "cascade_form"):
        return None
    s, c = metric.cascade_form(lists)
    s = np.asarray(s, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    w = c - np.append(c[1:], 0.0)
    if s.shape != (worst.shape[1],) or (w < 0).any() or (s < 0).any() or (s > 1).any():
        return None
    r = np.einsum("z,bzn->bn", s, worst)
    active = worst.sum(axis=1) > 0
    if ((r[:, 1:] < r[:, :-1]) & active[:, 1:]).any():
        return None                                  # not lowest first: no bound
    return (w[None, :] * -np.expm1(-np.cumsum(r, axis=1))).sum(axis=1)


class Batch:
    """A batch of problems: metric, lists (sub-batch), counts, target, masks.

    All distributions and weights are category-major (B, L, N).
    """

    def __init__(self, metric, target, lists: RankedLists, counts: np.ndarray):
        self.metric = metric
        self.lists = lists
        self.binary = not metric.GRADED
        self.target = np.asarray(target, dtype=np.float64)
        self.counts = counts
        B, N = lists.grades.shape
        self.L = counts.shape[1]
        self.active = np.arange(N)[None, :] < lists.lengths[:, None]          # (B, N)
        self.grade_ok = counts > 0                                            # (B, L)
        self.ref = np.argmax(self.grade_ok, axis=1)                           # (B,)
        self._preference = None                                               # preference()

    def __len__(self):
        return len(self.target)

    def take(self, idx) -> "Batch":
        return Batch(self.metric, self.target[idx], self.lists.take(idx), self.counts[idx])

    # ------------------------------------------------------------ metric in category form
    def to_metric(self, PT: np.ndarray) -> np.ndarray:
        """Category-major PT (B, L, N) -> the metric's p: (B, N) binary, (B, N, L) graded."""
        return PT[:, 1] if self.binary else PT.transpose(0, 2, 1)

    def expectation(self, PT: np.ndarray) -> np.ndarray:
        return self.metric.expectation(self.to_metric(PT), self.lists)

    def features(self, PT: np.ndarray) -> np.ndarray:
        """WT = dE/dp in category form (B, L, N), 0 beyond each length; binary: [0, dE/dq]."""
        g = self.metric.gradient(self.to_metric(PT), self.lists)
        if self.binary:
            WT = np.zeros(PT.shape)
            WT[:, 1] = g * self.active
        else:
            WT = np.ascontiguousarray(np.asarray(g, dtype=np.float64).transpose(0, 2, 1))
            WT *= self.active[:, None, :]
        return WT

    # ------------------------------------------------------------ simple distributions
    def uniform(self) -> np.ndarray:
        """The count-only maximum-entropy distribution p_n(z) = K_z / length, (B, L, N)."""
        length = np.maximum(self.counts.sum(axis=1), 1.0)
        return (self.counts / length[:, None])[:, :, None] * self.active[:, None, :]

    def theta_uniform(self) -> np.ndarray:
        """Multipliers of :meth:`uniform`: a_z = log(K_z / K_ref), b = 0."""
        th = np.zeros((len(self), self.L + 1))
        Kref = np.take_along_axis(self.counts, self.ref[:, None], axis=1)
        with np.errstate(divide="ignore"):
            a = np.log(self.counts / np.maximum(Kref, 1e-300))
        th[:, : self.L] = np.where(self.grade_ok, a, 0.0)
        return th

    def preference(self) -> np.ndarray:
        """Categories by decreasing preference per problem (B, L): the stable argsort of
        -dE/dp_1(z) at the count-only distribution, computed once per batch and shared by both
        extremes (the metric's gradient is the costly part)."""
        if self._preference is None:
            W1 = self.features(self.uniform())[:, :, 0]                       # (B, L)
            self._preference = np.argsort(-W1, axis=1, kind="stable")
        return self._preference

    def extreme(self, top: bool) -> np.ndarray:
        """The deterministic list that sorts categories by decreasing (top=True) or
        increasing preference of the metric, one-hot (B, L, N).

        Preference of category z: dE/dp_1(z) at the count-only distribution (gain order for
        DCG, satisfaction for ERR, grade for GAP, relevant first for binary metrics).
        """
        B, N = self.active.shape
        order = self.preference()
        if not top:
            order = order[:, ::-1]
        c = np.take_along_axis(self.counts, order, axis=1)
        cum = np.cumsum(c, axis=1)                                            # (B, L)
        n = np.arange(N, dtype=np.float64)
        k = np.zeros((B, N), dtype=np.int64)
        for z in range(self.L):                                               # L categories
            k += n[None, :] >= cum[:, z:z + 1]
        k = np.minimum(k, self.L - 1)
        zs = np.take_along_axis(order, k, axis=1)                             # (B, N)
        PT = np.zeros((B, self.L, N))
        for z in range(self.L):
            PT[:, z] = (zs == z) & self.active
        return PT

    def face(self, PT: np.ndarray) -> np.ndarray:
        """Maximum-entropy distribution on the face of a deterministic extreme ``PT``.

        Consecutive ranks whose gradient rows dE/dp_n(.) (up to a constant per row) are
        equal form a class; every rank of a class gets the class-average composition
        (P@k's top k, ranks beyond a cutoff, ranks 2..N for RR = 1). For a metric linear in
        p with distinct gains this is exactly the maximum-entropy distribution on the
        optimal face; otherwise the caller checks that it still attains the target.
        """
        B, L, N = PT.shape
        G = self.features(PT)
        G = G - G[:, :1]
        scale = np.abs(G).max(axis=(1, 2))[:, None] + 1e-300                  # (B, 1)
        brk = np.ones((B, N), dtype=bool)
        brk[:, 1:] = np.abs(G[:, :, 1:] - G[:, :, :-1]).max(axis=1) > 1e-12 * scale
        brk[:, 1:] |= self.active[:, 1:] != self.active[:, :-1]
        n = np.arange(N)
        start = np.maximum.accumulate(np.where(brk, n, 0), axis=1)           # (B, N)
        end_brk = np.ones((B, N), dtype=bool)
        end_brk[:, :-1] = brk[:, 1:]
        end = np.minimum.accumulate(np.where(end_brk, n, N - 1)[:, ::-1], axis=1)[:, ::-1]
        C = np.concatenate((np.zeros((B, L, 1)), np.cumsum(PT, axis=2)), axis=2)
        e = np.broadcast_to((end + 1)[:, None, :], PT.shape)
        s = np.broadcast_to(start[:, None, :], PT.shape)
        tot = np.take_along_axis(C, e, axis=2) - np.take_along_axis(C, s, axis=2)
        return tot / (end - start + 1)[:, None, :] * self.active[:, None, :]

    def residuals(self, PT: np.ndarray, E: np.ndarray | None = None) -> np.ndarray:
        """Max |constraint violation| per problem: counts and |E[M](P) - target|."""
        if E is None:
            E = self.expectation(PT)
        cnt = np.abs(PT.sum(axis=2) - self.counts).max(axis=1)
        return np.maximum(cnt, np.abs(E - self.target))


def entropy(PT: np.ndarray) -> np.ndarray:
    """Entropy in nats of a categorical product distribution (B, L, N) -> (B,); 0 log 0 = 0."""
    PT = np.asarray(PT, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = PT * np.log(PT)
    return -np.where(PT == 0, 0.0, plogp).sum(axis=(1, 2))
