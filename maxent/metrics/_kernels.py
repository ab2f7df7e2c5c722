"""Shared vectorised pieces of the metrics: cutoff masks, discounts, gains, ideal DCG.

Shapes: B lists, N ranks, L grade levels.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cutoff_mask", "discount", "exclusive_product", "gain_vector", "ideal_dcg", "prefix_exclusive",
           "safe_divide"]


def cutoff_mask(N: int, cutoff: int | None) -> np.ndarray:
    """(N,) float mask of ranks n <= cutoff (all ranks when cutoff is None)."""
    m = np.ones(N)
    if cutoff is not None:
        m[cutoff:] = 0.0
    return m


def discount(N: int, kind: str = "log2") -> np.ndarray:
    """(N,) rank discounts D(n): ``log2`` 1 / log2(n + 1) (trec_eval's ndcg) or ``jk``
    1 / max(1, log2 n) (Järvelin & Kekäläinen; NTCIREVAL's nDCG)."""
    n = np.arange(1, N + 1, dtype=np.float64)
    if kind == "log2":
        return 1.0 / np.log2(n + 1.0)
    return 1.0 / np.maximum(1.0, np.log2(n))


def gain_vector(levels: int, gain) -> np.ndarray:
    """(L,) gain of each grade: ``linear`` (= grade, trec_eval), ``exp`` (2^grade - 1), or
    (level, gain) pairs overriding those levels of the linear gain (``ndcg.1=3,2=9``)."""
    z = np.arange(levels, dtype=np.float64)
    if gain == "exp":
        return 2.0 ** z - 1.0
    g = z.copy()
    if isinstance(gain, tuple):
        for level, value in gain:
            if 0 <= level < levels:
                g[level] = value
    return g


def ideal_dcg(rel_counts: np.ndarray, gains: np.ndarray, cutoff: int | None, disc: str = "log2") -> np.ndarray:
    """Ideal DCG of each topic from its qrels counts (B, L) -> (B,): judged documents by
    decreasing positive gain, truncated at ``cutoff`` (ndcg_cut) or not (ndcg)."""
    L = rel_counts.shape[1]
    gains = np.asarray(gains, dtype=np.float64)[:L]
    order = np.argsort(-gains, kind="stable")
    order = order[gains[order] > 0]
    if len(order) == 0:
        return np.zeros(rel_counts.shape[0])
    counts = rel_counts[:, order]
    ends = np.cumsum(counts, axis=1)
    starts = ends - counts
    total = int(ends[:, -1].max(initial=0))
    if cutoff is not None:
        ends = np.minimum(ends, cutoff)
        starts = np.minimum(starts, cutoff)
        total = min(total, cutoff)
    C = np.concatenate(([0.0], np.cumsum(discount(max(total, 1), disc))))
    return ((C[ends] - C[starts]) * gains[order][None, :]).sum(axis=1)


def prefix_exclusive(x: np.ndarray, axis: int = 1) -> np.ndarray:
    """sum_{m<n} x_m along ``axis`` (exclusive prefix sum)."""
    c = np.cumsum(x, axis=axis)
    return c - x


def exclusive_product(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """prod_{m<n} x_m along ``axis`` (exclusive prefix product; 1 at the first position)."""
    x = np.asarray(x, dtype=np.float64)
    x = np.moveaxis(x, axis, -1)
    out = np.ones_like(x)
    if x.shape[-1] > 1:
        np.cumprod(x[..., :-1], axis=-1, out=out[..., 1:])
    return np.moveaxis(out, -1, axis)


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (metrics are 0 when nothing is relevant)."""
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out
