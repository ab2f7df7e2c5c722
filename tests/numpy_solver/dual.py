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

from tests.numpy_solver.softmax import softmax_theta
from maxent.solver._engine import CONSTANTS as _K   # one definition: maxent/solver/_constants.h

__all__ = ["newton_dual"]

_ARMIJO = _K["ARMIJO"]


def _state(theta, WT, v, counts, active, grade_ok):
    """PT, dual value D, its rounding scale, gradient g (B, L+1), Hessian H (B, L+1, L+1)."""
    L = WT.shape[1]
    PT, lse = softmax_theta(theta, WT, active, grade_ok)
    a = np.where(grade_ok, theta[:, :L], 0.0)
    aK, bv = (a * counts).sum(axis=1), theta[:, L] * v
    D = lse.sum(axis=1) - aK - bv
    mag = np.abs(lse).sum(axis=1) + np.abs(aK) + np.abs(bv) + 1.0
    PW = PT * WT
    Wbar = PW.sum(axis=1)                                                     # (B, N)
    g = np.empty(theta.shape)
    g[:, :L] = PT.sum(axis=2) - counts
    g[:, L] = Wbar.sum(axis=1) - v
    B = len(theta)
    H = np.empty((B, L + 1, L + 1))
    H[:, :L, :L] = -(PT @ PT.transpose(0, 2, 1))
    H[:, np.arange(L), np.arange(L)] += PT.sum(axis=2)
    hab = PW.sum(axis=2) - (PT @ Wbar[:, :, None])[:, :, 0]                  # Cov(e_z, W)
    H[:, :L, L] = hab
    H[:, L, :L] = hab
    H[:, L, L] = (PW * WT).sum(axis=(1, 2)) - (Wbar * Wbar).sum(axis=1)
    # entropy of PT without logarithms: ln p_nz = a_z + b W_nz - lse_n
    ent = lse.sum(axis=1) - (a * (g[:, :L] + counts)).sum(axis=1) - theta[:, L] * (g[:, L] + v)
    return PT, D, mag, g, H, ent


def _dual_value(theta, WT, v, counts, active, grade_ok):
    L = WT.shape[1]
    _, lse = softmax_theta(theta, WT, active, grade_ok)
    a = np.where(grade_ok, theta[:, :L], 0.0)
    return lse.sum(axis=1) - (a * counts).sum(axis=1) - theta[:, L] * v


def newton_dual(WT, v, counts, active, grade_ok, theta0, *, tol=1e-10, max_iter=200,
                free_b=None, return_entropy=False):
    """Damped Newton on the dual D(theta), batched over problems.

    Parameters
    ----------
    WT : (B, L, N) feature weights dE/dp, category-major (0 at inactive ranks)
    v : (B,) target of sum W p
    counts : (B, L) K_z (sum to each length)
    active : (B, N) ranks inside each list;  grade_ok : (B, L) categories with K_z > 0
    theta0 : (B, L+1) starting multipliers [a_0..a_{L-1}, b] (a of the reference = 0)
    tol : float or (B,); stop when max |dual gradient| (= max constraint residual) <= tol (or, if larger,
        64 eps (length + |v| + 1), the rounding floor of the sums)
    max_iter : Newton steps at most
    free_b : (B,) bool, whether b is a variable (default all); b = theta0's b otherwise

    Returns
    -------
    theta (B, L+1), PT (B, L, N), nit (B,) int, residual (B,), stalled (B,) bool
    (line search could not decrease D: rounding floor reached, or the dual is unbounded),
    and, with ``return_entropy=True``, the entropy of PT (B,) computed without logarithms.
    """
    B, L, N = WT.shape
    theta = np.array(theta0, dtype=np.float64)
    ref = np.argmax(grade_ok, axis=1)
    free = np.zeros((B, L + 1), dtype=bool)
    free[:, :L] = grade_ok
    free[np.arange(B), ref] = False
    free[:, L] = True if free_b is None else free_b
    theta[:, :L] = np.where(free[:, :L], theta[:, :L], 0.0)
    PT = np.zeros((B, L, N))
    nit = np.zeros(B, dtype=np.int64)
    resid = np.full(B, np.inf)
    ent = np.zeros(B)
    stalled = np.zeros(B, dtype=bool)
    eye = np.eye(L + 1)
    # never ask for less than the rounding floor of the residual sums (~eps * length)
    tol_b = np.maximum(tol, 64 * np.finfo(float).eps * (counts.sum(axis=1) + np.abs(v) + 1.0))

    todo = np.arange(B)
    st = _state(theta, WT, v, counts, active, grade_ok)
    for _ in range(max_iter + 1):
        Pt, D, mag, g, H, en = st
        PT[todo] = Pt
        ent[todo] = en
        r = np.abs(g).max(axis=1)   # all counts (the reference's too) and the metric
        resid[todo] = r
        go = (r > tol_b[todo]) & (nit[todo] < max_iter)
        if not go.any():
            break
        sel = np.flatnonzero(go)
        todo = todo[sel]
        th, Wt, vt, Kt, at, gt, fr = (theta[todo], WT[todo], v[todo], counts[todo],
                                      active[todo], grade_ok[todo], free[todo])
        D, mag, g, H = D[sel], mag[sel], g[sel], H[sel]
        g = np.where(fr, g, 0.0)
        H = np.where(fr[:, :, None] & fr[:, None, :], H, eye)
        # ridge relative to each multiplier's own curvature (metric weights far below the
        # counts' scale, e.g. RBP's p^(n-1) deep in a list, keep their Newton steps), with the
        # largest diagonal's scale where a diagonal entry is negligible
        dg = np.abs(H[:, np.arange(L + 1), np.arange(L + 1)])
        big = dg.max(axis=1, keepdims=True)
        ridge = 1e-13 * np.where(dg > 1e-200 * big, dg, big) + 1e-300
        H = H + ridge[:, :, None] * eye
        step = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
        step = np.where(fr, step, 0.0)
        slope = (g * step).sum(axis=1)                                        # < 0
        slack = 1e-13 * mag
        # full step first; its state is kept for the next iteration when accepted
        new = _state(th + step, Wt, vt, Kt, at, gt)
        ok = np.isfinite(new[1]) & (new[1] <= D + _ARMIJO * slope + slack)
        t = np.ones(len(todo))
        accepted = ok.copy()
        for _ls in range(50):
            pend = np.flatnonzero(~accepted)
            if not len(pend):
                break
            t[pend] *= 0.5
            trial = th[pend] + t[pend, None] * step[pend]
            Dt = _dual_value(trial, Wt[pend], vt[pend], Kt[pend], at[pend], gt[pend])
            good = np.isfinite(Dt) & (Dt <= D[pend] + _ARMIJO * t[pend] * slope[pend] + slack[pend])
            accepted[pend[good]] = True
        stall = ~accepted
        t = np.where(stall, 0.0, t)
        theta[todo] = th + t[:, None] * step
        nit[todo] += 1
        stalled[todo] = stall
        back = np.flatnonzero(~ok & accepted)
        keep = ~stall
        if len(back):
            redo = _state(theta[todo[back]], Wt[back], vt[back], Kt[back], at[back], gt[back])
            new = tuple(np.array(x) for x in new)
            for x, y in zip(new, redo):
                x[back] = y
        todo = todo[keep]
        st = tuple(x[keep] for x in new)
    if return_entropy:
        return theta, PT, nit, resid, stalled, ent
    return theta, PT, nit, resid, stalled
