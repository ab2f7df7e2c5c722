r"""LambdaRank gradients for any metric that owns its swap delta.

With :math:`\Delta M_{ab}` the change of the metric when the documents at ranks a and b swap,
the LambdaRank gradient of a document sums, over its pairs,

.. math:: \lambda_{ij} = \sigma\,|\Delta M_{ij}|\,\rho_{ij}, \qquad
          \rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad l_i > l_j,

added to the better document i and subtracted from j (Donmez et al. 2009 eqs. 4-7; Yilmaz &
Robertson 2010 section 4.2); a positive :math:`\lambda_i` pushes document i up.

The deltas come from the metric object (``metric.swap_delta`` and its block / strip forms); a
metric without them is refused with a ParameterError. Three exact kernels: ``dense`` (all
N x N pairs of a padded batch), ``blocks`` (per query, pairs grouped by grade levels, where
each delta is an outer sum of rank vectors and the delta matrix is never formed) and a K x N
strip for metrics whose deltas vanish below rank K (nDCG@k, P@k, ERR@k).

``sigma``, ``truncation`` and ``norm`` are LightGBM's ``sigmoid``,
``lambdarank_truncation_level`` and ``lambdarank_norm``.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.metrics.base import Metric

__all__ = ["DeltaContext", "check_lambda_metric", "swap_deltas", "rank_by_score", "lambda_gradients"]


def check_lambda_metric(metric) -> None:
    """Raise ParameterError unless ``metric`` is a metric object with a swap delta."""
    if not isinstance(metric, Metric):
        raise ParameterError(f"LambdaRank needs a metric object (maxent.metrics.parse_measure), got {metric!r}")
    reason = metric.delta_unsupported()
    if reason is not None:
        raise ParameterError(reason)


class DeltaContext:
    """A metric and its per-query swap-delta constants (``side``), computed once per data set.

    Parameters
    ----------
    metric : Metric
        A metric of the library with a swap delta (``parse_measure(...)``).
    rel_counts : ndarray, shape (B, L)
        Number of judged documents of each grade 0..L-1 per query.
    """

    def __init__(self, metric, rel_counts, *, side=None):
        check_lambda_metric(metric)
        self.metric = metric
        self.side = metric.delta_side(np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))) \
            if side is None else side
        self.rel_counts = self.side.rel_counts

    def take(self, rows) -> "DeltaContext":
        """The context restricted to some queries (rows of ``rel_counts``)."""
        if rows is None:
            return self
        return DeltaContext(self.metric, None, side=self.side.take(rows))


def swap_deltas(metric, grades, rel_counts=None, *, context: DeltaContext | None = None,
                rows=None, lengths=None) -> np.ndarray:
    r"""Change of the metric when the documents at ranks a and b swap, for all pairs.

    Parameters
    ----------
    metric : Metric
        A metric with a swap delta.
    grades : array_like, shape (B, N) or (N,)
        Grades in ranked order (rank 1 first); -1 marks unjudged documents and padding.
    rel_counts : array_like, shape (B, L) or (L,)
        Judged documents of each grade per query. Not needed when ``context`` is given.
    context : DeltaContext, optional
        Precomputed per-query constants; ``rows`` selects the queries of this batch.
    lengths : array_like, shape (B,), optional
        Ranked documents per query; positions at or beyond get delta 0.

    Returns
    -------
    ndarray, shape (B, N, N) or (N, N)
        :math:`\Delta M_{ab} = M(\text{list with a, b swapped}) - M(\text{list})`.
    """
    if context is None:
        if rel_counts is None:
            raise ParameterError("swap_deltas needs rel_counts or a context")
        context = DeltaContext(metric, np.atleast_2d(rel_counts))
    ctx = context.take(rows)
    return ctx.metric.swap_delta(grades, ctx.side, lengths=lengths)


def _pair_sigmoid(ss: np.ndarray, sigma: float, valid: np.ndarray) -> np.ndarray:
    """rho[b, a, c] = 1 / (1 + exp(sigma (s_a - s_c))), (B, N, N), as an outer product of two
    exp vectors (centred on the mid-range) while sigma * (score range) < 1400 keeps it exact."""
    x = sigma * np.where(valid, ss, 0.0)
    hi = np.where(valid, x, -np.inf).max(axis=1)
    lo = np.where(valid, x, np.inf).min(axis=1)
    if np.all(hi - lo < 1400.0):
        m = 0.5 * (hi + lo)
        xm = np.where(valid, x - m[:, None], 0.0)
        rho = np.exp(xm)[:, :, None] * np.exp(-xm)[:, None, :]
    else:
        rho = np.subtract(x[:, :, None], x[:, None, :])
        with np.errstate(over="ignore"):          # exp overflow -> inf -> rho = 0, exact
            np.exp(rho, out=rho)
    rho += 1.0
    np.divide(1.0, rho, out=rho)
    return rho


def rank_by_score(scores, lengths=None):
    """Order of documents by score, descending; ties keep input order (stable sort).

    Parameters
    ----------
    scores : ndarray, shape (B, N)
    lengths : ndarray, shape (B,), optional
        Real documents per row; positions beyond are padding and are ranked last.

    Returns
    -------
    order : ndarray, shape (B, N)
        ``order[b, i]`` = input position of the document at rank i + 1.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if lengths is not None:
        pad = np.arange(s.shape[1])[None, :] >= np.asarray(lengths).reshape(-1, 1)
        s = np.where(pad, -np.inf, s)
    return np.argsort(-s, axis=1, kind="stable")


