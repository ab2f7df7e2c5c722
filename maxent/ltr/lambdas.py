r"""LambdaRank gradients for any metric that owns its swap delta.

For a query ranked by model score, the swap delta :math:`\Delta M_{ab}` is the change of the
metric when the documents at ranks a and b exchange places (all else fixed). The LambdaRank
gradient of a document is the sum, over the pairs it belongs to, of

.. math:: \lambda_{ij} = \sigma\,|\Delta M_{ij}|\,\rho_{ij}, \qquad
          \rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad l_i > l_j,

added to the better document i and subtracted from j: :math:`\lambda_i = \sum_j \lambda_{ij}
- \sum_j \lambda_{ji}` (Donmez et al. 2009 eqs. 4-7; Yilmaz & Robertson 2010 section 4.2). A positive
:math:`\lambda_i` pushes document i up, so the model moves by :math:`+\eta \sum_i \lambda_i
\partial s_i / \partial \theta`.

Nothing here knows a metric family: the deltas come from the metric object
(``metric.swap_delta`` and its block / strip forms, each family's formula in its own file of
:mod:`maxent.metrics`; a metric without them says so with ``HAS_SWAP_DELTA`` /
``delta_unsupported()`` and is refused with a ParameterError). Three exact kernels, no
Python loop over documents or pairs:

* ``dense`` (short lists): batched over B queries padded to N documents, all N x N pairs at
  once from ``metric.abs_delta_better``;
* ``blocks`` (long lists; :func:`_lambdas_blocks`): per query, only the pairs with
  l_i > l_j, grouped by grade level (``metric.delta_blocks``). Inside a block every delta is
  an outer sum :math:`p_a + q_c` of rank vectors on either side of the diagonal, the pair
  sigmoid is :math:`e_c / (e_a + e_c)`, and the lambdas are matrix-vector products; the
  delta matrix is never formed;
* a K x N strip (``metric.delta_strip``) for metrics whose deltas vanish when both ranks are
  >= K (``metric.delta_depth()``: nDCG@k, P@k, ERR@k).

Parameter names follow LightGBM / XGBoost: ``sigma`` (LightGBM ``sigmoid``, XGBoost
``lambdarank_pair_method`` has none; RankNet's sigma), ``truncation`` (LightGBM
``lambdarank_truncation_level``: only pairs with at least one document in the top
``truncation`` ranks) and ``norm`` (LightGBM ``lambdarank_norm``: scale a query's lambdas by
log2(1 + S) / S, S = sum of |lambda_ij|).
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.metrics.base import Metric

__all__ = [
    "DeltaContext",
    "check_lambda_metric",
    "swap_deltas",
    "rank_by_score",
    "lambda_gradients",
]


def check_lambda_metric(metric) -> None:
    """Raise ParameterError unless ``metric`` is a metric object with a swap delta."""
    if not isinstance(metric, Metric):
        raise ParameterError(f"LambdaRank needs a metric object (maxent.metrics.parse_measure), got {metric!r}")
    reason = metric.delta_unsupported()
    if reason is not None:
        raise ParameterError(reason)


class DeltaContext:
    """A metric and its per-query swap-delta constants (``metric.delta_side``), computed once.

    Parameters
    ----------
    metric : Metric
        A metric of the library with a swap delta (``parse_measure(...)``).
    rel_counts : ndarray, shape (B, L)
        Number of judged documents of each grade 0..L-1 per query.

    Notes
    -----
    Build one per (metric, data set) and pass it to :func:`swap_deltas` /
    :func:`lambda_gradients` with ``rows`` to select the queries of a batch (the
    per-query constants are cached per data set). The constants themselves are the metric's
    :class:`~maxent.metrics._deltas.DeltaSide` (``side``).
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
    r"""Change of the metric when the documents at ranks a and b swap, for all pairs:
    ``metric.swap_delta`` (see the metric's own file for its formula).

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
    """rho[b, a, c] = 1 / (1 + exp(sigma (s_a - s_c))), (B, N, N), without an N x N exp.

    exp(sigma (s_a - s_c)) = exp(sigma (s_a - m)) * exp(-sigma (s_c - m)) is an outer product
    of two length-N vectors (m = mid-range of the query's scores), which is exact in float64
    while sigma * (score range) stays below 1400; wider ranges take the direct N x N exp.
    """
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

    Notes
    -----
    Tie rule (named): equal scores are ranked
    by input position, first one first. This is LightGBM's stable sort.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if lengths is not None:
        pad = np.arange(s.shape[1])[None, :] >= np.asarray(lengths).reshape(-1, 1)
        s = np.where(pad, -np.inf, s)
    return np.argsort(-s, axis=1, kind="stable")


def _weighted_sums(Mx: np.ndarray, wI, wJ, p, q, I: np.ndarray, J: np.ndarray):
    r"""Row and column sums of :math:`T_{ac} = wI_a\, wJ_c\, M_{ac} (p_a + q_c)`.

    p and q are rank vectors (indexed by I and J) or scalars; wI, wJ are vectors over the
    block's rows / columns or None (= 1). Matrix-vector products only (BLAS gemv, one read of
    M each): rows :math:`wI \odot (p \odot M wJ + M (wJ \odot q))`, columns
    :math:`wJ \odot (q \odot M^T wI + M^T (wI \odot p))`.
    """
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


def _diff(u, v):
    """u - v for rank vectors or scalars."""
    return u - v


def _lambdas_strip(T: np.ndarray, y: np.ndarray, s: np.ndarray, sigma: float, want_h: bool):
    r"""Lambdas from the K x n strip of signed deltas (pairs {a, c}, a < K, c > a).

    The better document of a pair is the one of higher grade; with
    :math:`\epsilon = \mathrm{sign}(l_a - l_c)`, :math:`\rho = 1 / (1 + e^{\epsilon \sigma
    (s_a - s_c)})` and :math:`W = |T| \rho`, a gains :math:`\epsilon W` and c loses it.
    """
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
    r"""Unscaled :math:`\sum_j |\Delta M_{ij}| \rho_{ij}` per document of one ranked query.

    Parameters
    ----------
    ctx : DeltaContext
        Already restricted to the batch (``take``); ``b`` is the query's row in it.
    y, s : ndarray, shape (n,)
        Grades and scores in ranked order (no padding).
    sigma : float
    truncation : int or None
    want_h : bool
        Also the second-order terms :math:`\sum_j |\Delta M_{ij}| \rho_{ij}(1 - \rho_{ij})`.

    Returns
    -------
    lam, h : ndarray, shape (n,)
        :math:`\lambda / \sigma` and :math:`h / \sigma^2` (h None unless ``want_h``); lam is
        None when the closed form does not apply (ERR with a stop probability of 1).
    total : float
        :math:`\sum_{pairs} |\Delta M| \rho` (the ``norm`` sum S / sigma).

    Notes
    -----
    Only pairs with :math:`l_a > l_c` are visited, block by block of grade levels (G levels
    give G(G-1)/2 blocks, :math:`\frac12 (N^2 - \sum_z N_z^2)` pairs in all, 40 % of N^2 for
    five equally frequent grades). In a block the delta is an outer sum, :math:`p_a + q_c`
    above the diagonal a < c and :math:`p'_a + q'_c` below it (``metric.delta_blocks``).
    With :math:`e_a = e^{\sigma s_a - m}` (m the mid-range) the pair sigmoid is
    :math:`\rho_{ac} = e_c Y_{ac}`, :math:`Y_{ac} = 1 / (e_a + e_c)`, and
    :math:`\rho(1-\rho) = e_a e_c Y_{ac}^2`: the kernel forms Y (one add, one reciprocal; no
    per-pair exp) and :math:`A = Y \odot [a < c]`, and reduces

    .. math:: \sum_c \rho_{ac} |\Delta_{ac}| = \sum_c e_c \left(Y_{ac} (p'_a + q'_c)
              + A_{ac} ((p_a - p'_a) + (q_c - q'_c))\right)

    by matrix-vector products (:func:`_weighted_sums`); the delta matrix is never built.
    Exact in float64 while :math:`\sigma` (score range) < 700; wider ranges compute rho
    directly (``scipy.special.expit``). Pairs with both ranks >= K (the metric's cutoff or
    ``truncation``) have delta 0 or are excluded, and are skipped.
    Blocks come from ``metric.delta_blocks``, the strip from ``metric.delta_strip``.
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
            dp, dq = _diff(p1, p2), _diff(q1, q2)
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
        Metric and per-query constants (``DeltaContext(metric, rel_counts)``); ``rows`` (B,) selects this batch's queries from it.
    lengths : ndarray, shape (B,), optional
        Documents per query (default: count of grades >= 0, padding must be trailing).
    sigma : float
        RankNet sigma (LightGBM ``sigmoid``), > 0.
    truncation : int, optional
        Only pairs with at least one document ranked in the top ``truncation`` (LightGBM
        ``lambdarank_truncation_level``); default all pairs.
    norm : bool
        LightGBM ``lambdarank_norm``: multiply a query's lambdas by log2(1 + S) / S,
        S = sum over pairs of lambda_ij.
    return_hessian : bool
        Also return :math:`\sum \sigma^2 |\Delta M| \rho (1 - \rho)` per document.
    method : {"auto", "dense", "blocks"}
        ``dense``: all N x N pairs of the padded batch at once (fastest for short lists);
        ``blocks``: per query, grade block by grade block (:func:`_lambdas_blocks`; fastest
        for long lists); ``auto``: blocks when N >= ``metric.LAMBDA_BLOCK_MIN_N`` (measured
        crossovers: 256 for nDCG, DCG, RBP and GAP, 64 for the others). Both are exact and give the same numbers (tested
        against each other and against the pairwise definition).

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
    B, N = s.shape
    if lengths is None:
        lengths = (y >= 0).sum(axis=1)
    lengths = np.asarray(lengths)
    order = rank_by_score(s, lengths)
    ys = np.take_along_axis(y, order, axis=1)
    ss = np.take_along_axis(s, order, axis=1)
    ss = np.where(np.arange(N)[None, :] < lengths[:, None], ss, 0.0)
    valid = np.arange(N)[None, :] < lengths[:, None]
    ctx = context.take(rows)
    use_blocks = method == "blocks" or (method == "auto" and N >= ctx.metric.LAMBDA_BLOCK_MIN_N)
    lam = h = None
    if use_blocks:
        lam = np.zeros((B, N))
        h = np.zeros((B, N)) if return_hessian else None
        S = np.zeros(B)                 # sum over pairs of lambda_ij (for norm)
        for b in range(B):          # loop over queries; each query is vectorised
            n = int(lengths[b])
            if n == 0:
                continue
            lb, hb, S[b] = _lambdas_blocks(ctx, b, ys[b, :n], ss[b, :n], sigma, truncation,
                                           return_hessian)
            S[b] *= sigma
            if lb is None:
                lam = None
                break
            lam[b, :n] = lb * sigma
            if return_hessian:
                h[b, :n] = hb * (sigma * sigma)
        if lam is not None and norm:
            f = np.where(S > 0, np.log2(1.0 + S) / np.where(S > 0, S, 1.0), 1.0)
            lam *= f[:, None]
            if return_hessian:
                h *= f[:, None]
    if lam is None:
        lam, h = _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, norm, return_hessian)
    out = np.empty_like(lam)
    np.put_along_axis(out, order, lam, axis=1)
    if not return_hessian:
        return out
    hout = np.empty_like(h)
    np.put_along_axis(hout, order, h, axis=1)
    return out, hout


