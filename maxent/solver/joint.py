r"""Maximum entropy from several metric values held at once (docs/method.md).

.. math:: \max_p H(p) \;\text{s.t.}\; E_{M_j}(p) = v_j\ (j = 1..k),\;
          \sum_n p_n(z) = K_z,\; \sum_z p_n(z) = 1,\; p \ge 0

A set takes the path of one metric, constraint by constraint:

1. **Classify** each target against its own attainable range (the one classification,
   :func:`maxent.solver.classify.classify`, with each metric's own count constraints). A list
   on which a metric is undefined is ``undefined``; a target beyond its metric's range is
   ``infeasible``, and the message names the metric. A target on a certified end of its range
   confines p to the face of that metric's extreme list: the cells the face leaves empty are
   removed (P@10 = 0 removes relevance from the first ten ranks), the metric's constraint is
   then met by every remaining distribution and drops out, and its multiplier is +-inf.
2. **Solve** what is left by successive linearisation: at the iterate p, every metric is
   replaced by its tangent, E_j(p) + <W_j, p' - p> with W_j = dE_j/dp, and the linearised
   problem (counts and k linear constraints) is solved exactly by damped Newton on its convex
   dual, whose multipliers are [a_0..a_{L-1}, b_1..b_k]:
   p_n(z) = softmax_z(a_z + sum_j b_j W_j,n(z)). A set of metrics linear in p is solved by
   its first subproblem; otherwise the steps repeat from the new p. A list the steps leave
   uncertified gets a second pass from its best p, the same tangent problems with each next
   point Anderson's mixing of the last ten in ln p: where the multipliers are large and
   opposite (nDCG and GAP), plain steps oscillate.
3. **Certify** on the returned p: every count and every |E_j(p) - v_j| within ``tol``, and
   the stationarity of the true problem, max over ranks of the spread over categories of
   ln p_n(z) - a_z - sum_j b_j W_j,n(z) with W at p itself, within ``kkt_tol`` (a fixed point
   of the linearisation is a KKT point of the problem).
4. A set left uncertified whose metrics are all linear in p is checked by a linear program
   (does any distribution meet the counts and every value?): if none does, the set is
   ``infeasible`` ("these values are not attainable together"); otherwise ``not_converged``.

Every problem is held in the category-major form of :mod:`maxent.solver._problem`, shared by
the set: binary (L = 2) when every metric is binary at one threshold, else graded with the
lists' levels (a binary metric then sees q_n = sum_{z >= t} p_n(z)).
"""
from __future__ import annotations

import warnings

import numpy as np

from maxent.errors import ConvergenceWarning
from maxent.solver._problem import BOUNDARY_RTOL, Batch, category_counts, count_constraints, entropy
from maxent.solver.classify import Target, classify
from maxent.solver.forms import form_of
from maxent.solver.result import Status

_LINE_STEPS = 30        # halvings of a dual Newton step before the line search gives up
_INNER_STEPS = 60       # Newton steps on one linearised dual (quadratic once near: ~5-10)
_STALL = 30            # outer steps without halving the merit before a row is left
_DEPTH = 10             # the second pass: Anderson's memory, the last steps mixed
_MIX_STALL = 8          # the second pass: mixed steps without a smaller residual before beta halves
_MIX_ITER = 60          # the second pass's steps: the lists it certifies mostly take far fewer
_INNER_TOL = 1e-12      # gradient of a linearised dual (counts, linearised values) at its optimum


class SetForm:
    """The categorical form a set of metrics shares and each metric's view of it."""

    def __init__(self, metrics, lists, count):
        thresholds = {m.binary_threshold for m in metrics if not m.GRADED}
        self.graded = any(m.GRADED for m in metrics) or len(thresholds) > 1
        self.metrics = list(metrics)
        self.lists = lists
        self.counts = category_counts(lists, count, None if self.graded else thresholds.pop())
        self.L = self.counts.shape[1]
        self.linear = all(m.SOLVER_FORM == "linear" for m in metrics)

    def metric_p(self, PT):
        return PT.transpose(0, 2, 1) if self.graded else PT[:, 1]

    def expectations(self, PT, rows) -> np.ndarray:
        """E_j(p) of every metric, (b, k)."""
        sub, p = self.lists.take(rows), self.metric_p(PT)
        return np.stack([m.expectation(p, sub) for m in self.metrics], axis=1)

    def features(self, PT, rows) -> np.ndarray:
        """W_j = dE_j/dp in category form, (b, k, L, N), 0 beyond each length."""
        sub, p = self.lists.take(rows), self.metric_p(PT)
        active = (np.arange(PT.shape[2])[None, :] < sub.lengths[:, None])[:, None, :]
        W = np.zeros((len(rows), len(self.metrics)) + PT.shape[1:])
        for j, m in enumerate(self.metrics):
            g = np.asarray(m.gradient(p, sub), dtype=np.float64)
            if self.graded:
                W[:, j] = g.transpose(0, 2, 1) * active
            else:
                W[:, j, 1] = g * active[:, 0]
        return W


