"""E[L], E[L^2] and E[L_1 L_2] of DCG@k and ERR@k under independent per-document grade
distributions: the dynamic programme of Theorem 3 of Sawade et al. (2013).

A query's candidates u = 0..U-1 carry grade distributions ``P[b, u, z]``; a ranked list is an
index array ``docs[b, n]`` into them (-1: none), so two rankers of a query share the random
labels of the documents they share. Batched over B queries.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.metrics.dcg import DCG
from maxent.metrics.err import ERR
from maxent.metrics._kernels import discount, gain_vector

__all__ = ["check_metric", "metric_moments", "cross_moment", "delta_moments", "level_values"]


def check_metric(metric) -> None:
    """Raise ParameterError unless ``metric`` is DCG@k or ERR@k (what Sawade et al. (2013) covers)."""
    if type(metric) not in (DCG, ERR):
        raise ParameterError(
            f"active evaluation supports DCG and ERR (Sawade et al. 2013, Theorem 3), not {metric}; "
            "use e.g. DCG(gain=exp)@10 or ERR@10")


def level_values(metric, levels: int) -> np.ndarray:
    """(G,) per-grade value: DCG's gain(z), or ERR's stopping probability r(z)."""
    check_metric(metric)
    if isinstance(metric, ERR):
        return metric.satisfaction(levels)
    return gain_vector(levels, metric.gain)


def _cut(metric, docs: np.ndarray) -> np.ndarray:
    docs = np.atleast_2d(np.asarray(docs, dtype=np.int64))
    k = metric.cutoff
    return docs if k is None else docs[:, :k]


def _gather(P: np.ndarray, docs: np.ndarray, values: np.ndarray):
    """Per-rank moments E[v(y)], E[v(y)^2] of the document at each rank (0 where none)."""
    valid = docs >= 0
    idx = np.where(valid, docs, 0)
    e1 = np.where(valid, np.take_along_axis(P @ values, idx, axis=1), 0.0)
    e2 = np.where(valid, np.take_along_axis(P @ (values ** 2), idx, axis=1), 0.0)
    return e1, e2


def _dcg_weights(metric, docs: np.ndarray, U: int) -> np.ndarray:
    """(B, U) total discount D(n) of each document over the ranks n it holds."""
    B, N = docs.shape
    D = discount(N, metric.discount)
    valid = docs >= 0
    w = np.zeros((B, U + 1))
    rows = np.broadcast_to(np.arange(B)[:, None], docs.shape)
    np.add.at(w, (rows, np.where(valid, docs, U)), np.where(valid, D[None, :], 0.0))
    return w[:, :U]


def metric_moments(metric, P: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""E[L] and E[L^2] of DCG@k or ERR@k for each of B ranked lists.

    Parameters
    ----------
    metric : DCG or ERR (cutoff k applies to ``docs``)
    P : (B, U, G) grade distribution of each candidate document
    docs : (B, N) document index at each rank, -1 for none; a document appears at most once

    Returns
    -------
    mean, second : (B,) arrays

    Notes
    -----
    DCG: :math:`E[L^2] = E[L]^2 + \sum_n D(n)^2 Var[g(y_n)]`. ERR (Theorem 3): with
    :math:`e_n = E[r_n]`, :math:`s_n = E[r_n^2]`, :math:`C_n = \prod_{l\le n}(1-e_l)`,
    :math:`A_n = \prod_{l\le n}E[(1-r_l)^2]`,

    .. math:: E[L^2] = \sum_n \frac{s_n A_{n-1}}{n^2}
              + 2\sum_n \frac{(e_n - s_n)}{n}\frac{A_{n-1}}{C_n}\sum_{m>n}\frac{e_m C_{m-1}}{m}.
    """
    P = np.asarray(P, dtype=np.float64)
    docs = _cut(metric, docs)
    values = level_values(metric, P.shape[2])
    e1, e2 = _gather(P, docs, values)
    B, N = docs.shape
    n = np.arange(1, N + 1, dtype=np.float64)
    if isinstance(metric, DCG):
        D = discount(N, metric.discount)
        mean = e1 @ D
        return mean, mean ** 2 + (e2 - e1 ** 2) @ (D ** 2)
    with np.errstate(divide="ignore"):
        log_c = np.log1p(-e1)                              # log E[1 - r_n]
        log_a = np.log(np.clip(1.0 - 2.0 * e1 + e2, 0.0, None))  # log E[(1 - r_n)^2]
    C_prev = np.exp(np.cumsum(log_c, axis=1) - log_c)    # C_{n-1}
    A_prev = np.exp(np.cumsum(log_a, axis=1) - log_a)    # A_{n-1}
    t = e1 * C_prev / n                                    # e_m C_{m-1} / m
    mean = t.sum(axis=1)
    U_after = np.cumsum(t[:, ::-1], axis=1)[:, ::-1] - t   # sum over m > n
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.exp(np.cumsum(log_a - log_c, axis=1) - log_a)   # A_{n-1} / C_n
    ratio = np.where(np.isfinite(ratio), ratio, 0.0)
    second = (e2 * A_prev / n ** 2).sum(axis=1) + 2.0 * ((e1 - e2) / n * ratio * U_after).sum(axis=1)
    return mean, second


