r"""Exact convex dual of the maximum-entropy problem for a metric linear in p.

For weights W_n(z) = dE/dp_n(z) (constant when E is linear in p), the problem

.. math:: \max_p -\sum_{n,z} p_n(z)\ln p_n(z) \;\text{s.t.}\; \sum_z p_n(z) = 1,\;
          \sum_n p_n(z) = K_z\ (z \ge 1),\; \sum_{n,z} W_n(z) p_n(z) = v

has the smooth convex dual in the multipliers theta = (a_1..a_c, b) (a_0 = 0)

.. math:: D(\theta) = \sum_n \ln\sum_z e^{a_z + b W_n(z)} - \sum_z a_z K_z - b v,

whose minimiser gives :math:`p_n(z) = \mathrm{softmax}_z(a_z + b W_n(z))` (binary: the
sigmoid :math:`p_n = \sigma(a + b W_n)`). The gradient of D is the constraint residual
and its Hessian the (1+c) x (1+c) covariance of the features (e_z, W_n(z)) summed over
ranks, so damped Newton (Armijo backtracking on D) converges globally and quadratically
near the optimum whenever the target is strictly inside the attainable range (then the
dual minimum exists; strong duality holds by Slater's condition). The small systems of all
B problems are solved at once with :func:`numpy.linalg.solve` on stacked matrices.
"""
from __future__ import annotations

import numpy as np

from maxent.solver._problem import softmax_theta

__all__ = ["newton_dual"]

_ARMIJO = 1e-4


def _state(theta, W, v, counts, active, grade_ok):
    """P, dual value D, gradient g (B, L+1) and Hessian H (B, L+1, L+1) at theta."""
    L = W.shape[2]
    P, lse = softmax_theta(theta, W, active, grade_ok)
    a = np.where(grade_ok, theta[:, :L], 0.0)
    D = lse.sum(axis=1) - (a * counts).sum(axis=1) - theta[:, L] * v
    PW = P * W
    Wbar = PW.sum(axis=2)                                                     # (B, N)
    g = np.empty(theta.shape)
    g[:, :L] = P.sum(axis=1) - counts
    g[:, L] = PW.sum(axis=(1, 2)) - v
    B = len(theta)
    H = np.empty((B, L + 1, L + 1))
    H[:, :L, :L] = -np.einsum("bnz,bny->bzy", P, P)
    H[:, np.arange(L), np.arange(L)] += P.sum(axis=1)
    hab = PW.sum(axis=1) - np.einsum("bnz,bn->bz", P, Wbar)                  # Cov(e_z, W)
    H[:, :L, L] = hab
    H[:, L, :L] = hab
    H[:, L, L] = (PW * W).sum(axis=(1, 2)) - (Wbar * Wbar).sum(axis=1)
    return P, D, g, H


def _dual_value(theta, W, v, counts, active, grade_ok, scale=False):
    L = W.shape[2]
    _, lse = softmax_theta(theta, W, active, grade_ok)
    a = np.where(grade_ok, theta[:, :L], 0.0)
    aK, bv = (a * counts).sum(axis=1), theta[:, L] * v
    D = lse.sum(axis=1) - aK - bv
    if scale:  # magnitude of the summands: the rounding floor of D is ~1e-16 of it
        return D, np.abs(lse).sum(axis=1) + np.abs(aK) + np.abs(bv) + 1.0
    return D


def newton_dual(W, v, counts, active, grade_ok, theta0, *, tol=1e-10, max_iter=200,
                free_b=None):
    """Damped Newton on the dual D(theta), batched over problems.

    Parameters
    ----------
    W : (B, N, L) feature weights dE/dp (0 at inactive ranks)
    v : (B,) target of sum W p
    counts : (B, L) K_z (sum to each length)
    active : (B, N) ranks inside each list;  grade_ok : (B, L) categories with K_z > 0
    theta0 : (B, L+1) starting multipliers [a_0..a_{L-1}, b] (a of the reference = 0)
    tol : stop when max |dual gradient| (= max constraint residual) <= tol
    max_iter : Newton steps at most
    free_b : (B,) bool, whether b is a variable (default all); b = theta0's b otherwise

    Returns
    -------
    theta (B, L+1), P (B, N, L), nit (B,) int, residual (B,), stalled (B,) bool
    (line search could not decrease D: rounding floor reached, or the dual is unbounded).
    """
    B, N, L = W.shape
    theta = np.array(theta0, dtype=np.float64)
    ref = np.argmax(grade_ok, axis=1)
    free = np.zeros((B, L + 1), dtype=bool)
    free[:, :L] = grade_ok
    free[np.arange(B), ref] = False
    free[:, L] = True if free_b is None else free_b
    theta[:, :L] = np.where(free[:, :L], theta[:, :L], 0.0)
    P = np.zeros((B, N, L))
    nit = np.zeros(B, dtype=np.int64)
    resid = np.full(B, np.inf)
    stalled = np.zeros(B, dtype=bool)
    todo = np.arange(B)
    eye = np.eye(L + 1)
    for _ in range(max_iter + 1):
        if not len(todo):
            break
        th, Wt, vt, Kt, at, gt, fr = (theta[todo], W[todo], v[todo], counts[todo],
                                      active[todo], grade_ok[todo], free[todo])
        Pt, D, g, H = _state(th, Wt, vt, Kt, at, gt)
        P[todo] = Pt
        r = np.abs(g).max(axis=1)   # all counts (the reference's too) and the metric
        resid[todo] = r
        go = (r > tol) & (nit[todo] < max_iter)
        if not go.any():
            break
        sel = np.flatnonzero(go)
        todo = todo[sel]
        th, Wt, vt, Kt, at, gt, fr = th[sel], Wt[sel], vt[sel], Kt[sel], at[sel], gt[sel], fr[sel]
        D, g, H = D[sel], g[sel], H[sel]
        g = np.where(fr, g, 0.0)
        both = fr[:, :, None] & fr[:, None, :]
        H = np.where(both, H, eye)
        diag = np.abs(H[:, np.arange(L + 1), np.arange(L + 1)]).max(axis=1)
        H = H + (1e-13 * diag + 1e-300)[:, None, None] * eye
        step = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
        step = np.where(fr, step, 0.0)
        slope = (g * step).sum(axis=1)                                        # < 0
        t = np.ones(len(todo))
        accepted = np.zeros(len(todo), dtype=bool)
        _, mag = _dual_value(th, Wt, vt, Kt, at, gt, scale=True)
        slack = 1e-13 * mag
        for _ls in range(50):
            pend = np.flatnonzero(~accepted)
            if not len(pend):
                break
            trial = th[pend] + t[pend, None] * step[pend]
            Dt = _dual_value(trial, Wt[pend], vt[pend], Kt[pend], at[pend], gt[pend])
            ok = np.isfinite(Dt) & (Dt <= D[pend] + _ARMIJO * t[pend] * slope[pend] + slack[pend])
            accepted[pend[ok]] = True
            t[pend[~ok]] *= 0.5
        stall = ~accepted
        t = np.where(stall, 0.0, t)
        theta[todo] = th + t[:, None] * step
        nit[todo] += 1
        stalled[todo] = stall
        todo = todo[~stall]
    return theta, P, nit, resid, stalled
