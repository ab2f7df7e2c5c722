r"""SoftRank: smoothed metrics as expectations over score noise, and their gradients
(Taylor et al. 2008; Yilmaz & Robertson 2010 section 4.1; Robertson et al. 2010 for SoftGAP).

Each score is Gaussian, :math:`S_j \sim N(s_j, \sigma_s^2)`, so i beats j with probability
:math:`\pi_{ij} = \Phi((s_i - s_j) / (\sqrt2\,\sigma_s))`. The rank distributions :math:`p_j(r)`
follow from Taylor et al.'s recursive insertion,
:math:`p_j^{(i)}(r) = p_j^{(i-1)}(r - 1)\,\pi_{ij} + p_j^{(i-1)}(r)\,(1 - \pi_{ij})`, from
:math:`p_j^{(0)} = \delta_0`. Smoothed metrics:

* position-additive (SoftNDCG@k, SoftPC@k, SoftRBP): :math:`\sum_j u_j \sum_r D(r + 1) p_j(r)`;
* pairwise (SoftAP, Yilmaz & Robertson 2010 section 4.1.2; SoftGAP with the pivot deltas
  :math:`\delta_{ij} = \sum_{t \le \min(l_i, l_j)} g_t` of Robertson, Kanoulas & Yilmaz 2010):
  :math:`\frac1Z \sum_j (\delta_{jj} + \sum_{i \ne j} \pi_{ij} \delta_{ij}) / (1 + \sum_{i \ne j} \pi_{ij})`.

Gradients are exact: by reverse-mode differentiation of the insertion recursion, or in closed
form for the pairwise metrics. As :math:`\sigma_s \to 0` each tends to the metric of the ranking.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.ltr.lambdas import DeltaContext, per_query_gradients

__all__ = ["beat_probabilities", "rank_distributions", "soft_metric", "softrank_gradients"]

_SQRT2 = np.sqrt(2.0)


def beat_probabilities(scores, sigma_s: float):
    r""":math:`\pi_{ij} = \Phi((s_i - s_j) / (\sqrt2 \sigma_s))` and its derivative.

    Parameters
    ----------
    scores : ndarray, shape (N,)
    sigma_s : float
        Standard deviation of the score noise, > 0.

    Returns
    -------
    pi : ndarray, shape (N, N)
        ``pi[i, j]`` = P(i beats j); the diagonal is 0 (a document does not beat itself).
    dpi : ndarray, shape (N, N)
        :math:`\partial \pi_{ij} / \partial s_i = \varphi(z_{ij}) / (\sqrt2 \sigma_s)`
        (and :math:`-` that w.r.t. :math:`s_j`); diagonal 0.
    """
    from scipy.special import ndtr

    if not sigma_s > 0:
        raise ParameterError(f"sigma_s must be > 0, got {sigma_s}")
    s = np.asarray(scores, dtype=np.float64)
    scale = 1.0 / (_SQRT2 * sigma_s)
    z = np.subtract.outer(s, s) * scale
    pi = ndtr(z)
    dpi = np.exp(-0.5 * z * z) * (scale / np.sqrt(2.0 * np.pi))
    np.fill_diagonal(pi, 0.0)
    np.fill_diagonal(dpi, 0.0)
    return pi, dpi


def _insert(pi: np.ndarray, cols: np.ndarray, keep: bool):
    """Final p (len(cols), N) of the insertion recursion, and the states before each step when ``keep``."""
    N = pi.shape[0]
    P = np.zeros((len(cols), N))
    P[:, 0] = 1.0
    hist = np.empty((N, len(cols), N)) if keep else None
    for i in range(N):              # the N insertion steps of the algorithm
        q = pi[i, cols][:, None]    # P(i beats j) for every j in the chunk (0 when i == j)
        if keep:
            hist[i] = P
        shifted = np.zeros_like(P)
        shifted[:, 1:] = P[:, :-1]
        P = P * (1.0 - q) + shifted * q
    return P, hist


def _chunk(N: int) -> int:
    return int(max(1, min(N, 4_000_000 // max(N * N, 1))))


def rank_distributions(scores, sigma_s: float) -> np.ndarray:
    r"""Rank distributions of SoftRank by recursive insertion (Taylor et al. 2008).

    Parameters
    ----------
    scores : ndarray, shape (N,)
    sigma_s : float

    Returns
    -------
    ndarray, shape (N, N)
        ``p[j, r]`` = probability that exactly r documents rank above j (rank r + 1);
        rows sum to 1.
    """
    pi, _ = beat_probabilities(scores, sigma_s)
    return _insert(pi, np.arange(len(pi)), keep=False)[0]


def _rank_metric(ctx, b, y, s, sigma_s, want_grad):
    pi, dpi = beat_probabilities(s, sigma_s)
    u, D = ctx.metric.positional_form(y, ctx.side, b)
    W = u[:, None] * D[None, :]                       # the metric is sum_j sum_r W[j, r] p_j(r)
    n = len(y)
    value = 0.0
    gpi = np.zeros((n, n)) if want_grad else None      # d metric / d pi[i, j]
    step = _chunk(n)
    for a in range(0, n, step):                       # chunks of documents j (memory bound)
        cols = np.arange(a, min(n, a + step))
        P, hist = _insert(pi, cols, keep=want_grad)
        value += float((W[cols] * P).sum())
        if not want_grad:
            continue
        adj = W[cols].copy()                          # adjoint of the final p_j
        for i in range(n - 1, -1, -1):                # insertion steps backwards
            Pp = hist[i]
            q = pi[i, cols][:, None]
            # d p_new / d q = shift(P) - P ;  adjoint of P: adj (1 - q) + adj[r + 1] q
            dq = (adj[:, 1:] * Pp[:, :-1]).sum(axis=1) - (adj * Pp).sum(axis=1)
            gpi[i, cols] = dq
            nxt = adj * (1.0 - q)
            nxt[:, :-1] += adj[:, 1:] * q
            adj = nxt
    return value, gpi, dpi


def _pi_metric(ctx, b, y, s, sigma_s, want_grad):
    pi, dpi = beat_probabilities(s, sigma_s)
    delta, Z = ctx.metric.pair_form(y, ctx.side, b)
    if Z <= 0:
        return 0.0, (np.zeros_like(pi) if want_grad else None), dpi
    num = np.diagonal(delta) + (pi * delta).sum(axis=0)     # delta_jj + sum_i pi_ij delta_ij
    den = 1.0 + pi.sum(axis=0)
    value = float((num / den).sum() / Z)
    gpi = None
    if want_grad:
        gpi = (delta / den[None, :] - (num / den ** 2)[None, :]) / Z
        np.fill_diagonal(gpi, 0.0)
    return value, gpi, dpi


def soft_metric(context: DeltaContext, scores, grades, *, row: int = 0, sigma_s: float = 1.0,
                gradient: bool = True):
    r"""SoftRank value of the context's metric for one query, and its gradient.

    Parameters
    ----------
    context : DeltaContext
        Metric with ``SMOOTH_FORM`` "positional" (nDCG, P@k, RBP) or "pairwise" (AP, GAP).
    scores, grades : ndarray, shape (n,)
        One query's documents (any order; no padding). Grade -1 = unjudged.
    row : int
        The query's row in ``context``.
    sigma_s : float
        Score noise standard deviation.
    gradient : bool
        Also return :math:`\partial M / \partial s`.

    Returns
    -------
    value : float
    grad : ndarray, shape (n,)
        Only with ``gradient``.
    """
    ctx = context.take(np.array([row]))
    y = np.asarray(grades).astype(np.int64)
    s = np.asarray(scores, dtype=np.float64)
    form = ctx.metric.SMOOTH_FORM
    if form == "positional":
        value, gpi, dpi = _rank_metric(ctx, 0, y, s, sigma_s, gradient)
    elif form == "pairwise":
        value, gpi, dpi = _pi_metric(ctx, 0, y, s, sigma_s, gradient)
    else:
        raise ParameterError(f"SoftRank needs a position-additive or pairwise metric (nDCG, P@k, "
                             f"RBP, AP, GAP), not {ctx.metric!s}")
    if not gradient:
        return value
    # pi_ij depends on s_i (+dpi) and s_j (-dpi)
    T = gpi * dpi
    return value, T.sum(axis=1) - T.sum(axis=0)


def softrank_gradients(scores, grades, context: DeltaContext, *, rows=None, lengths=None,
                       sigma_s: float = 1.0) -> np.ndarray:
    r"""Gradients :math:`\partial \mathrm{Soft}M / \partial s` (B, N) of a padded batch (ascent), in the
    calling convention of :func:`maxent.ltr.lambdas.lambda_gradients`; zero on padding."""
    return per_query_gradients(soft_metric, scores, grades, context, rows, lengths, sigma_s=sigma_s)