def _weighted_sums(Mx: np.ndarray, wI, wJ, p, q, I: np.ndarray, J: np.ndarray):
    r"""Row and column sums of :math:`T_{ac} = wI_a\, wJ_c\, M_{ac} (p_a + q_c)` by matrix-vector
    products; p, q are rank vectors (indexed by I, J) or scalars, wI, wJ vectors or None (= 1)."""
    pv = isinstance(p, np.ndarray)
    qv = isinstance(q, np.ndarray)
    uJ = np.ones(len(J)) if wJ is None else wJ
    uI = np.ones(len(I)) if wI is None else wI
    if qv:
        qJ = q[J]
        rs = Mx @ uJ
        rs *= p[I] if pv else p
        rs += Mx @ (uJ * qJ)
    else:
        rs = Mx @ uJ
        rs *= (p[I] + q) if pv else (p + q)
    if pv:
        pI = p[I]
        cs = uI @ Mx
        cs *= qJ if qv else q
        cs += (uI * pI) @ Mx
    else:
        cs = uI @ Mx
        cs *= (qJ + p) if qv else (p + q)
    if wI is not None:
        rs *= wI
    if wJ is not None:
        cs *= wJ
    return rs, cs


def _lambdas_strip(T: np.ndarray, y: np.ndarray, s: np.ndarray, sigma: float, want_h: bool):
    """Lambdas from the K x n strip of signed deltas (pairs a < K, c > a); the better document of
    a pair is the one of higher grade."""
    K, n = T.shape
    from scipy.special import expit

    eps = np.sign(np.subtract.outer(y[:K], y)).astype(np.float64)
    eps *= np.less.outer(np.arange(K), np.arange(n))                 # pairs with c > a
    W = np.abs(T)
    x = np.subtract.outer(s[:K], s)
    x *= -sigma
    x *= eps
    rho = expit(x)
    H = W * rho * (1.0 - rho) * np.abs(eps) if want_h else None
    W *= rho
    total = float((W * np.abs(eps)).sum())
    W *= eps
    lam = -W.sum(axis=0)
    lam[:K] += W.sum(axis=1)
    h = None
    if want_h:
        h = H.sum(axis=0)
        h[:K] += H.sum(axis=1)
    return lam, h, total