def cross_moment(metric, P: np.ndarray, docs1: np.ndarray, docs2: np.ndarray,
                 *, chunk: int = 2_000_000) -> np.ndarray:
    r"""E[L(r_1) L(r_2)] for two rankings of the same B queries (shared documents allowed).

    DCG: :math:`E[L_1]E[L_2] + \sum_u w_{1u} w_{2u} Var[g(y_u)]`, w = summed discounts.
    ERR (Theorem 3, comparison case): the term of ranks (n, m) is
    :math:`\frac{1}{nm}\prod_u E[f_{a}(y_u) f_{b}(y_u)]`, each document's factor being 1
    (after the rank, or absent), r (at it) or 1 - r (before it) in each list.
    """
    P = np.asarray(P, dtype=np.float64)
    docs1, docs2 = _cut(metric, docs1), _cut(metric, docs2)
    B, U, G = P.shape
    values = level_values(metric, G)
    m1, m2 = P @ values, P @ values ** 2
    if isinstance(metric, DCG):
        w1, w2 = _dcg_weights(metric, docs1, U), _dcg_weights(metric, docs2, U)
        return (w1 * m1).sum(1) * (w2 * m1).sum(1) + (w1 * w2 * (m2 - m1 ** 2)).sum(1)
    M = np.stack([np.ones_like(m1), m1, 1 - m1,
                  m1, m2, m1 - m2,
                  1 - m1, m1 - m2, 1 - 2 * m1 + m2], axis=-1)          # (B, U, 9)
    k1, k2 = docs1.shape[1], docs2.shape[1]
    out = np.zeros(B)
    step = max(1, chunk // max(1, k1 * k2 * U))
    for s in range(0, B, step):
        sl = slice(s, s + step)
        r1 = _roles(docs1[sl], U)                                       # (b, k1, U)
        r2 = _roles(docs2[sl], U)
        code = r1[:, :, None, :] * 3 + r2[:, None, :, :]               # (b, k1, k2, U)
        f = np.take_along_axis(M[sl][:, None, None, :, :], code[..., None], axis=-1)[..., 0]
        terms = f.prod(axis=-1)
        scale = ((docs1[sl] >= 0) / np.arange(1, k1 + 1))[:, :, None] * \
                ((docs2[sl] >= 0) / np.arange(1, k2 + 1))[:, None, :]
        out[sl] = (terms * scale).sum(axis=(1, 2))
    return out


def _roles(docs: np.ndarray, U: int) -> np.ndarray:
    """(B, N, U) role of document u for the term of rank n: 0 after/absent, 1 at, 2 before."""
    B, N = docs.shape
    pos = np.full((B, U + 1), N + 1, dtype=np.int64)     # 1-based rank, N+1 = absent
    rows = np.broadcast_to(np.arange(B)[:, None], docs.shape)
    ranks = np.broadcast_to(np.arange(1, N + 1)[None, :], docs.shape)
    valid = docs >= 0
    pos[rows[valid], docs[valid]] = ranks[valid]
    pos = pos[:, None, :U]
    n = np.arange(1, N + 1)[None, :, None]
    return np.where(pos < n, 2, np.where(pos == n, 1, 0))


def delta_moments(metric, P, docs1, docs2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """E[L_1], E[L_2], E[delta] and E[delta^2] for delta = L(r_1) - L(r_2), per query (B,)."""
    mu1, s1 = metric_moments(metric, P, docs1)
    mu2, s2 = metric_moments(metric, P, docs2)
    c = cross_moment(metric, P, docs1, docs2)
    return mu1, mu2, mu1 - mu2, s1 + s2 - 2.0 * c