def _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, norm, return_hessian):
    """All N x N pairs of the padded batch at once, in ranked order; (B, N) lambdas (and h)."""
    B, N = ys.shape
    W = ctx.metric.abs_delta_better(ys, ctx.side, valid)   # |Delta M_ab| on pairs l_a > l_b, else 0
    if truncation is not None:
        top = np.arange(N) < truncation
        W *= top[None, :, None] | top[None, None, :]
    rho = _pair_sigmoid(ss, sigma, valid)            # 1 / (1 + exp(sigma (s_a - s_b)))
    H = None
    if return_hessian:
        H = W * (sigma * sigma) * rho * (1.0 - rho)
    W *= rho
    if sigma != 1.0:
        W *= sigma
    lam = W.sum(axis=2) - W.sum(axis=1)
    f = None
    if norm:
        S = W.sum(axis=(1, 2))
        f = np.where(S > 0, np.log2(1.0 + S) / np.where(S > 0, S, 1.0), 1.0)
        lam *= f[:, None]
    if not return_hessian:
        return lam, None
    h = H.sum(axis=2) + H.sum(axis=1)
    if norm:
        h *= f[:, None]
    return lam, h


def per_query_gradients(metric_fn, scores, grades, context: "DeltaContext", rows=None, lengths=None,
                        **options) -> np.ndarray:
    """Score gradients of a padded batch (B, N) from a one-query function.

    ``metric_fn(context, s, y, row=b, **options)`` returns (value, gradient) for one query's
    first ``lengths[b]`` documents; SoftRank and ApproxRank share this driver. The loop is
    over queries (each query is vectorised); padding gets 0.
    """
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