def _lambdas_blocks(ctx: DeltaContext, b: int, y: np.ndarray, s: np.ndarray, sigma: float,
                    truncation, want_h: bool):
    r"""(lam / sigma, h / sigma^2 or None, sum of |Delta M| rho) of one ranked query (no padding);
    lam None when the closed form does not apply (ERR with a stop probability of 1).

    Only pairs with :math:`l_a > l_c` are visited, block by block of grade levels; in a block
    the delta is :math:`p_a + q_c` above the diagonal and :math:`p'_a + q'_c` below it, and with
    :math:`e_a = e^{\sigma s_a - m}`, :math:`\rho_{ac} = e_c / (e_a + e_c)`, so the sums are
    matrix-vector products without a per-pair exp (exact while sigma * score range < 700).
    """
    n = len(y)
    metric = ctx.metric
    K = metric.delta_depth()
    if truncation is not None:
        K = truncation if K is None else min(K, truncation)
    if metric.DELTA_STRIP and K is not None and 4 * K < n:
        T = metric.delta_strip(y, ctx.side, b, K)   # every pair with a rank < K: a K x n strip
        if T is None:
            return None, None, 0.0
        return _lambdas_strip(T, y, s, sigma, want_h)
    blocks = metric.delta_blocks(y, ctx.side, b)
    if blocks is None:
        return None, None, 0.0
    lam = np.zeros(n)
    h = np.zeros(n) if want_h else None
    total = 0.0
    if not blocks:
        return lam, h, total
    x = sigma * s
    direct = not (x.max() - x.min() < 700.0)
    if not direct:
        e = np.exp(x - 0.5 * (x.max() + x.min()))
    subs = []
    for I, J, p1, q1, p2, q2 in blocks:
        if K is not None and K < n:
            it, jt = np.searchsorted(I, K), np.searchsorted(J, K)
            subs.append((I[:it], J, p1, q1, p2, q2))
            subs.append((I[it:], J[:jt], p1, q1, p2, q2))
        else:
            subs.append((I, J, p1, q1, p2, q2))
    for I, J, p1, q1, p2, q2 in subs:
        if len(I) == 0 or len(J) == 0:
            continue
        if direct:
            from scipy.special import expit

            Y = np.subtract.outer(x[J], x[I]).T          # rho = expit(x_c - x_a)
            expit(Y, out=Y)
            mats = [(Y, None, None, lam, -1.0)]
            if want_h:
                mats.append((Y * (1.0 - Y), None, None, h, 1.0))
        else:
            eI, eJ = e[I], e[J]
            Y = np.add.outer(eI, eJ)
            np.reciprocal(Y, out=Y)
            mats = [(Y, None, eJ, lam, -1.0)]
            if want_h:
                mats.append((Y * Y, eI, eJ, h, 1.0))
        if I[-1] < J[0]:                          # every better document ranked above
            mixed = None
            base = (p1, q1)
        elif I[0] > J[-1]:                        # every better document ranked below
            mixed = None
            base = (p2, q2)
        else:
            mixed = np.less.outer(I, J)
            base = (p2, q2)
            dp, dq = p1 - p2, q1 - q2
        for Mx, wI, wJ, acc, sign in mats:
            rs, cs = _weighted_sums(Mx, wI, wJ, base[0], base[1], I, J)
            if mixed is not None:
                Mx *= mixed
                r2, c2 = _weighted_sums(Mx, wI, wJ, dp, dq, I, J)
                rs += r2
                cs += c2
            acc[I] += rs
            acc[J] += sign * cs
            if sign < 0:
                total += rs.sum()
    return lam, h, total