def _classify(form: SetForm, targets, count):
    """Each metric's class (:class:`Target`, (B, k)) and the extreme lists' faces of the
    targets on an end, as the cells they leave (B, L, N) allowed."""
    lists = form.lists
    B, N = lists.grades.shape
    cls = np.zeros((B, len(form.metrics)), dtype=np.int8)
    allowed = np.ones((B, form.L, N), dtype=bool)
    allowed &= (np.arange(N)[None, :] < lists.lengths[:, None])[:, None, :]
    allowed &= (form.counts > 0)[:, :, None]
    for j, m in enumerate(form.metrics):
        batch = Batch(m, targets[:, j], lists, count_constraints(m, lists, count))
        top, bot = form_of(batch).ends(batch.counts)
        lo, hi = np.minimum(top, bot), np.maximum(top, bot)
        cls[:, j] = c = classify(batch, lo, hi)
        end = np.flatnonzero((c == Target.AT_MAX) | (c == Target.AT_MIN))
        if not len(end):
            continue
        sub = batch.take(end)
        top_is_hi = (top >= bot)[end]
        want_top = np.where(c[end] == Target.AT_MAX, top_is_hi, ~top_is_hi)[:, None, None]
        P_end = np.where(want_top, sub.extreme(True), sub.extreme(False))
        F = sub.face(P_end)
        v = sub.target
        ok = np.abs(sub.expectation(F) - v) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(v))
        F = np.where(ok[:, None, None], F, P_end)
        if form.graded and not m.GRADED:
            t = m.binary_threshold
            z = np.arange(form.L)[None, :, None]
            allowed[end] &= np.where(z >= t, F[:, 1:2] > 0, F[:, 0:1] > 0)
        else:
            allowed[end] &= F > 0
    return cls, allowed


