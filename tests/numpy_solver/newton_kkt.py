r"""Newton on the full optimality system for AP-like metrics (AP, AP@k, GAP).

Why. Successive linearisation (:mod:`tests.numpy_solver.linearize`) ignores the curvature of
E[M] and converges linearly, slowly when |b| is large. E[AP] and E[GAP] are quadratic in p
with a Hessian of prefix-sum structure, so Newton's method on the KKT system (p and the
multipliers together) costs O(N) per step and converges quadratically.

Variables. For one problem let z_0 < ... < z_{L'-1} be the categories with K_z > 0 and
Q'_r = sum_{i >= r} p(z_i), r = 1..L'-1 (binary: Q'_1 = q). The rows sum to 1 by
construction; the count constraints are sum_n Q'_{n,r} = C_r = sum_{i>=r} K_{z_i}. The metric
enters only through Q_j = P(category >= j), each equal to some Q'_r (or a constant), and
(``metric.prefix_hessian``)

.. math:: \frac{\partial^2 E}{\partial Q_{n,j} \partial Q_{m,j}} = \kappa_j (f_{\max(n,m)} - [n=m] f_n),

no cross-threshold terms, f_n = [n <= cutoff]/n non-increasing. KKT (maximum entropy):
F_{n,r} = ln p(z_{r-1}) - ln p(z_r) + alpha_r + b G'_{n,r} = 0 with G'_r = W(z_r) - W(z_{r-1}),
W = dE/dp, plus the count and metric constraints.

Newton step. With A = E_H - b Hess (E_H the entropy Hessian in Q': per rank a tridiagonal
(L'-1)^2 block, 1/p(z_{r-1}) + 1/p(z_r) on the diagonal, -1/p(z_r) off it):
A dQ' = F + sum_r dalpha_r 1_r + db G'; the constraints then give an L' x L' system per
problem for (dalpha, db) (Schur complement). A is dense (f_{max(n,m)}) but with
M = (f_{max(n,m)}) = U diag(w) U^T, U the suffix-sum operator, w_n = f_n - f_{n+1}, the
change of variables y = prefix sums of dQ' turns A into the *block-tridiagonal*

.. math:: T = P^{-T} E' P^{-1} - b\, \mathrm{diag}(w) \otimes \mathrm{diag}(\kappa'),
          \quad E'_n = E_{H,n} + b f_n \mathrm{diag}(\kappa')

(P the prefix-sum operator), solved for a whole batch at once as one banded system (LAPACK
``pbsv`` Cholesky, or ``gbsv`` when T is not positive definite) of B*N*(L-1) unknowns with
(L-1) + 1 bands: O(N) per problem and right-hand side.

Globalisation and certificate. The start is two steps of successive linearisation (the
first is the linear relaxation: the convex problem with W = dE/dp at the count-only
distribution). Steps update p in log space, p(z) <- p(z) exp(t l(z)) with rows renormalised
(p stays positive), where the log-step l = dp/p is recovered from the per-rank equations
E_H dQ' = F + dalpha + db G' + b Hess dQ' (accurate also where p is tiny, where dQ' itself is
only accurate in absolute terms); t by Armijo backtracking on the squared KKT residual (the
Newton direction is a descent direction of it). An iterate is certified when its count and
metric residuals are <= tol and its log-odds stationarity residual against the reference
category, max |ln p_n(z)/p_n(ref) - (a_z + b (W_n(z) - W_n(ref)))| with W = dE/dp(p) itself,
is <= kkt_tol (the same certificate as :mod:`tests.numpy_solver.linearize`). Iterates whose line
search stalls, or still open at the last step, are polished by one exact linearised
subproblem (the convex dual) and certified like a linearisation step. Problems not certified
within ``max_iter`` steps (in practice targets within ~1e-4 of the minimum, |b| ~ 1e4-1e5,
where the start is far from the solution) are returned unconverged, and
:func:`maxent.solver.solve` hands them to successive linearisation.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, solve_banded, solveh_banded

from maxent.solver._problem import Batch
from tests.numpy_solver.dual import newton_dual
from tests.numpy_solver.linearize import linearize, stationarity
from maxent.solver._engine import CONSTANTS as _K   # one definition: maxent/solver/_constants.h

__all__ = ["newton_kkt", "supports"]

_ELASTIC = _K["ELASTIC"]
_LS_STEPS = _K["LS_STEPS"]
_P_FLOOR = _K["P_FLOOR"]
_START_TOL = _K["START_TOL"]   # dual residual of the linearisation steps that make the start
_MAX_EXP = 30.0     # |dp/p| per step at most this (multiplicative update)
_PINV_MAX = _K["PINV_MAX"]    # entropy-Hessian entries 1/p capped here (a modified Newton at tiny p)


def supports(metric) -> bool:
    """Whether the metric has the prefix-structured Hessian this method needs (its declared
    ``SOLVER_FORM``)."""
    return metric.SOLVER_FORM == "prefix"


class _Reduced:
    """Per-problem reduced coordinates: populated categories, slot maps, kappa', w."""

    def __init__(self, batch: Batch):
        B, L = batch.counts.shape
        N = batch.active.shape[1]
        ok = batch.grade_ok
        self.J = J = L - 1
        # populated categories first, in increasing order (stable sort of ~ok)
        self.order = np.argsort(~ok, axis=1, kind="stable")                 # (B, L)
        self.Lp = ok.sum(axis=1)                                            # (B,)
        s = np.arange(J)
        self.valid = (s[None, :] + 1) < self.Lp[:, None]                    # (B, J)
        self.hi = self.order[:, 1:]                                         # z_{s+1}
        self.lo = self.order[:, :-1]                                        # z_s
        # C_r = sum_{i >= r} K_{z_i}
        Ko = np.take_along_axis(batch.counts, self.order, axis=1) * np.take_along_axis(ok, self.order, axis=1)
        tail = np.cumsum(Ko[:, ::-1], axis=1)[:, ::-1]
        self.C = tail[:, 1:] * self.valid                                   # (B, J)
        js, kappa, f = batch.metric.prefix_hessian(batch.lists)
        kappa = np.asarray(kappa, dtype=np.float64).reshape(B, -1)
        # threshold j (category space) -> slot r-1 where r = #populated categories < j
        cnt = np.cumsum(ok, axis=1)                                         # populated <= z
        kp = np.zeros((B, J))
        for col, j in enumerate(js):                                        # a few thresholds
            r = cnt[:, j - 1]                                               # populated < j
            var = (r >= 1) & (r < self.Lp)
            np.add.at(kp, (np.flatnonzero(var), r[var] - 1), kappa[var, col])
        self.kappa = kp                                                     # (B, J)
        f = np.asarray(f, dtype=np.float64)[:N]
        n = np.arange(N)
        length = batch.lists.lengths.astype(np.int64)
        last = n[None, :] == (length - 1)[:, None]
        f_next = np.concatenate((f[1:], [0.0]))
        self.w = np.where(last, f[None, :], (f - f_next)[None, :]) * batch.active   # (B, N)
        self.f = f


