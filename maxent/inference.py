"""From inferred relevance probabilities to precision-recall curves and their errors.

See docs/method.md, Scoring an inferred distribution. With q_n = P(grade_n >= t) and
C(n) = sum_{m<=n} q_m, the inferred precision is C(n)/n and recall C(n)/R; the real curve
has the point (i/R, i/n_i) for the i-th relevant document, at rank n_i. **Recall-aligned**
error (default): the inferred precision i/x_i where C(x_i) = i (C linear between ranks; 0
when never reached); **rank-aligned**: C(n_i)/n_i. Per list: RMS and MAE over the points.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maxent.errors import ParameterError
from maxent.ranked import RankedLists

__all__ = [
    "threshold_probabilities",
    "real_pr_points",
    "inferred_pr_at",
    "real_pr_curve",
    "expected_pr_curve",
    "PRErrors",
    "pr_errors",
    "rms",
    "kendall_tau",
    "graded_weights",
    "GradedPR",
    "graded_pr_points",
    "inferred_graded_pr",
    "inferred_graded_pr_curve",
    "graded_pr_errors",
]


def threshold_probabilities(p: np.ndarray, t: int) -> np.ndarray:
    """q_n = P(grade_n >= t): (B, N) binary p is returned as is; (B, N, L) graded p is summed."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 2:
        return p
    return p[:, :, t:].sum(axis=2)


def real_pr_points(lists: RankedLists, t: int):
    """Real PR points at threshold t.

    Returns
    -------
    ranks : int (B, K) rank n_i of the i-th relevant retrieved document (0 where absent)
    valid : bool (B, K) which entries exist (K = max relevant retrieved over the batch)
    R : (B,) number of judged relevant documents (grade >= t)
    """
    rel = lists.grades >= t
    valid, (ranks,) = _compact(rel, np.broadcast_to(np.arange(1, rel.shape[1] + 1), rel.shape))
    return ranks, valid, lists.n_rel(t)


def real_pr_curve(lists: RankedLists, t: int):
    """Real PR curve of each list at threshold t: points (i/R, i/n_i).

    Returns
    -------
    recall, precision : (B, K) floats, 0 where ``valid`` is False
    valid : bool (B, K) (K = max relevant retrieved over the batch)
    """
    ranks, valid, R = real_pr_points(lists, t)
    i = np.arange(1, ranks.shape[1] + 1, dtype=np.float64)[None, :]
    recall = np.where(valid, i / np.maximum(R, 1)[:, None], 0.0)
    precision = np.where(valid, i / np.maximum(ranks, 1), 0.0)
    return recall, precision, valid


def expected_pr_curve(q: np.ndarray, R) -> tuple[np.ndarray, np.ndarray]:
    """Inferred (recall C(n)/R, precision C(n)/n) at every rank, each (B, N), from q (B, N)
    and R (B,); R = 0 counts as 1."""
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    C = np.cumsum(q, axis=1)
    n = np.arange(1, q.shape[1] + 1, dtype=np.float64)
    return C / np.maximum(np.asarray(R, dtype=np.float64), 1.0).reshape(-1, 1), C / n


