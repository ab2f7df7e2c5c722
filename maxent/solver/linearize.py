r"""Successive linearisation for metrics non-linear in p (AP, GAP, RR, ERR, ...).

Method (a sequential linearly-constrained method with an exact-penalty line search)
-----------------------------------------------------------------------------------
At the iterate p_k (which satisfies the count constraints), the metric constraint is
linearised: W_k = dE/dp(p_k), v_k = v - E(p_k) + <W_k, p_k>. The subproblem

    max H(p)  s.t.  counts,  <W_k, p> = v_k

is the convex problem of :mod:`maxent.solver.dual`, solved exactly by damped Newton on its
dual (warm-started at the previous multipliers), giving p_lin = softmax(a + b W_k). The step
d = p_lin - p_k is taken with a length t in (0, 1] chosen by Armijo backtracking on the
exact (L1) penalty merit function

    phi(p) = -H(p) + mu |E(p) - v|,   mu >= 2 |b| + 1 (non-decreasing).

Why this reaches a KKT point. (i) Fixed points are KKT points: if p_lin = p_k then
p_k = softmax(a + b dE/dp(p_k)) and E(p_k) = v, the first-order conditions of the original
problem. (ii) d is a descent direction of phi whenever mu > |b|: by strict concavity of H
and the optimality of p_lin for the subproblem (the a-terms vanish because d preserves the
counts), -<grad H(p_k), d> <= b <W_k, d> - sigma |d|^2 = b (v - E(p_k)) - sigma |d|^2, and
the penalty's directional derivative is -mu |E(p_k) - v|; so
phi'(p_k; d) <= (|b| - mu)|E(p_k) - v| - sigma |d|^2 < 0 unless d = 0. This is the descent
property on which the global convergence of SQP with an exact penalty rests (Han 1977):
with bounded multipliers every limit point of the iterates is a KKT point. Convergence is
linear (the subproblem ignores the curvature of E), fast in practice because b dE^2/dp^2 is
small compared with the entropy's curvature for real targets.

What is guaranteed and checked. Every iterate satisfies the count constraints. The status
``optimal`` is given only when, at the returned p (= p_lin, of exact exponential form), the
constraint residual is <= tol and the stationarity residual (in log-odds, exact because
p_lin = softmax(a + b W_k) exactly)
max_{n,z} |ln p_n(z)/p_n(ref) - (a_z + b (W_n(z) - W_n(ref)))| with W = dE/dp(p_lin),
i.e. |b| max |(W(p_lin) - W_k)_n(z) - (W(p_lin) - W_k)_n(ref)|, is <= kkt_tol — a
certificate, not an assumption. The
problem is non-convex, so the KKT point is a local maximiser (tests compare it with a
general-purpose optimiser from random starts on small instances). When the subproblem
target v_k is outside the range of <W_k, p> the subproblem is infeasible; v_k is then
moved 99% of the way from <W_k, p_k> to the nearer end of [<W_k, p_bot>, <W_k, p_top>]
(the two deterministic extreme lists are feasible points, so the moved subproblem is
feasible; a fraction-to-boundary rule as in interior-point methods), and the step still
moves towards the target (elastic mode).
"""
from __future__ import annotations

import numpy as np

from maxent.solver._problem import Batch, entropy, softmax_theta
from maxent.solver.dual import newton_dual

__all__ = ["linearize"]

_INNER_ITER = 40
_COLD_RES = 10.0   # a subproblem left with a dual residual above this (and worse p) is solved again cold
_COLD_ITER = 200   # dual Newton steps of a subproblem solved again from the count-only start
_ELASTIC = 0.99   # an unreachable subproblem target goes this fraction of the way


def stationarity(theta, W_new, W_old, grade_ok, ref):
    """Log-odds KKT residual of p = softmax(theta, W_old) w.r.t. the gradient W_new, (B,)."""
    dW = W_new - W_old                                                      # (B, L, N)
    dW -= np.take_along_axis(dW, ref[:, None, None], axis=1)
    dW = np.abs(dW) * grade_ok[:, :, None]
    return np.abs(theta[:, -1]) * dW.max(axis=(1, 2), initial=0.0)