def _slots(PT, red):
    """p(z_{s+1}) and p(z_s) per slot: (B, J, N) each."""
    hi = np.take_along_axis(PT, red.hi[:, :, None], axis=1)
    lo = np.take_along_axis(PT, red.lo[:, :, None], axis=1)
    return hi, lo


def _residual(PT, W, E, alpha, b, batch, red):
    """F (B, J, N), count residual c (B, J), metric residual e (B,), merit (B,)."""
    hi, lo = _slots(PT, red)
    Whi, Wlo = _slots(W, red)
    G = (Whi - Wlo)
    act = batch.active[:, None, :] & red.valid[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        F = np.log(lo / hi) + alpha[:, :, None] + b[:, None, None] * G
    F = np.where(act, F, 0.0)
    G = np.where(act, G, 0.0)
    # Q'_r = sum_{i >= r} p(z_i): tail sums of the populated categories in order
    Po = np.take_along_axis(PT, red.order[:, :, None], axis=1)
    Qp = np.cumsum(Po[:, ::-1], axis=1)[:, ::-1][:, 1:]                     # (B, J, N)
    c = np.where(red.valid, Qp.sum(axis=2) - red.C, 0.0)
    e = E - batch.target
    merit = (F * F).sum(axis=(1, 2)) + (c * c).sum(axis=1) + e * e
    return F, G, c, e, merit, hi, lo


def _banded_solve(hi, lo, b, batch, red, rhs):
    """Solve A X = rhs for every problem at once; rhs (B, J, N, k) -> X (B, J, N, k)."""
    B, J, N, k = rhs.shape
    act = batch.active[:, None, :] & red.valid[:, :, None]                  # (B, J, N)
    inv_hi = np.where(act, 1.0 / np.maximum(hi, 1.0 / _PINV_MAX), 0.0)
    inv_lo = np.where(act, 1.0 / np.maximum(lo, 1.0 / _PINV_MAX), 0.0)
    # E'_n per rank: diag (B, N, J), super-diagonal within the block (B, N, J-1)
    dE = (inv_hi + inv_lo).transpose(0, 2, 1) + (b[:, None, None] * red.f[None, :, None]
                                                  * red.kappa[:, None, :]) * act.transpose(0, 2, 1)
    oE = -inv_hi[:, :-1].transpose(0, 2, 1) * act[:, 1:].transpose(0, 2, 1)  # E[s, s+1] = -1/p(z_{s+1})
    # dummy slots / inactive ranks: identity-like rows (E' = 1 on the diagonal of active
    # ranks of a dummy slot; inactive ranks have E' = 0 and get T = I below)
    act_n = batch.active                                                      # (B, N)
    dummy = (~red.valid)[:, None, :] & act_n[:, :, None]
    dE = np.where(dummy, 1.0, dE)
    zero = np.zeros((B, 1, J))
    dE_next = np.concatenate((dE[:, 1:], zero), axis=1)                       # E'_{n+1}
    oE_next = np.concatenate((oE[:, 1:], np.zeros((B, 1, max(J - 1, 0)))), axis=1)
    wk = -b[:, None, None] * red.w[:, :, None] * red.kappa[:, None, :]        # (B, N, J)
    D0 = dE + dE_next + wk                                                    # T_{n,n} diag
    D0 = np.where(act_n[:, :, None], D0, 1.0)
    O0 = oE + oE_next                                                         # T_{n,n} super
    # band storage, upper form: ab[u - k, i + k] = T[i, i + k]; index (b, n, s) -> (b*N + n)*J + s
    u = J + 1 if J > 1 else 1
    M = B * N * J
    ab = np.zeros((u + 1, M))
    ab[u] = D0.reshape(-1)
    if J > 1:
        sup = np.zeros((B, N, J))
        sup[:, :, :-1] = O0
        ab[u - 1, 1:] = sup.reshape(-1)[:-1]
    # T_{n,n+1}[s, s'] = -E'_{n+1}[s, s'], offset k = J + s' - s
    for s in range(J):
        for s2 in (s - 1, s, s + 1):
            if not 0 <= s2 < J:
                continue
            off = J + s2 - s
            if s2 == s:
                val = -dE_next[:, :, s]
            elif s2 == s + 1:
                val = -oE_next[:, :, s]
            else:
                val = -oE_next[:, :, s2]
            val = np.where(act_n, val, 0.0)
            full = np.zeros((B, N, J))
            full[:, :, s] = val                        # row (n, s) -> column row + k
            flat = full.reshape(-1)
            ab[u - off, off:] += flat[:-off]
    # right-hand sides: P^{-T} r, r_n - r_{n+1}
    R = rhs.transpose(0, 2, 1, 3)                                             # (B, N, J, k)
    Rt = R.copy()
    Rt[:, :-1] -= R[:, 1:]
    Rt = Rt.reshape(M, k)
    try:
        Y = solveh_banded(ab, Rt, lower=False, check_finite=False)
    except LinAlgError:
        full_ab = np.zeros((2 * u + 1, M))
        full_ab[: u + 1] = ab
        for kk in range(1, u + 1):   # lower bands by symmetry: T[i + k, i] = T[i, i + k]
            full_ab[u + kk, : M - kk] = ab[u - kk, kk:]
        try:
            Y = solve_banded((u, u), full_ab, Rt, check_finite=False)
        except LinAlgError:
            # an exactly singular pivot somewhere: solve problem by problem, and give the
            # singular ones no step (NaN; their line search stalls and they are handed on)
            Y = np.full(Rt.shape, np.nan)
            step = N * J
            for i in range(B):   # loop over problems (each an O(N) banded solve)
                sl = slice(i * step, (i + 1) * step)
                try:
                    Y[sl] = solve_banded((u, u), full_ab[:, sl], Rt[sl], check_finite=False)
                except LinAlgError:
                    pass
    Y = Y.reshape(B, N, J, k)
    X = Y.copy()
    X[:, 1:] -= Y[:, :-1]                                                     # x_n = y_n - y_{n-1}
    return X.transpose(0, 2, 1, 3) * act[..., None]


def _to_theta(alpha, b, red, L):
    """[a_0..a_{L-1}, b] with a_{z_0} = 0 and a_{z_r} = alpha_1 + ... + alpha_r."""
    B = len(b)
    a_sorted = np.concatenate((np.zeros((B, 1)), np.cumsum(np.where(red.valid, alpha, 0.0), axis=1)), axis=1)
    th = np.zeros((B, L + 1))
    np.put_along_axis(th, red.order, a_sorted, axis=1)   # empty categories: masked by the dual
    th[:, L] = b
    return th


def _from_theta(theta, red, L):
    a = np.take_along_axis(theta[:, :L], red.order, axis=1)
    return np.where(red.valid, a[:, 1:] - a[:, :-1], 0.0), theta[:, L].copy()


def newton_kkt(batch: Batch, *, tol=1e-10, kkt_tol=1e-9, max_iter=50, start_iter=2):
    """Solve a batch of interior problems by Newton's method on the KKT system.

    Returns theta (B, L+1), PT (B, L, N), nit (B,), converged (B,) bool, stationarity (B,)
    (the same contract as :func:`tests.numpy_solver.linearize.linearize`).
    """
    B = len(batch)
    L = batch.L
    v = batch.target
    out_P = batch.uniform()
    out_theta = batch.theta_uniform()
    nit = np.zeros(B, dtype=np.int64)
    conv = np.zeros(B, dtype=bool)
    stat = np.full(B, np.inf)

    # ---- start: a few steps of successive linearisation (the first is the linear
    # relaxation); the problems they already certify are done
    theta, P, nit0, conv0, st0 = linearize(batch, tol=tol, kkt_tol=kkt_tol, max_iter=start_iter,
                                           far_tol=_START_TOL)
    out_P, out_theta, nit[:], conv[:], stat[:] = P.copy(), theta.copy(), nit0, conv0, st0
    sel = np.flatnonzero(~conv0)
    if not len(sel):
        return out_theta, out_P, nit, conv, stat
    P, theta = P[sel], theta[sel]
    batch = batch.take(sel)
    # softmax underflow leaves exact zeros; Newton works with ln p: floor them
    P = np.where(batch.grade_ok[:, :, None] & batch.active[:, None, :], np.maximum(P, _P_FLOOR), 0.0)
    P /= np.maximum(P.sum(axis=1, keepdims=True), 1e-300)

    red = _Reduced(batch)
    alpha, b = _from_theta(theta, red, L)
    todo = sel.copy()
    sub = batch
    E = sub.expectation(P)
    W = sub.features(P)
    F, G, c, e, merit, phi, plo = _residual(P, W, E, alpha, b, sub, red)
    stalled = np.zeros(len(sel), dtype=bool)
    for it in range(max_iter):
        # ---- certify the iterate itself: F is the log-odds stationarity residual of p with
        # W = dE/dp(p) between consecutive populated categories; against the reference
        # category (the lowest populated one) it is the cumulative sum over slots
        st_it = np.abs(np.cumsum(F, axis=1)).max(axis=(1, 2), initial=0.0)
        res_it = sub.residuals(P, E)
        done = (st_it <= kkt_tol) & (res_it <= tol)
        if done.any():
            i = np.flatnonzero(done)
            g = todo[i]
            out_P[g], stat[g], conv[g] = P[i], st_it[i], True
            out_theta[g] = _to_theta(alpha[i], b[i], _take(red, i), L)
        # ---- otherwise polish by one exact linearised subproblem where Newton has stalled
        # or at the last step (a certified p of the exact form softmax(a + b W_k))
        small = ((it == max_iter - 1) | stalled) & ~done
        if small.any():
            i = np.flatnonzero(small)
            s2 = sub.take(i)
            th0 = _to_theta(alpha[i], b[i], _take(red, i), L)
            Wk = W[i]
            vk = v[todo[i]] - E[i] + (Wk * P[i]).sum(axis=(1, 2))
            th_l, P_l, _, _, _ = newton_dual(Wk, vk, s2.counts, s2.active, s2.grade_ok, th0,
                                             tol=0.1 * tol, max_iter=20)
            st = stationarity(th_l, s2.features(P_l), Wk, s2.grade_ok, s2.ref)
            res = s2.residuals(P_l)
            ok = (res <= tol) & (st <= kkt_tol)
            g = todo[i]
            out_P[g], out_theta[g], stat[g] = P_l, th_l, st
            conv[g[ok]] = True
            done[i[ok]] = True
            done[i[stalled[i]]] = True   # stalled and not certified: handed on
        nit[todo] += 1
        keep = ~done
        if not keep.any():
            break
        if not keep.all():   # compact only when some problem has finished
            k = np.flatnonzero(keep)
            todo, sub, red = todo[k], sub.take(k), _take(red, k)
            P, E, W, alpha, b, stalled = P[k], E[k], W[k], alpha[k], b[k], stalled[k]
            F, G, c, e, merit, phi, plo = F[k], G[k], c[k], e[k], merit[k], phi[k], plo[k]
        # ---- Newton direction
        J = red.J
        ones = np.zeros((len(todo), J, sub.active.shape[1], J))
        for s in range(J):
            ones[:, s, :, s] = sub.active * red.valid[:, s:s + 1]
        rhs = np.concatenate((F[..., None], ones, G[..., None]), axis=3)
        X = _banded_solve(phi, plo, b, sub, red, rhs)
        XF, X1, XG = X[..., 0], X[..., 1:J + 1], X[..., J + 1]
        # Schur system for (dalpha, db): rows = count constraints of each slot, then metric
        S = np.zeros((len(todo), J + 1, J + 1))
        r = np.zeros((len(todo), J + 1))
        S[:, :J, :J] = X1.sum(axis=2)                                         # (B, J, J)
        S[:, :J, J] = XG.sum(axis=2)
        S[:, J, :J] = np.einsum("bsn,bsnt->bt", G, X1)
        S[:, J, J] = (G * XG).sum(axis=(1, 2))
        r[:, :J] = -c - XF.sum(axis=2)
        r[:, J] = -e - (G * XF).sum(axis=(1, 2))
        inval = ~red.valid
        S[:, :J, :][inval] = 0.0
        S[:, :, :J][np.broadcast_to(inval[:, None, :], S[:, :, :J].shape)] = 0.0
        idx = np.nonzero(inval)
        S[idx[0], idx[1], idx[1]] = 1.0
        r[:, :J][inval] = 0.0
        try:
            sol = np.linalg.solve(S, r[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:   # a singular Schur system: least-squares step
            sol = (np.linalg.pinv(S) @ r[:, :, None])[:, :, 0]
        sol = np.where(np.isfinite(sol), sol, 0.0)
        dalpha, db = sol[:, :J], sol[:, J]
        dQ = XF + np.einsum("bsnt,bt->bsn", X1, dalpha) + XG * db[:, None, None]
        # log-space step, accurate also where p is tiny (dQ' itself is only accurate in
        # absolute terms): E_n dQ'_n = rhs_n = F + dalpha + db G' + b Hess dQ' gives the
        # differences l_r - l_{r-1} = rhs_r of l_i = dp(z_i)/p(z_i), and sum_i p_i l_i = 0
        f = red.f[None, None, :]
        later = np.cumsum(dQ * f, axis=2)
        hv = red.kappa[:, :, None] * (f * (np.cumsum(dQ, axis=2) - dQ) + later[:, :, -1:] - later)
        rhs_n = F + dalpha[:, :, None] + db[:, None, None] * G + b[:, None, None] * hv
        rhs_n = np.where(red.valid[:, :, None], rhs_n, 0.0)
        ell = np.concatenate((np.zeros((len(todo), 1, dQ.shape[2])), np.cumsum(rhs_n, axis=1)), axis=1)
        Po = np.take_along_axis(P, red.order[:, :, None], axis=1)             # sorted categories
        okc = np.take_along_axis(sub.grade_ok, red.order, axis=1)[:, :, None]
        Po = np.where(okc, Po, 0.0)
        ell -= ((Po * ell).sum(axis=1) / np.maximum(Po.sum(axis=1), 1e-300))[:, None, :]
        rel_ = np.zeros_like(P)
        np.put_along_axis(rel_, red.order[:, :, None], np.where(okc, ell, 0.0), axis=1)
        # ---- Armijo backtracking on the squared KKT residual; the full step's arrays
        # become the new state (no copies), rows of rejected steps are restored/overwritten
        t = np.ones(len(todo))
        acc = np.zeros(len(todo), dtype=bool)
        old = (P, E, W, alpha, b, F, G, c, e, merit, phi, plo)
        new = None
        for _ls in range(_LS_STEPS):
            pend = np.flatnonzero(~acc)
            if not len(pend):
                break
            whole = new is None   # the first trial: every problem, no copies of the batch
            sp = sub if whole else sub.take(pend)
            rp_red = red if whole else _take(red, pend)
            Pt = P[pend] * np.exp(np.clip(t[pend, None, None] * rel_[pend], -_MAX_EXP, _MAX_EXP))
            Pt = np.where(sp.grade_ok[:, :, None], np.maximum(Pt, _P_FLOOR), 0.0)
            Pt /= np.maximum(Pt.sum(axis=1, keepdims=True), 1e-300)
            Pt *= sp.active[:, None, :]
            at = alpha[pend] + t[pend, None] * dalpha[pend]
            bt = b[pend] + t[pend] * db[pend]
            Et, Wt = sp.expectation(Pt), sp.features(Pt)
            rp = _residual(Pt, Wt, Et, at, bt, sp, rp_red)
            good = np.isfinite(rp[4]) & (rp[4] <= (1.0 - 2e-4 * t[pend]) * merit[pend] + 1e-28)
            trial = (Pt, Et, Wt, at, bt) + tuple(rp)
            if whole:
                new = list(trial)
                bad = np.flatnonzero(~good)
                for x, y in zip(new, old):
                    x[bad] = y[bad]
            else:
                g = pend[good]
                for x, y in zip(new, trial):
                    x[g] = y[good]
            acc[pend[good]] = True
            t[pend[~good]] *= 0.5
        # stalled line searches keep their iterate and are polished next (then handed on)
        stalled = ~acc
        P, E, W, alpha, b, F, G, c, e, merit, phi, plo = new
        del old, new, trial, rp, Pt, Wt, rel_, X, XF, X1, XG, dQ, rhs, ones
    return out_theta, out_P, nit, conv, stat


def _take(red: _Reduced, idx) -> _Reduced:
    new = object.__new__(_Reduced)
    new.J, new.f = red.J, red.f
    for name in ("order", "Lp", "valid", "hi", "lo", "C", "kappa", "w"):
        setattr(new, name, getattr(red, name)[idx])
    return new