def _batched_searchsorted(C: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Row-wise searchsorted(C[b], targets[b], side='left') for non-decreasing rows."""
    B, N = C.shape
    span = float(max(C.max(initial=0.0), targets.max(initial=0.0))) + 1.0
    offset = np.arange(B)[:, None] * span
    flat = (C + offset).ravel()
    idx = np.searchsorted(flat, (targets + offset).ravel(), side="left")
    return (idx.reshape(targets.shape) - np.arange(B)[:, None] * N)


def inferred_pr_at(q: np.ndarray, ranks: np.ndarray, valid: np.ndarray,
                   alignment: str = "recall") -> np.ndarray:
    """Inferred precision (B, K) at the real PR points ``ranks``/``valid`` of
    :func:`real_pr_points`, from q (B, N)."""
    B, N = q.shape
    C = np.cumsum(q, axis=1)
    if alignment == "rank":
        idx = np.clip(ranks - 1, 0, N - 1)
        return np.where(valid, np.take_along_axis(C, idx, axis=1) / np.maximum(ranks, 1), 0.0)
    if alignment != "recall":
        raise ValueError(f"alignment must be 'recall' or 'rank', got {alignment!r}")
    i = np.arange(1, ranks.shape[1] + 1, dtype=np.float64)[None, :] * np.ones((B, 1))
    tol = 1e-9  # C(N) equals the count constraint only to solver precision
    j = _batched_searchsorted(C, i - tol)  # first 0-based rank with C >= i: x in (j, j+1]
    reached = j < N
    jc = np.clip(j, 0, N - 1)
    C_hi = np.take_along_axis(C, jc, axis=1)
    C_lo = np.where(jc > 0, np.take_along_axis(C, np.maximum(jc - 1, 0), axis=1), 0.0)
    step = C_hi - C_lo
    frac = np.where(step > 0, np.clip((i - C_lo) / np.where(step > 0, step, 1.0), 0.0, 1.0), 1.0)
    x = jc + frac  # fractional 1-based rank where C(x) = i
    prec = np.where(reached, i / np.maximum(x, 1e-300), 0.0)
    return np.where(valid, np.minimum(prec, 1.0), 0.0)


@dataclass(frozen=True)
class PRErrors:
    """Per-list errors of an inferred PR curve: ``rms``, ``mae``, ``n_points`` (B,); NaN
    errors where n_points = 0."""

    rms: np.ndarray
    mae: np.ndarray
    n_points: np.ndarray


def pr_errors(q: np.ndarray, lists: RankedLists, t: int, alignment: str = "recall") -> PRErrors:
    """RMS and MAE between the real and the inferred PR curve of each list at threshold t."""
    ranks, valid, _ = real_pr_points(lists, t)
    inferred = inferred_pr_at(q, ranks, valid, alignment)
    i = np.arange(1, ranks.shape[1] + 1)[None, :]
    return _errors(np.where(valid, i / np.maximum(ranks, 1), 0.0), inferred, valid)


def _errors(real: np.ndarray, inferred: np.ndarray, valid: np.ndarray) -> PRErrors:
    n = valid.sum(axis=1)
    diff = np.where(valid, real - inferred, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms_ = np.sqrt((diff ** 2).sum(axis=1) / n)
        mae_ = np.abs(diff).sum(axis=1) / n
    return PRErrors(np.where(n > 0, rms_, np.nan), np.where(n > 0, mae_, np.nan), n)


def rms(a, b) -> float:
    """Root mean squared difference of two equal-length arrays (NaN pairs dropped)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.sqrt(np.mean((a[ok] - b[ok]) ** 2))) if ok.any() else float("nan")


def kendall_tau(a, b) -> float:
    """Kendall's tau-b (Kendall 1945) between two rankings' scores, NaN pairs dropped; NaN when
    every pair is tied in a or b, as ``scipy.stats.kendalltau``. O(n^2), in blocks of rows."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"kendall_tau needs two 1-d arrays of one length, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    n = len(a)
    s = ta = tb = 0
    step = max(1, 1_000_000 // max(n, 1))
    for i in range(0, n, step):
        sa = np.sign(a[i:i + step, None] - a[None, :]).astype(np.int8)
        sb = np.sign(b[i:i + step, None] - b[None, :]).astype(np.int8)
        s += int(np.einsum("ij,ij->", sa, sb, dtype=np.int64))
        ta += int(np.count_nonzero(sa))
        tb += int(np.count_nonzero(sb))
    if ta == 0 or tb == 0:
        return float("nan")
    return float(s / np.sqrt(float(ta) * float(tb)))   # every pair counted twice: the ratio holds


# Robertson, Kanoulas & Yilmaz (2010) section 3.2
def graded_weights(g, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(g_j, w(z)) for j, z = 0..L-1: threshold probabilities (g_0 = 0, as :class:`GAP`'s g;
    None: uniform) and w(z) = sum_{j<=z} g_j, the probability that grade z is relevant."""
    from maxent.metrics.gap import GAP

    gj = GAP(g=None if g is None else tuple(g)).weights(levels)
    gj = np.pad(gj, (0, max(0, levels - len(gj))))[:levels]
    return gj, np.cumsum(gj)


@dataclass(frozen=True)
class GradedPR:
    r"""Real graded PR points (Robertson, Kanoulas & Yilmaz 2010 section 3.2), one per
    document with w(i_n) > 0, the k-th at rank n_k:

    .. math::

        GR(n) = \frac{\sum_{m\le n} w(i_m)}{Z},\quad Z = \sum_z R_z\, w(z),\qquad
        GP(n) = \frac{\sum_{m\le n}\delta(m,n)}{n\, w(i_n)},\quad
        \delta(m,n) = \sum_{j=1}^{\min(i_m,i_n)} g_j

    :math:`\sum_k GP(n_k)\, w(i_{n_k}) / Z` = GAP(g).

    Attributes
    ----------
    ranks : int (B, K) rank n_k (0 where absent); valid : bool (B, K)
    level : (B, K) cumulative relevance :math:`\sum_{m\le n_k} w(i_m)`
    recall, precision : (B, K) GR and GP at the points (0 where absent)
    Z : (B,) expected number of relevant documents of the topic
    """

    ranks: np.ndarray
    valid: np.ndarray
    level: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    Z: np.ndarray


def _compact(mask: np.ndarray, *values: np.ndarray):
    """Entries of each row where ``mask`` holds, in order, moved to the front: valid, arrays."""
    counts = mask.sum(axis=1)
    K = max(int(counts.max(initial=0)), 1)
    valid = np.arange(K)[None, :] < counts[:, None]
    b, n = np.nonzero(mask)
    i = np.arange(len(b)) - np.repeat(np.cumsum(counts) - counts, counts)
    out = []
    for v in values:
        o = np.zeros((mask.shape[0], K), dtype=v.dtype)
        o[b, i] = v[b, n]
        out.append(o)
    return valid, out