def linearize(batch: Batch, *, tol=1e-10, kkt_tol=1e-9, max_iter=200, far_tol=1e-8):
    """Solve a batch of (interior) problems by successive linearisation.

    ``far_tol``: dual residual of the inexact subproblems solved while far from
    stationarity (a looser value makes a cheaper starting point for another method).

    Returns theta (B, L+1), PT (B, L, N), nit (B,), converged (B,) bool, stationarity (B,).
    """
    B = len(batch)
    v = batch.target
    P = batch.uniform()
    theta = batch.theta_uniform()
    E = batch.expectation(P)
    W = batch.features(P)
    out_P = P.copy()
    out_theta = theta.copy()
    nit = np.zeros(B, dtype=np.int64)
    conv = np.zeros(B, dtype=bool)
    stat = np.full(B, np.inf)
    mu = np.ones(B)
    H = entropy(P)
    todo = np.arange(B)
    sub = batch
    P_top, P_bot = batch.extreme(True), batch.extreme(False)
    for _ in range(max_iter):
        cur = (W * P).sum(axis=(1, 2))
        vk = v[todo] - E + cur
        hi = (W * P_top).sum(axis=(1, 2))
        lo = (W * P_bot).sum(axis=(1, 2))
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        # fraction-to-boundary rule: an unreachable subproblem target moves most of the way
        vk = np.where(vk > hi, cur + _ELASTIC * (hi - cur), vk)
        vk = np.where(vk < lo, cur + _ELASTIC * (lo - cur), vk)
        # inexact subproblems while far from stationarity, exact ones near the end
        inner_tol = np.where(stat[todo] > 1e-5, far_tol, 0.1 * tol)
        th_l, P_l, _, dres, _, H_l = newton_dual(W, vk, sub.counts, sub.active, sub.grade_ok,
                                                 theta, tol=inner_tol, max_iter=_INNER_ITER,
                                                 return_entropy=True)
        E_l = sub.expectation(P_l)
        # a warm start far from the subproblem's multipliers can leave its dual unsolved (p
        # off the counts, which no step repairs): one whose residual stays above _COLD_RES
        # and whose p is worse than the iterate on the merit is solved again from the
        # count-only multipliers (kept if its dual residual is lower)
        m_t = np.maximum(mu[todo], 2.0 * np.abs(th_l[:, -1]) + 1.0)
        bad = np.flatnonzero((dres > _COLD_RES)
                             & (-H_l + m_t * np.abs(E_l - v[todo]) > -H + m_t * np.abs(E - v[todo])))
        if len(bad):
            s_b = sub.take(bad)
            it_b = inner_tol[bad]
            tb, pb, _, rb, _, hb = newton_dual(W[bad], vk[bad], s_b.counts, s_b.active, s_b.grade_ok,
                                               s_b.theta_uniform(), tol=it_b, max_iter=_COLD_ITER,
                                               return_entropy=True)
            lower = rb < dres[bad]
            bb = bad[lower]
            th_l[bb], P_l[bb], H_l[bb] = tb[lower], pb[lower], hb[lower]
            E_l[bb] = s_b.take(np.flatnonzero(lower)).expectation(pb[lower])
        W_l = sub.features(P_l)
        st = stationarity(th_l, W_l, W, sub.grade_ok, sub.ref)
        cres = sub.residuals(P_l, E_l)
        nit[todo] += 1
        out_P[todo] = P_l
        out_theta[todo] = th_l
        stat[todo] = st
        done = (cres <= tol) & (st <= kkt_tol)
        conv[todo[done]] = True
        # ---- step with an Armijo line search on the exact-penalty merit. The reference
        # slope is the bound (|b| - mu)|E - v| >= phi'(p; d) proven above (no logarithms).
        d = P_l - P
        m = np.maximum(mu[todo], 2.0 * np.abs(th_l[:, -1]) + 1.0)
        mu[todo] = m
        phi0 = -H + m * np.abs(E - v[todo])
        slope = (np.abs(th_l[:, -1]) - m) * np.abs(E - v[todo])
        t = np.ones(len(todo))
        phi_t = -H_l + m * np.abs(E_l - v[todo])
        # rounding allowance: entropy sums and a penalty on |E - v| below the tolerance
        slack = 1e-12 * (np.abs(phi0) + 1.0) + 2.0 * m * tol
        ok = (phi_t <= phi0 + 1e-4 * slope + slack) | done
        Pn, En, Wn, Hn = P_l, E_l, W_l, H_l
        for _ls in range(30):
            pend = np.flatnonzero(~ok)
            if not len(pend):
                break
            t[pend] *= 0.5
            Pt = P[pend] + t[pend, None, None] * d[pend]
            Et = sub.take(pend).expectation(Pt)
            Ht = entropy(Pt)
            phi_t = -Ht + m[pend] * np.abs(Et - v[todo[pend]])
            good = phi_t <= phi0[pend] + 1e-4 * t[pend] * slope[pend] + slack[pend]
            ok[pend[good]] = True
            Pn[pend], En[pend], Hn[pend] = Pt, Et, Ht
        moved = np.flatnonzero(t < 1.0)
        if len(moved):
            Wn[moved] = sub.take(moved).features(Pn[moved])
        keep = ~done
        todo = todo[keep]
        if not len(todo):
            break
        sub = sub.take(np.flatnonzero(keep))
        P, E, W, theta, H = Pn[keep], En[keep], Wn[keep], th_l[keep], Hn[keep]
        P_top, P_bot = P_top[keep], P_bot[keep]
    return out_theta, out_P, nit, conv, stat