class _Dual:
    """The linearised problems of a batch of rows: counts K (b, L), features W (b, k, L, N),
    right-hand sides r (b, k), allowed cells (b, L, N) and the free multipliers (b, L + k)."""

    def __init__(self, K, W, r, allowed, free):
        self.K, self.W, self.r, self.allowed, self.free = K, W, r, allowed, free

    def take(self, i):
        return _Dual(self.K[i], self.W[i], self.r[i], self.allowed[i], self.free[i])

    def state(self, theta):
        """p (b, L, N), the dual's value D (b,) and gradient (b, L + k)."""
        L = self.K.shape[1]
        S = theta[:, :L, None] + np.einsum("bj,bjln->bln", theta[:, L:], self.W)
        S = np.where(self.allowed, S, -np.inf)
        top = S.max(axis=1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        E = np.exp(S - top)
        Z = E.sum(axis=1, keepdims=True)
        P = E / np.where(Z > 0, Z, 1.0)
        lse = np.where(Z[:, 0] > 0, np.log(np.where(Z[:, 0] > 0, Z[:, 0], 1.0)) + top[:, 0], 0.0)
        g = np.concatenate((P.sum(axis=2) - self.K, np.einsum("bln,bjln->bj", P, self.W) - self.r), axis=1)
        g = np.where(self.free, g, 0.0)
        rhs = np.concatenate((self.K, self.r), axis=1)
        D = lse.sum(axis=1) - (np.where(self.free, theta, 0.0) * rhs).sum(axis=1)
        return P, D, g

    def hessian(self, P):
        """Sum over ranks of the covariance of the features [e_z, W_j] under p_n, (b, M, M)."""
        b, L, N = P.shape
        k = self.W.shape[1]
        mu = np.einsum("bln,bjln->bjn", P, self.W)                          # (b, k, N)
        H = np.zeros((b, L + k, L + k))
        H[:, :L, :L] = -np.einsum("bzn,byn->bzy", P, P)
        H[:, np.arange(L), np.arange(L)] += P.sum(axis=2)
        H[:, :L, L:] = np.einsum("bzn,bjzn->bzj", P, self.W) - np.einsum("bzn,bjn->bzj", P, mu)
        H[:, L:, :L] = H[:, :L, L:].transpose(0, 2, 1)
        PW = P[:, None] * self.W
        H[:, L:, L:] = np.einsum("bjln,biln->bji", PW, self.W) - np.einsum("bjn,bin->bji", mu, mu)
        fixed = ~self.free
        H = np.where(fixed[:, :, None] | fixed[:, None, :], 0.0, H)
        H[:, np.arange(L + k), np.arange(L + k)] += fixed
        return H

    def newton(self, theta, max_steps=_INNER_STEPS, tol=_INNER_TOL):
        """Damped Newton from theta: (theta, p, converged (b,), steps (b,))."""
        b = len(theta)
        theta = theta.copy()
        steps = np.zeros(b, dtype=np.int64)
        live = np.ones(b, dtype=bool)
        P, D, g = self.state(theta)
        done = np.abs(g).max(axis=1) <= tol
        live &= ~done
        for _ in range(max_steps):
            i = np.flatnonzero(live)
            if not len(i):
                break
            sub = self if len(i) == b else self.take(i)
            H = sub.hessian(P[i])
            scale = np.abs(np.diagonal(H, axis1=1, axis2=2)).max(axis=1)
            H += (1e-14 * (1.0 + scale))[:, None, None] * np.eye(H.shape[1])
            d = _newton_step(H, g[i])
            slope = (g[i] * d).sum(axis=1)
            gnorm = np.linalg.norm(g[i], axis=1)
            t = np.ones(len(i))
            accepted = np.zeros(len(i), dtype=bool)
            th, Pn, Dn, gn = theta[i].copy(), P[i].copy(), D[i].copy(), g[i].copy()
            for _ in range(_LINE_STEPS):
                w = np.flatnonzero(~accepted)
                if not len(w):
                    break
                trial = theta[i[w]] + t[w, None] * d[w]
                Pt, Dt, gt = (sub if len(w) == len(i) else sub.take(w)).state(trial)
                # Armijo on D, or (near the optimum, where D's decrease is rounding) a
                # decrease of the gradient's norm
                armijo = Dt <= D[i[w]] + 1e-4 * t[w] * slope[w]
                shrink = np.linalg.norm(gt, axis=1) <= (1.0 - 1e-4 * t[w]) * gnorm[w]
                ok = armijo | shrink | (np.abs(gt).max(axis=1) <= tol)
                a = w[ok]
                th[a], Pn[a], Dn[a], gn[a] = trial[ok], Pt[ok], Dt[ok], gt[ok]
                accepted[a] = True
                t[w[~ok]] *= 0.5
            theta[i], P[i], D[i], g[i] = th, Pn, Dn, gn
            steps[i] += 1
            conv = np.abs(gn).max(axis=1) <= tol
            done[i] = conv
            live[i[conv | ~accepted]] = False
        return theta, P, done, steps


def _newton_step(H, g):
    """-H^-1 g per row; a singular H (a rank-deficient set of features) takes the least-squares
    step, and a row whose H or g is not finite takes none (its line search then stops it)."""
    bad = ~(np.isfinite(H).all(axis=(1, 2)) & np.isfinite(g).all(axis=1))
    if bad.any():
        H = np.where(bad[:, None, None], np.eye(H.shape[1]), H)
        g = np.where(bad[:, None], 0.0, g)
    try:
        return -np.linalg.solve(H, g[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return -(np.linalg.pinv(H) @ g[:, :, None])[:, :, 0]


def _spread(X, allowed):
    """Max over ranks of (max - min over allowed categories) of X (b, L, N), (b,)."""
    hi = np.where(allowed, X, -np.inf).max(axis=1)
    lo = np.where(allowed, X, np.inf).min(axis=1)
    gap = np.where(allowed.any(axis=1), hi - lo, 0.0)
    return gap.max(axis=1, initial=0.0)


def solve_set(metrics, targets, lists, *, count, tol, kkt_tol, max_iter, out, s, solve_one):
    """Solve the rows of one chunk (``lists``, ``targets`` (b, k)) into rows s.. of ``out``;
    the metrics are checked and distinct, k >= 2. ``solve_one``: the single-metric solve
    (:func:`maxent.solver.solve`), whose solution starts the iteration."""
    form = SetForm(metrics, lists, count)
    B, N = lists.grades.shape
    k, L = len(metrics), form.L
    rows = slice(s, s + B)
    cls, allowed = _classify(form, targets, count)
    pinned = (cls == Target.AT_MAX) | (cls == Target.AT_MIN)
    sign = np.where(cls == Target.AT_MAX, np.inf, -np.inf)
    status = np.full(B, Status.NOT_CONVERGED.value, dtype=object)
    message = np.full(B, "", dtype=object)
    names = [str(m) for m in metrics]

    undefined = (cls == Target.UNDEFINED).any(axis=1)
    for b in np.flatnonzero(undefined):
        j = int(np.argmax(cls[b] == Target.UNDEFINED))
        status[b] = Status.UNDEFINED.value
        message[b] = f"no relevant document in the qrels: {names[j]} is undefined"
    beyond = ~undefined & ((cls == Target.ABOVE) | (cls == Target.BELOW)).any(axis=1)
    for b in np.flatnonzero(beyond):
        j = int(np.argmax((cls[b] == Target.ABOVE) | (cls[b] == Target.BELOW)))
        why = "above" if cls[b, j] == Target.ABOVE else "below"
        status[b] = Status.INFEASIBLE.value
        message[b] = (f"{names[j]} = {targets[b, j]:.12g} is {why} its attainable range; p is the "
                      "count-only distribution")
    active = (np.arange(N)[None, :] < lists.lengths[:, None])
    empty_rank = (active & ~allowed.any(axis=1)).any(axis=1)
    clash = ~undefined & ~beyond & empty_rank
    for b in np.flatnonzero(clash):
        status[b] = Status.INFEASIBLE.value
        ends = ", ".join(names[j] for j in np.flatnonzero(pinned[b]))
        message[b] = f"the ends of {ends} exclude each other: some rank can take no grade"

    P = np.zeros((B, L, N))
    theta = np.zeros((B, L + k))
    nit = np.zeros(B, dtype=np.int64)
    stat = np.zeros(B)
    todo = np.flatnonzero(~undefined & ~beyond & ~clash)
    if len(todo):
        P[todo], theta[todo], nit[todo], stat[todo], ok = _iterate(
            form, targets, allowed, pinned, todo, tol, kkt_tol, max_iter,
            _start(form, targets, todo, count, tol, kkt_tol, max_iter, solve_one))
        left = ~ok
        if left.any() and not form.linear:
            # the rows the first pass left, from its best p: mixed in ln p (large multipliers)
            i = todo[left]
            P2, theta2, more, stat2, ok2 = _mixed(form, targets, allowed, pinned, i, tol, kkt_tol,
                                                  min(max_iter, _MIX_ITER), P[i], theta[i])
            nit[i] += more
            j = i[ok2]
            P[j], theta[j], stat[j] = P2[ok2], theta2[ok2], stat2[ok2]
            ok[np.flatnonzero(left)[ok2]] = True
        done = todo[ok]
        on_face = pinned[done].any(axis=1)
        status[done] = np.where(on_face, Status.BOUNDARY.value, Status.OPTIMAL.value)
        for b in done[on_face]:
            ends = ", ".join(names[j] for j in np.flatnonzero(pinned[b]))
            message[b] = (f"{ends} at an end of its attainable range: the maximum-entropy distribution "
                          "on that face meeting the other values")
        message[done[~on_face]] = "optimal (convex dual)" if form.linear else "KKT point"
        left = todo[~ok]
        if len(left) and form.linear:
            for b in left:
                if not _lp_feasible(form, targets[b], allowed[b], b):
                    status[b] = Status.INFEASIBLE.value
                    message[b] = ("these values are not attainable together (no distribution meets the "
                                  "counts and every value: linear program)")
        rest = left[status[left] == Status.NOT_CONVERGED.value]
        message[rest] = "iteration limit reached or line search stalled (the values may not be attainable together)"
    # fallback p of the rows with no solution: p = 0 where undefined, the count-only
    # distribution where infeasible before any iteration
    bad = np.flatnonzero(beyond | clash)
    if len(bad):
        length = np.maximum(form.counts[bad].sum(axis=1), 1.0)
        P[bad] = (form.counts[bad] / length[:, None])[:, :, None] * active[bad][:, None, :]
    no_iter = undefined | beyond | clash
    attained = form.expectations(P, np.arange(B))
    resid = np.maximum(np.abs(P.sum(axis=2) - form.counts).max(axis=1), np.abs(attained - targets).max(axis=1))
    ref = np.argmax(form.counts > 0, axis=1)
    a = theta[:, :L] - np.take_along_axis(theta[:, :L], ref[:, None], axis=1)
    a = np.where(form.counts > 0, a, -np.inf)
    bmult = np.where(pinned, sign, theta[:, L:])
    mult = np.concatenate((a[:, 1:], bmult), axis=1)
    mult[no_iter] = 0.0
    out["P"][rows] = P.transpose(0, 2, 1) if form.graded else P[:, 1]
    out["status"][rows], out["message"][rows] = status, message
    out["nit"][rows], out["stationarity"][rows] = nit, np.where(no_iter, 0.0, stat)
    out["residual"][rows], out["entropy"][rows] = resid, entropy(P)
    out["attained"][rows], out["mult"][rows] = attained, mult


class _Tangents:
    """The tangent problems of a batch of rows: their counts, allowed cells, targets, the
    metrics still constraints (``held``) and the multipliers a dual solves for (``free``: a_z
    of the grades with a count, a_ref = 0 for the first, and b_j of the held metrics)."""

    def __init__(self, form: SetForm, targets, allowed, pinned, rows):
        self.form, self.rows = form, rows
        self.K, self.A, self.v = form.counts[rows], allowed[rows], targets[rows]
        self.held = ~pinned[rows]
        self.free = np.concatenate((self.K > 0, self.held), axis=1)
        self.free[np.arange(len(rows)), np.argmax(self.K > 0, axis=1)] = False

    def solve(self, live, X, W, E, alpha, theta):
        """The problems of rows ``live`` linearised at X (features W, values E), asked for a
        fraction alpha of the way from E to the targets, by Newton on their duals from theta:
        (theta, p, converged, Newton steps, E(p), residual, count residual). The residual is
        over the held metrics."""
        form, v, K = self.form, self.v[live], self.K[live]
        r = alpha[:, None] * (v - E) + np.einsum("bjln,bln->bj", W, X)
        th, P, conv, steps = _Dual(K, W, r, self.A[live], self.free[live]).newton(theta)
        Ep = form.expectations(P, self.rows[live])
        res = np.abs(Ep - v).max(axis=1, where=self.held[live], initial=0.0)
        cnt = np.abs(P.sum(axis=2) - K).max(axis=1)
        return th, P, conv, steps, Ep, res, cnt

    def stationarity(self, live, th, W, Wp):
        """On the allowed cells ln p = a + b.W(x), so the stationarity at p is the spread of
        b.(W(p) - W(x)) (W at x, Wp at p), (b,)."""
        L = self.K.shape[1]
        drift = np.einsum("bj,bjln->bln", np.where(self.free[live, L:], th[:, L:], 0.0), Wp - W)
        return _spread(drift, self.A[live])


def _iterate(form: SetForm, targets, allowed, pinned, rows, tol, kkt_tol, max_iter, start):
    """Successive linearisation of the rows from ``start`` (b, L, N): (P, theta, steps,
    stationarity, certified).

    Each step asks the tangent problem for a fraction ``alpha`` of the way from E(p) to the
    targets: far from the solution a tangent overshoots (its dual may have no optimum), so a
    step that does not reduce the residual is refused and retried with alpha / 4; an accepted
    step doubles alpha, up to 1 (plain successive linearisation, whose fixed point is a KKT
    point)."""
    b, k, L = len(rows), len(form.metrics), form.L
    tangents = _Tangents(form, targets, allowed, pinned, rows)
    A, v, held = tangents.A, tangents.v, tangents.held
    P = np.where(A, start, 0.0)
    P /= np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    theta = np.zeros((b, L + k))
    nit = np.zeros(b, dtype=np.int64)
    stat = np.zeros(b)
    ok = np.zeros(b, dtype=bool)
    alpha = np.ones(b)
    W = form.features(P, rows)
    E = form.expectations(P, rows)
    res = np.abs(E - v).max(axis=1, where=held, initial=0.0)
    live = np.arange(b)
    best = np.full(b, np.inf)
    since = np.zeros(b, dtype=np.int64)
    X = P.copy()                                   # the point of linearisation
    hist = _Anderson(b, X[0].size)
    for _ in range(max_iter):
        Wl, El, Xl = W[live], E[live], X[live]
        th, Pn, conv, steps, En, res_n, cnt = tangents.solve(live, Xl, Wl, El, alpha[live], theta[live])
        nit[live] += 1 if not form.linear else steps
        if form.linear:
            # certified on p itself: the dual's gradient may stop at its rounding floor
            # (large multipliers) just above _INNER_TOL with counts and values within tol
            theta[live], P[live], ok[live] = th, Pn, (cnt <= tol) & (res_n <= tol)
            break
        Wn = form.features(Pn, rows[live])
        stat_n = tangents.stationarity(live, th, Wl, Wn)
        polish = conv & (res[live] <= tol) & (res_n <= tol)
        # the certificate holds on p whether or not the tangent's dual met _INNER_TOL
        good = (cnt <= tol) & (res_n <= tol) & (stat_n <= kkt_tol)
        full = good | polish | conv & (res_n <= np.maximum(0.1 * tol, (1.0 - 0.25 * alpha[live]) * res[live]))
        a = live[full]
        theta[a], P[a], X[a], W[a], E[a], res[a], stat[a] = (
            th[full], Pn[full], Pn[full], Wn[full], En[full], res_n[full], stat_n[full])
        ok[live[good]] = True
        # a tangent solution that overshoots: the first of x + beta (p - x), beta = 1/2,
        # 1/4, .., that reduces the residual (a tangent is accurate near x); a tangent problem
        # without an optimum: a smaller fraction of the way next time
        short = np.flatnonzero(conv & ~full)
        moved = _shorter(form, rows[live[short]], Xl[short], Pn[short], v[live[short]], res[live[short]],
                         alpha[live[short]], held[live[short]])
        for i, (Xm, Em, rm) in moved.items():
            row = live[short[i]]
            X[row], E[row], res[row] = Xm, Em, rm
        if moved:
            at = live[short[list(moved)]]
            W[at] = form.features(X[at], rows[at])
        stepped = full.copy()
        stepped[short[list(moved)]] = True
        alpha[live[stepped]] = np.minimum(1.0, 2.0 * alpha[live[stepped]])
        alpha[live[~stepped]] *= 0.25
        hist.reset(live[~polish])
        # on the constraints' surface the fixed point is approached by Anderson's mixing of
        # the last steps (plain steps oscillate where the multipliers are large)
        mix = live[polish & ~good]
        if len(mix):
            X[mix] = hist.step(mix, Xl[(polish & ~good)], Pn[(polish & ~good)], A[mix])
            W[mix] = form.features(X[mix], rows[mix])
            E[mix] = form.expectations(X[mix], rows[mix])
            res[mix] = np.minimum(res[mix], tol)   # the mixed point is only where to linearise
        # a row whose residual (off the surface) or stationarity (on it) has not halved in
        # _STALL steps is left: it is not converging
        merit = np.where(res[live] <= tol, stat[live] / kkt_tol, 1.0 + res[live] / tol)
        better = merit <= 0.5 * best[live]
        best[live[better]] = merit[better]
        since[live] = np.where(better, 0, since[live] + 1)
        live = live[~good & (alpha[live] >= 1e-12) & (since[live] < _STALL)]
        if not len(live):
            break
    return P, theta, nit, stat, ok


def _shorter(form: SetForm, rows, X, P, v, res, alpha, held, halvings=12):
    """For each row, the first x + beta (p - x) (beta = 1/2, 1/4, ..) whose residual is below
    (1 - beta alpha / 4) res: {index: (point, E, residual)} of the rows that found one."""
    found = {}
    todo = np.arange(len(rows))
    beta = 0.5
    for _ in range(halvings):
        if not len(todo):
            break
        Xm = X[todo] + beta * (P[todo] - X[todo])
        Em = form.expectations(Xm, rows[todo])
        rm = np.abs(Em - v[todo]).max(axis=1, where=held[todo], initial=0.0)
        ok = rm <= (1.0 - 0.25 * beta * alpha[todo]) * res[todo]
        for i in np.flatnonzero(ok):
            found[int(todo[i])] = (Xm[i], Em[i], rm[i])
        todo = todo[~ok]
        beta *= 0.5
    return found


class _Anderson:
    """Anderson's mixing of a fixed-point iteration x -> g(x), per row, over the last
    ``depth`` steps (Walker & Ni 2011): x' = x + f - (dX + dF) gamma with
    gamma = argmin |f - dF gamma|, f = g(x) - x; the result is clipped to the allowed cells
    and renormalised per rank."""

    def __init__(self, rows, size, depth=5):
        self.x = np.zeros((rows, depth, size))
        self.f = np.zeros((rows, depth, size))
        self.n = np.zeros(rows, dtype=np.int64)
        self.depth = depth

    def reset(self, rows):
        self.n[rows] = 0

    def step(self, rows, X, G, allowed):
        shape = X.shape
        x, f = X.reshape(len(rows), -1), (G - X).reshape(len(rows), -1)
        out = G.reshape(len(rows), -1).copy()
        for i, row in enumerate(rows):
            n = min(self.n[row], self.depth)
            if n:
                dX = x[i] - self.x[row, :n]
                dF = f[i] - self.f[row, :n]
                gamma = np.linalg.lstsq(dF.T, f[i], rcond=None)[0]
                out[i] = x[i] + f[i] - (dX + dF).T @ gamma
            slot = self.n[row] % self.depth
            self.x[row, slot], self.f[row, slot] = x[i], f[i]
            self.n[row] += 1
        Y = np.where(allowed, np.clip(out.reshape(shape), 0.0, 1.0), 0.0)
        return Y / np.maximum(Y.sum(axis=1, keepdims=True), 1e-300) * (allowed.any(axis=1, keepdims=True))


def _mixed(form: SetForm, targets, allowed, pinned, rows, tol, kkt_tol, max_iter, start, theta):
    """The second pass over the rows of a non-linear set that :func:`_iterate` left
    uncertified, from its best p (``start``, (b, L, N)) and its multipliers (``theta``, the
    first tangent dual's start): (P, theta, steps, stationarity, certified).

    The iteration is the fixed point of x -> T(x), T(x) the maximum-entropy solution of the
    problem linearised at x; a fixed point is a KKT point. Where the multipliers are large and
    opposite, plain steps x <- T(x) oscillate or diverge, so each next x is Anderson's mixing of
    the last _DEPTH steps in ln p (:class:`_Mixing`), damped by beta, which halves when the
    fixed-point residual has not fallen for _MIX_STALL steps. A tangent problem without an optimum
    (far from the solution, the tangent overshoots) is asked for a fraction alpha of the way
    from E(x) to the targets; alpha doubles back to 1 as the tangent problems solve. The p
    returned is the best of the row's certified or most nearly certified tangent solutions."""
    b = len(rows)
    tangents = _Tangents(form, targets, allowed, pinned, rows)
    A = tangents.A
    X = np.where(A, start, 0.0)                    # the point of linearisation
    X /= np.maximum(X.sum(axis=1, keepdims=True), 1e-300)
    P = X.copy()
    theta = theta.copy()
    nit = np.zeros(b, dtype=np.int64)
    stat = np.zeros(b)
    merit = np.full(b, np.inf)                     # of P: max(residual / tol, stationarity / kkt_tol)
    ok = np.zeros(b, dtype=bool)
    alpha = np.ones(b)
    mixing = _Mixing(A)
    live = np.arange(b)
    for _ in range(max_iter):
        Xl = X[live]
        Wl = form.features(Xl, rows[live])
        th, Pn, conv, _, _, res_n, cnt = tangents.solve(live, Xl, Wl, form.expectations(Xl, rows[live]),
                                                        alpha[live], theta[live])
        nit[live] += 1
        stat_n = tangents.stationarity(live, th, Wl, form.features(Pn, rows[live]))
        good = conv & (cnt <= tol) & (res_n <= tol) & (stat_n <= kkt_tol)
        merit_n = np.where(conv, np.maximum(np.maximum(res_n, cnt) / tol, stat_n / kkt_tol), np.inf)
        better = merit_n < merit[live]
        a = live[better]
        theta[a], P[a], stat[a], merit[a] = th[better], Pn[better], stat_n[better], merit_n[better]
        ok[live[good]] = True
        # the next point: a tangent problem that did not solve asks for less next time; one
        # that solved short of the full way is taken as it is; the others are mixed
        back = live[~conv]
        alpha[back] *= 0.25
        mixing.reset(back)
        X[back] = np.where(np.isfinite(merit[back])[:, None, None], P[back], X[back])   # the best so far
        part = conv & (alpha[live] < 1.0)
        X[live[part]] = Pn[part]
        alpha[live[part]] = np.minimum(1.0, 2.0 * alpha[live[part]])
        mix = conv & ~part & ~good
        if mix.any():
            X[live[mix]] = mixing.step(live[mix], Xl[mix], Pn[mix])
        live = live[~good & (alpha[live] >= 1e-12) & (mixing.beta[live] >= 1e-6)]
        if not len(live):
            break
    return P, theta, nit, stat, ok


class _Mixing:
    """Anderson's mixing of the fixed-point iteration x -> T(x) in u = ln x over the allowed
    cells, per row (Walker & Ni 2011): u' = u + beta f - (dU + beta dF) gamma, with f = ln T(x) - u,
    gamma = argmin |f - dF gamma| over the last _DEPTH differences; x' = exp(u') normalised per
    rank. In ln p a tiny probability moves by orders of magnitude, as the multipliers move it."""

    def __init__(self, allowed):
        self.allowed = allowed
        self.u = [[] for _ in allowed]
        self.f = [[] for _ in allowed]
        self.best = np.full(len(allowed), np.inf)
        self.since = np.zeros(len(allowed), dtype=np.int64)
        self.beta = np.ones(len(allowed))

    def reset(self, rows):
        for row in rows:
            self.u[row].clear()
            self.f[row].clear()

    def step(self, rows, X, T):
        out = np.zeros_like(X)
        for i, row in enumerate(rows):
            mask = self.allowed[row]
            u = np.where(mask, np.log(np.maximum(X[i], 1e-300)), 0.0).ravel()
            f = np.where(mask, np.log(np.maximum(T[i], 1e-300)), 0.0).ravel() - u
            size = np.linalg.norm(f)
            if size < self.best[row]:
                self.best[row], self.since[row] = size, 0
            else:
                self.since[row] += 1
            hu, hf = self.u[row], self.f[row]
            hu.append(u)
            hf.append(f)
            del hu[:-_DEPTH - 1], hf[:-_DEPTH - 1]
            beta = self.beta[row]
            step = u + beta * f
            if len(hu) > 1:
                dU, dF = np.diff(hu, axis=0), np.diff(hf, axis=0)
                gamma = np.linalg.lstsq(dF.T, f, rcond=None)[0]
                step -= (dU + beta * dF).T @ gamma
            if self.since[row] > _MIX_STALL:               # not converging: shorter, afresh
                self.reset([row])
                self.beta[row] *= 0.5
                self.since[row] = 0
            step = step.reshape(mask.shape)
            top = np.where(mask, step, -np.inf).max(axis=0, keepdims=True)
            e = np.where(mask, np.exp(step - np.where(np.isfinite(top), top, 0.0)), 0.0)
            out[i] = e / np.maximum(e.sum(axis=0, keepdims=True), 1e-300)
        return out


def _start(form: SetForm, targets, rows, count, tol, kkt_tol, max_iter, solve):
    """The first iterate, (b, L, N): the single-metric solution (the compiled kernels) of the
    set's first metric non-linear in p, where it has one; else the count-only distribution.
    It meets that metric's value, and the linearisation moves from there to the others."""

    K = form.counts[rows]
    N = form.lists.grades.shape[1]
    active = (np.arange(N)[None, :] < form.lists.lengths[rows, None])[:, None, :]
    X = np.broadcast_to(K[:, :, None] / np.maximum(K.sum(axis=1), 1.0)[:, None, None], (len(rows),) + (form.L, N)) * active
    j = next((j for j, m in enumerate(form.metrics) if m.SOLVER_FORM != "linear"), None)
    if j is None:
        return X
    m = form.metrics[j]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(m, targets[rows, j], form.lists.take(rows), count=count, tol=tol, kkt_tol=kkt_tol,
                    max_iter=max_iter)
    got = res.success[:, None, None]
    if m.GRADED:
        Y = res.p.transpose(0, 2, 1)
    elif not form.graded:
        Y = np.stack((1.0 - res.p, res.p), axis=1) * active
    else:
        # a binary solution shared among the grades on each side of the threshold in the
        # proportions of their counts
        t = m.binary_threshold
        above = np.arange(form.L) >= t
        share = np.where(above, K / np.maximum((K * above).sum(axis=1, keepdims=True), 1e-300),
                         K / np.maximum((K * ~above).sum(axis=1, keepdims=True), 1e-300))
        q = res.p[:, None, :]
        Y = share[:, :, None] * np.where(above[None, :, None], q, 1.0 - q) * active
    return np.where(got, Y, X)


def _lp_feasible(form: SetForm, v, allowed, b) -> bool:
    """Whether some distribution on the allowed cells meets the counts and every (linear)
    value of row b: a linear program's feasibility (HiGHS)."""
    from scipy.optimize import linprog

    rows = np.array([b])
    L, N = allowed.shape
    n = int(form.lists.lengths[b])
    W = form.features(np.zeros((1, L, N)), rows)[0][:, :, :n]            # constant: linear
    E0 = form.expectations(np.zeros((1, L, N)), rows)[0]                  # the offsets E(0)
    cells = np.flatnonzero(allowed[:, :n].reshape(-1))
    z, rank = np.divmod(cells, n)
    eq = [np.eye(n)[rank].T, np.eye(L)[z].T, W.reshape(len(v), -1)[:, cells]]
    rhs = [np.ones(n), form.counts[b], v - E0]
    res = linprog(np.zeros(len(cells)), A_eq=np.vstack(eq), b_eq=np.concatenate(rhs),
                  bounds=(0, 1), method="highs")
    return res.status != 2