def graded_pr_points(lists: RankedLists, g=None) -> GradedPR:
    """Real graded PR points of every list for threshold probabilities g (see :class:`GradedPR`)."""
    L = lists.levels
    gj, w = graded_weights(g, L)
    B, N = lists.grades.shape
    grades = np.maximum(lists.grades, 0)
    rel = grades[:, :, None] >= np.arange(1, L)[None, None, :]          # (B, N, c): [i_n >= j]
    cum = np.cumsum(rel, axis=1)                                        # N_j(n) = #{m <= n: i_m >= j}
    num = (rel * cum * gj[1:]).sum(axis=2)                              # sum_m delta(m, n)
    wn = w[grades]
    n = np.arange(1, N + 1)[None, :]
    point = wn > 0
    prec = np.where(point, num / (n * np.where(point, wn, 1.0)), 0.0)
    level = np.cumsum(wn, axis=1)
    Z = (lists.rel_counts * w[None, :]).sum(axis=1).astype(np.float64)
    ranks = np.broadcast_to(np.arange(1, N + 1), (B, N))
    valid, (ranks, level, prec) = _compact(point, ranks, level, prec)
    recall = np.where(valid, level / np.where(Z > 0, Z, 1.0)[:, None], 0.0)
    return GradedPR(ranks, valid, level, recall, prec, Z)


def inferred_graded_pr(p: np.ndarray, g=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Inferred graded PR curve of a graded distribution p (B, N, L), at every rank.

    With :math:`Q_n(j) = \sum_{z\ge j} p_n(z)` and :math:`S_j(n) = \sum_{m<n} Q_m(j)`:

    .. math::

        W(n) = \sum_{m\le n}\sum_j g_j Q_m(j),\qquad
        GP_e(n) = \frac{\sum_j g_j Q_n(j)\,(1 + S_j(n))}{n \sum_j g_j Q_n(j)}

    (ratios of expectations; the real curve when p is 0/1, and
    :math:`\sum_n GP_e(n)\,\Delta W(n) / Z` = E[GAP(g)]). Where the denominator is 0, GP_e
    uses Q_n(j) = 1 in the ratio.

    Returns
    -------
    W : (B, N) cumulative expected relevance (inferred recall = W / Z)
    GP : (B, N) inferred graded precision
    """
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 3:
        raise ValueError(f"graded PR curves need a graded distribution (B, N, L), got shape {p.shape}")
    B, N, L = p.shape
    gj, _ = graded_weights(g, L)
    Q = np.cumsum(p[:, :, ::-1], axis=2)[:, :, ::-1][:, :, 1:]          # (B, N, c): Q_n(j), j >= 1
    S = np.cumsum(Q, axis=1) - Q                                        # exclusive prefix sums
    gq = Q * gj[1:]
    den = gq.sum(axis=2)
    n = np.arange(1, N + 1)[None, :]
    ok = den > 1e-300
    GP = np.where(ok, (gq * (1.0 + S)).sum(axis=2) / (n * np.where(ok, den, 1.0)),
                  (gj[1:] * (1.0 + S)).sum(axis=2) / n)
    return np.cumsum(den, axis=1), GP


def inferred_graded_pr_curve(p: np.ndarray, Z: np.ndarray, g=None) -> tuple[np.ndarray, np.ndarray]:
    """Inferred graded (recall W / Z, precision GP_e) of :func:`inferred_graded_pr`, Z (B,) the
    real ``graded_pr_points(lists, g).Z``; recall 0 where Z = 0."""
    W, GP = inferred_graded_pr(p, g)
    Z = np.asarray(Z, dtype=np.float64)
    return np.where(Z[:, None] > 0, W / np.where(Z > 0, Z, 1.0)[:, None], 0.0), GP


def graded_pr_errors(p: np.ndarray, lists: RankedLists, g=None, alignment: str = "recall") -> PRErrors:
    """RMS and MAE between the real and the inferred graded PR curve of each list, at the
    real points: GP_e where W first reaches the point's level (``recall``; 0 if never) or at
    its rank (``rank``)."""
    pts = graded_pr_points(lists, g)
    W, GP = inferred_graded_pr(p, g)
    B, N = W.shape
    if alignment == "rank":
        inferred = np.take_along_axis(GP, np.clip(pts.ranks - 1, 0, N - 1), axis=1)
    elif alignment == "recall":
        j = _batched_searchsorted(W, pts.level - 1e-9)
        inferred = np.where(j < N, np.take_along_axis(GP, np.clip(j, 0, N - 1), axis=1), 0.0)
    else:
        raise ValueError(f"alignment must be 'recall' or 'rank', got {alignment!r}")
    return _errors(pts.precision, inferred, pts.valid)
