r"""Successive linearisation for metrics non-linear in p (AP, GAP, RR, ERR, ...).

Method (a sequential linearly-constrained method with an exact-penalty line search)
-----------------------------------------------------------------------------------
At the iterate p_k (which satisfies the count constraints), the metric constraint is
linearised: W_k = dE/dp(p_k), v_k = v - E(p_k) + <W_k, p_k>. The subproblem

    max H(p)  s.t.  counts,  <W_k, p> = v_k

is the convex problem of :mod:`tests.numpy_solver.dual`, solved exactly by damped Newton on its
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

Damping. Where b dE^2/dp^2 is not small (targets near an end of the range, |b| ~ 1e4-1e5),
the full steps can overshoot the KKT point by about as much as they move, and the iterates
then oscillate around it for thousands of steps (the metric multiplier b alternating, e.g.
trec_dl19_passage ICT-BERT2, topic 1114819, GAP(g=0.1,0.8,0.1): b between 57,900 and 58,000
after 2,000 steps). When b's change reverses sign and is larger than half the previous one,
the first trial step of that problem is halved (down to 1/64), and it grows by 1.25 per step
that does not reverse, back to 1. A damped fixed-point iteration contracts where the undamped
one oscillates (the map's slope near -1 becomes about 0 at t = 1/2), and every step is still
a descent step of the merit function with the Armijo test, so the convergence argument above
is unchanged (that problem: certified in 25 steps).
"""
from __future__ import annotations

import numpy as np

from maxent.solver._problem import Batch, entropy
from tests.numpy_solver.softmax import softmax_theta
from tests.numpy_solver.dual import newton_dual
from maxent.solver._engine import CONSTANTS as _K   # one definition: maxent/solver/_constants.h

__all__ = ["linearize"]

_INNER_ITER = _K["INNER_ITER"]
_COLD_RES = _K["COLD_RES"]   # a subproblem left with a dual residual above this (and worse p) is solved again cold
_COLD_ITER = _K["COLD_ITER"]   # dual Newton steps of a subproblem solved again from the count-only start
_ELASTIC = _K["ELASTIC"]   # an unreachable subproblem target goes this fraction of the way
_MIN_STEP = _K["MIN_STEP"]   # the smallest first trial step of a damped (oscillating) problem
_W_ULPS = _K["W_ULPS"]           # rounding allowance of dE/dp in the stationarity certificate (ulps)


def stationarity(theta, W_new, W_old, grade_ok, ref):
    """Log-odds KKT residual of p = softmax(theta, W_old) w.r.t. the gradient W_new, (B,),
    beyond the rounding of the gradient: |b| max(0, max |dW| - _W_ULPS ulp(max |W_new|)).

    The computed dE/dp carries rounding errors of a few ulps of its largest entries, so at
    an exact KKT point the measured log-odds residual |b| max |dW| can reach |b| times that
    rounding: negligible for ordinary multipliers (|b| = 1e4: 4e-11), but not for targets
    within ~1e-8 of an end of the range, where |b| ~ 1e8-1e9 (ERR lists whose top documents
    are all of the highest grade; e.g. bundled list 163: |b| = 7.1e8, the iterates fixed to
    the last digit, |dW| ~ 5e-17, residual 3e-8 without this allowance)."""
    dW = W_new - W_old                                                      # (B, L, N)
    dW -= np.take_along_axis(dW, ref[:, None, None], axis=1)
    dW = np.abs(dW) * grade_ok[:, :, None]
    scale = (np.abs(W_new) * grade_ok[:, :, None]).max(axis=(1, 2), initial=0.0)
    beyond = dW.max(axis=(1, 2), initial=0.0) - _W_ULPS * np.finfo(float).eps * scale
    return np.abs(theta[:, -1]) * np.maximum(beyond, 0.0)


def linearize(batch: Batch, *, tol=1e-10, kkt_tol=1e-9, max_iter=200, far_tol=_K["FAR_TOL"]):
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
    t_first = np.ones(B)          # first trial step (damping, see the module docstring)
    b_last, db_last = theta[:, -1].copy(), np.zeros(B)
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
        db = th_l[:, -1] - b_last[todo]
        reverses = (db * db_last[todo] < 0) & (np.abs(db) > 0.5 * np.abs(db_last[todo]))
        t_first[todo] = np.where(reverses, np.maximum(0.5 * t_first[todo], _MIN_STEP),
                                 np.minimum(1.25 * t_first[todo], 1.0))
        b_last[todo], db_last[todo] = th_l[:, -1], db
        t = t_first[todo].copy()
        Pn, En, Wn, Hn = P_l, E_l, W_l, H_l
        damped = np.flatnonzero(t < 1.0)
        if len(damped):                        # (out_P keeps p_lin: copies from here on)
            Pn, En, Hn = P_l.copy(), E_l.copy(), H_l.copy()
            Pn[damped] = P[damped] + t[damped, None, None] * d[damped]
            En[damped] = sub.take(damped).expectation(Pn[damped])
            Hn[damped] = entropy(Pn[damped])
        phi_t = -Hn + m * np.abs(En - v[todo])
        # rounding allowance: entropy sums and a penalty on |E - v| below the tolerance
        slack = 1e-12 * (np.abs(phi0) + 1.0) + 2.0 * m * tol
        ok = (phi_t <= phi0 + 1e-4 * t * slope + slack) | done
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
