r"""ApproxRank: metrics with smoothed positions (Qin, Liu & Li 2010).

The position of document x, :math:`\pi(x) = 1 + \sum_{y \ne x} 1\{s_x - s_y < 0\}`, is smoothed
with a logistic of scale :math:`\alpha` (section 3.3),

.. math:: \hat\pi(x) = 1 + \sum_{y \ne x} \mathrm{sigmoid}(-\alpha (s_x - s_y)),

and a cutoff k by :math:`t_k(x) = \mathrm{sigmoid}(\beta (k + 0.5 - \hat\pi(x)))` (section 3.4).
A position-additive metric (``metric.positional_form``: nDCG, P@k, RBP) becomes
:math:`\sum_x u_x D(\hat\pi(x)) t_k(x)` (ApproxNDCG, eq. 9; ApproxPrecision, eq. 5); a metric of
pairwise form (``metric.pair_factors``: AP, GAP) becomes
:math:`\frac1Z \sum_y \frac{1}{\hat\pi(y)}\big(\delta_{yy} + \sum_{x \ne y} \delta_{yx}
\mathrm{sigmoid}(\beta (\hat\pi(y) - \hat\pi(x)))\big)` (ApproxAP, eq. 7, with
:math:`\delta = rel\,rel^T`, Z = R; GAP with the pivot deltas of Robertson, Kanoulas & Yilmaz 2010).
Defaults alpha 100, beta 10; as they grow the approximations tend to the metric (theorems 1-2).
Gradients are exact, by the chain rule through :math:`\hat\pi`.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.ltr.lambdas import DeltaContext, per_query_gradients

__all__ = ["approx_positions", "approx_metric", "approxrank_gradients", "approx_values"]


def approx_positions(scores, alpha: float):
    r"""Smoothed positions :math:`\hat\pi` (1-based) and the pair slopes S.

    Parameters
    ----------
    scores : ndarray, shape (N,)
    alpha : float
        Logistic scale, > 0.

    Returns
    -------
    pi_hat : ndarray, shape (N,)
    S : ndarray, shape (N, N)
        :math:`\alpha \sigma(u)(1-\sigma(u))`, :math:`u = \alpha (s_x - s_y)`; diagonal 0.
    """
    from scipy.special import expit

    if not alpha > 0:
        raise ParameterError(f"alpha must be > 0, got {alpha}")
    s = np.asarray(scores, dtype=np.float64)
    u = np.subtract.outer(s, s)
    u *= -alpha
    sg = expit(u)                          # sigmoid(-alpha (s_x - s_y))
    np.fill_diagonal(sg, 0.0)
    pi_hat = 1.0 + sg.sum(axis=1)
    S = alpha * sg * (1.0 - sg)
    return pi_hat, S


def approx_metric(context: DeltaContext, scores, grades, *, row: int = 0, alpha: float = 100.0,
                  beta: float = 10.0, gradient: bool = True):
    r"""ApproxRank value of the context's metric for one query, and its gradient.

    Parameters
    ----------
    context : DeltaContext
        Metric with ``SMOOTH_FORM`` "positional" (nDCG, P@k, RBP) or "pairwise" (AP, GAP).
    scores, grades : ndarray, shape (n,)
        One query (any order, no padding); grade -1 = unjudged.
    row : int
        The query's row in ``context``.
    alpha, beta : float
        Position and truncation logistic scales.
    gradient : bool

    Returns
    -------
    value : float
    grad : ndarray, shape (n,)
        :math:`\partial M / \partial s` (only with ``gradient``).
    """
    from scipy.special import expit

    if not beta > 0:
        raise ParameterError(f"beta must be > 0, got {beta}")
    ctx = context.take(np.array([row]))
    metric = ctx.metric
    y = np.asarray(grades).astype(np.int64)
    ph, S = approx_positions(scores, alpha)
    form = metric.SMOOTH_FORM
    if form == "positional":
        # M = sum_x u_x D(pi_hat(x)) t_k(x): smooth discount D and truncation t_k
        u, _ = metric.positional_form(y, ctx.side, 0)
        D, dD = metric.smooth_discount(ph)
        f = u * D
        df = u * dD
        k = metric.delta_depth()
        if k is not None:
            t = expit(beta * (k + 0.5 - ph))
            g = df * t - f * beta * t * (1.0 - t)
            f = f * t
        else:
            g = df
        value = float(f.sum())
    elif form == "pairwise":
        # M = (1/Z) sum_y (delta_yy + sum_{x != y} delta_yx T_yx) / pi_hat(y), T_yx the smooth
        # indicator that x ranks before y (AP: delta = rel rel^T, Z = R; GAP: pivot deltas)
        V, w, Z = metric.pair_factors(y, ctx.side, 0)   # delta = sum_k w_k v_k v_k^T (K rows)
        if Z <= 0:
            return (0.0, np.zeros_like(ph)) if gradient else 0.0
        T = expit(beta * np.subtract.outer(ph, ph))       # T[y, x]: x ranked before y
        np.fill_diagonal(T, 0.0)
        Vt = V.T                                          # (n, K)
        A = Vt @ w + (Vt * (T @ Vt)) @ w                  # delta_yy + sum_x delta_yx T_yx
        value = float((A / ph).sum() / Z)
        dT = beta * T * (1.0 - T)
        np.fill_diagonal(dT, 0.0)
        c = 1.0 / ph
        # d/d ph_y: -A_y / ph_y^2 + c_y sum_x delta_yx dT_yx - sum_y' c_y' delta_y'y dT_y'y
        own = (Vt * (dT @ Vt)) @ w
        other = (Vt * (dT.T @ (c[:, None] * Vt))) @ w
        g = (-A / ph ** 2 + c * own - other) / Z
    else:
        raise ParameterError(f"ApproxRank needs a position-additive or pairwise metric (nDCG, P@k, "
                             f"RBP, AP, GAP), not {metric!s}")
    if not gradient:
        return value
    return value, S @ g - g * S.sum(axis=1)


def approxrank_gradients(scores, grades, context: DeltaContext, *, rows=None, lengths=None,
                         alpha: float = 100.0, beta: float = 10.0) -> np.ndarray:
    r"""Gradients :math:`\partial \widehat M / \partial s` (B, N) of a padded batch (ascent), in the
    calling convention of :func:`maxent.ltr.lambdas.lambda_gradients`; zero on padding."""
    return per_query_gradients(approx_metric, scores, grades, context, rows, lengths,
                               alpha=alpha, beta=beta)


def approx_values(context: DeltaContext, scores, grades, lengths, alphas, *, beta: float = 10.0) -> np.ndarray:
    """ApproxRank values (len(alphas), B) of a padded batch at several alphas (the approximation
    error curves of Qin et al. 2010, Figs. 1-2); ``context`` has one row per list."""
    scores = np.asarray(scores, dtype=np.float64)
    out = np.empty((len(alphas), len(scores)))
    for b in range(len(scores)):                       # per list (each is an n x n computation)
        n = int(lengths[b])
        for a, alpha in enumerate(alphas):
            out[a, b] = approx_metric(context, scores[b, :n], grades[b, :n], row=b, alpha=alpha, beta=beta,
                                      gradient=False)
    return out