def lambda_gradients(scores, grades, context: DeltaContext, *, rows=None, lengths=None,
                     sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                     return_hessian: bool = False, method: str = "auto"):
    r"""LambdaRank gradients of a batch of queries for the context's metric.

    Parameters
    ----------
    scores : ndarray, shape (B, N)
        Model scores, in input (document) order.
    grades : ndarray, shape (B, N)
        Grades in the same order; -1 for padding.
    context : DeltaContext
        Metric and per-query constants; ``rows`` (B,) selects this batch's queries from it.
    lengths : ndarray, shape (B,), optional
        Documents per query (default: count of grades >= 0, padding must be trailing).
    sigma : float
        RankNet sigma, > 0.
    truncation : int, optional
        Only pairs with at least one document ranked in the top ``truncation``; default all.
    norm : bool
        Multiply a query's lambdas by log2(1 + S) / S, S = sum over pairs of lambda_ij.
    return_hessian : bool
        Also return :math:`\sum \sigma^2 |\Delta M| \rho (1 - \rho)` per document.
    method : {"auto", "dense", "blocks"}
        ``dense``: all N x N pairs of the padded batch at once (fastest for short lists);
        ``blocks``: per query, by grade blocks (fastest for long lists); ``auto``: blocks when
        N >= ``metric.LAMBDA_BLOCK_MIN_N``. Both are exact and give the same numbers.

    Returns
    -------
    lambdas : ndarray, shape (B, N)
        :math:`\lambda_i` in input order; positive = push the document up (ascent on the metric).
    hessian : ndarray, shape (B, N)
        Only with ``return_hessian``.
    """
    if not sigma > 0:
        raise ParameterError(f"sigma must be > 0, got {sigma}")
    if method not in ("auto", "dense", "blocks"):
        raise ParameterError(f"method must be auto, dense or blocks, got {method!r}")
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.atleast_2d(np.asarray(grades)).astype(np.int64)
    N = s.shape[1]
    if lengths is None:
        lengths = (y >= 0).sum(axis=1)
    lengths = np.asarray(lengths)
    order = rank_by_score(s, lengths)
    valid = np.arange(N)[None, :] < lengths[:, None]
    ys = np.take_along_axis(y, order, axis=1)
    ss = np.where(valid, np.take_along_axis(s, order, axis=1), 0.0)
    ctx = context.take(rows)
    lam = None
    if method == "blocks" or (method == "auto" and N >= ctx.metric.LAMBDA_BLOCK_MIN_N):
        lam, h, S = _lambdas_per_query(ctx, ys, ss, lengths, sigma, truncation, return_hessian)
    if lam is None:
        lam, h, S = _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, return_hessian)
    if norm:
        f = np.where(S > 0, np.log2(1.0 + S) / np.where(S > 0, S, 1.0), 1.0)[:, None]
        lam *= f
        if return_hessian:
            h *= f
    out = np.empty_like(lam)
    np.put_along_axis(out, order, lam, axis=1)
    if not return_hessian:
        return out
    hout = np.empty_like(h)
    np.put_along_axis(hout, order, h, axis=1)
    return out, hout


def _lambdas_per_query(ctx, ys, ss, lengths, sigma, truncation, return_hessian):
    """(lam, h, S) of the ranked batch by :func:`_lambdas_blocks`, lam None if a query has no closed form."""
    B, N = ys.shape
    lam = np.zeros((B, N))
    h = np.zeros((B, N)) if return_hessian else None
    S = np.zeros(B)                             # sum over pairs of lambda_ij (for norm)
    for b in range(B):
        n = int(lengths[b])
        if n == 0:
            continue
        lb, hb, S[b] = _lambdas_blocks(ctx, b, ys[b, :n], ss[b, :n], sigma, truncation, return_hessian)
        S[b] *= sigma
        if lb is None:
            return None, None, None
        lam[b, :n] = lb * sigma
        if return_hessian:
            h[b, :n] = hb * (sigma * sigma)
    return lam, h, S


def _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, return_hessian):
    """(lam, h, S) from all N x N pairs of the padded batch at once, in ranked order."""
    N = ys.shape[1]
    W = ctx.metric.abs_delta_better(ys, ctx.side, valid)   # |Delta M_ab| on pairs l_a > l_b, else 0
    if truncation is not None:
        top = np.arange(N) < truncation
        W *= top[None, :, None] | top[None, None, :]
    rho = _pair_sigmoid(ss, sigma, valid)            # 1 / (1 + exp(sigma (s_a - s_b)))
    h = None
    if return_hessian:
        H = W * (sigma * sigma) * rho * (1.0 - rho)
        h = H.sum(axis=2) + H.sum(axis=1)
    W *= rho
    if sigma != 1.0:
        W *= sigma
    return W.sum(axis=2) - W.sum(axis=1), h, W.sum(axis=(1, 2))


def per_query_gradients(metric_fn, scores, grades, context: "DeltaContext", rows=None, lengths=None,
                        **options) -> np.ndarray:
    """Score gradients (B, N) of a padded batch from ``metric_fn(context, s, y, row=b, **options)
    -> (value, gradient)`` of one query (SoftRank, ApproxRank); padding gets 0."""
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.atleast_2d(np.asarray(grades)).astype(np.int64)
    B, N = s.shape
    if lengths is None:
        lengths = (y >= 0).sum(axis=1)
    rows = np.arange(B) if rows is None else np.asarray(rows)
    out = np.zeros((B, N))
    for b in range(B):
        n = int(lengths[b])
        if n:
            out[b, :n] = metric_fn(context, s[b, :n], y[b, :n], row=int(rows[b]), **options)[1]
    return out
