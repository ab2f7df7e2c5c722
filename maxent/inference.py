"""From inferred relevance probabilities to precision-recall curves, predicted metrics and errors.

METHOD section 5. Given q_n, the inferred probability that the document at rank n is
relevant at threshold t (binary solves give q directly; graded solves give
Q_n(t) = sum_{z>=t} p_n(z), as paper [000] sums nDCG's grades > 0):

- expected precision Pe(n) = C(n)/n and recall Re(n) = C(n)/R, with C(n) = sum_{m<=n} q_m;
- the real PR curve has one point per relevant retrieved document: the i-th relevant
  document at rank n_i has recall i/R and precision i/n_i;
- **recall-aligned** error (default): the inferred precision where Re reaches i/R. C is
  continued linearly between integer ranks, x_i solves C(x_i) = i, and the inferred precision
  is i/x_i (0 when C never reaches i, i.e. the inferred curve ends before that recall);
- **rank-aligned** error: the inferred precision Pe(n_i) at the real rank n_i;
- per list: RMS and MAE over its points.

Shapes: B lists, N ranks, L grade levels.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

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
    counts = rel.sum(axis=1)
    K = max(int(counts.max(initial=0)), 1)
    ranks = np.zeros((len(lists), K), dtype=np.int64)
    valid = np.arange(K)[None, :] < counts[:, None]
    b, n = np.nonzero(rel)  # row-major: ranks in increasing order within each row
    i = np.arange(len(b)) - np.repeat(np.cumsum(counts) - counts, counts)
    ranks[b, i] = n + 1
    return ranks, valid, lists.n_rel(t)


def real_pr_curve(lists: RankedLists, t: int):
    """Real PR curve of each list at threshold t: the i-th relevant retrieved document at
    rank n_i gives the point (recall i/R, precision i/n_i).

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
    """Inferred PR curve at every rank: Re(n) = C(n)/R and Pe(n) = C(n)/n, C(n) = sum_{m<=n} q_m.

    q : (B, N) inferred relevance probabilities; R : (B,) judged relevant documents (a zero R
    gives recall C(n), as 1 is used in its place). Returns (recall, precision), each (B, N).
    """
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


def inferred_pr_at(q: np.ndarray, ranks: np.ndarray, valid: np.ndarray, alignment: str = "recall") -> np.ndarray:
    """Inferred precision at each real PR point (B, K) (see module docstring).

    q : (B, N) inferred relevance probabilities; ranks/valid from :func:`real_pr_points`.
    """
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
    """Per-list errors of an inferred PR curve: ``rms``, ``mae`` (B,), ``n_points`` (B,).

    Lists without relevant retrieved documents have n_points = 0 and NaN errors.
    """

    rms: np.ndarray
    mae: np.ndarray
    n_points: np.ndarray


def pr_errors(q: np.ndarray, lists: RankedLists, t: int, alignment: str = "recall") -> PRErrors:
    """RMS and MAE between the real and the inferred PR curve of each list at threshold t."""
    ranks, valid, _ = real_pr_points(lists, t)
    inferred = inferred_pr_at(q, ranks, valid, alignment)
    i = np.arange(1, ranks.shape[1] + 1)[None, :]
    real = np.where(valid, i / np.maximum(ranks, 1), 0.0)
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
    """Kendall's tau-b between two rankings' scores (NaN pairs dropped)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2:
        return float("nan")
    return float(stats.kendalltau(a[ok], b[ok]).statistic)
