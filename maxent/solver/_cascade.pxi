cdef (double, double) _cascade_f1(double[::1] y, double b, double[::1] g, Py_ssize_t n_len, double[::1] F1) noexcept nogil:
    """F1 = y - b g into F1, (|F1|^2, max_n (|F1_n| - _W_ULPS ulp(|y_n| + |b g_n|)), >= 0) of
    :func:`_cascade_residual`: reassociated (the sum only steers the line search; a maximum
    is exact in any order), so the pass vectorises."""
    cdef double bg
    cdef double f1
    cdef double merit
    cdef Py_ssize_t n
    cdef double t
    cdef double x
    merit = 0.0
    f1 = 0.0
    for n in range(n_len):
        bg = b * g[n]
        x = y[n] - bg
        F1[n] = x
        merit += x * x
        t = abs(x) - _W_ULPS * _EPS * (abs(y[n]) + abs(bg))
        f1 = t if t > f1 else f1
    return merit, f1


cpdef (double, double, double) _cascade_residual(double[:, ::1] P, double[::1] y, double b, double[::1] g, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] Kp, double E, double v, double[::1] sp, double[::1] F1, double[::1] F2) noexcept nogil:
    """F1 = y - b g (N), F2_k = sum_n p_n(k) - K_k (k = 1..J, compensated sums); returns
    (merit |F1|^2 + |F2|^2 + (E - v)^2, stationarity max|s'| max_n (|F1_n| - _W_ULPS ulp(|y_n|
    + |b g_n|))^+ (the log-odds residual ln p_n(k)/p_n(0) - (a_k + b W_n(k)) = s'_k F1_n of
    p in exponential form, beyond the rounding of its own exponent: the allowance of
    :func:`tests.numpy_solver.linearize.stationarity`, per rank instead of at the largest |b W|),
    count and metric residual)."""
    cdef double d
    cdef double ev
    cdef double f1
    cdef Py_ssize_t k
    cdef double merit
    cdef double res
    cdef double smax
    merit, f1 = _cascade_f1(y, b, g, n_len, F1)
    res = 0.0
    for k in range(Lc):
        d = _csum1(P[k], n_len) - Kp[k]
        res = max(res, abs(d))
        if k > 0:
            F2[k] = d
            merit += d * d
    smax = 0.0
    for k in range(Lc):
        smax = max(smax, abs(sp[k]))
    ev = E - v
    return merit + ev * ev, smax * f1, max(res, abs(ev))


cpdef bint _cascade_step(double b, double[::1] A, double[::1] e, double[::1] g, double[::1] D, double[::1] OM, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] AB, double[:, ::1] X, double[:, ::1] Z, double[:, ::1] HZ, double[:, ::1] S, double[::1] rs, double[::1] cv, double[::1] dy, double[:, ::1] Sc, double tol = 0.0) noexcept nogil:
    """The Newton-KKT step of :func:`_cascade_newton` at its iterate: rs[:J] = dtheta_1..J,
    rs[J] = db, dy (N); cv (J) scratch. A grade whose count cannot move holds its multiplier
    (:func:`_hold_pinned`); with ``tol`` > 0, a grade whose count exceeds its target by a
    leftover that decays like exp(theta) takes the step in log space
    (:func:`_leftover_steps`). Returns False when a solve fails."""
    cdef Py_ssize_t Lc
    cdef double a
    cdef double bd
    cdef double db
    cdef double ej
    cdef double h0
    cdef double h1
    cdef double h2
    cdef double h3
    cdef double h4
    cdef double hdr
    cdef double hz
    cdef Py_ssize_t j
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t nr
    cdef Py_ssize_t q
    cdef double r0
    cdef double r1
    cdef double r2
    Lc = J + 1
    nr = J + 2
    # ---- the band solves: columns w = -D F1, M_k (k = 1..J), D g (block Thomas, checked;
    # else Gaussian elimination with partial pivoting)
    for j in range(n_len):
        Z[0, j] = -D[j] * F1[j]
        Z[nr - 1, j] = D[j] * g[j]
    for q in range(1, nr - 1):
        for j in range(n_len):
            Z[q, j] = M[q, j]
    if not _cascade_thomas(b, A, e, D, OM, n_len, Z, nr, X, Sc):
        _cascade_rhs(A, e, n_len, Z, nr, X)
        _cascade_system(b, A, e, D, OM, n_len, AB)
        if not _band_solve(AB, 2 * n_len, 2, 2, X, nr):
            return False
    if nr == 4:
        # the four columns at once (rows 2j, 2j + 1 of X read once; the same operations as
        # column by column)
        for j in range(n_len):
            a = A[j]
            ej = e[j]
            bd = b * D[j]
            h0 = -(a * X[2 * j + 1, 0] + ej * X[2 * j, 0])
            h1 = -(a * X[2 * j + 1, 1] + ej * X[2 * j, 1])
            h2 = -(a * X[2 * j + 1, 2] + ej * X[2 * j, 2])
            h3 = -(a * X[2 * j + 1, 3] + ej * X[2 * j, 3])
            HZ[0, j] = h0
            HZ[1, j] = h1
            HZ[2, j] = h2
            HZ[3, j] = h3
            Z[0, j] += bd * h0
            Z[1, j] += bd * h1
            Z[2, j] += bd * h2
            Z[3, j] += bd * h3
    elif nr == 5:
        # the five columns at once (J = 3: ERR's four grades), as for nr == 4
        for j in range(n_len):
            a = A[j]
            ej = e[j]
            bd = b * D[j]
            h0 = -(a * X[2 * j + 1, 0] + ej * X[2 * j, 0])
            h1 = -(a * X[2 * j + 1, 1] + ej * X[2 * j, 1])
            h2 = -(a * X[2 * j + 1, 2] + ej * X[2 * j, 2])
            h3 = -(a * X[2 * j + 1, 3] + ej * X[2 * j, 3])
            h4 = -(a * X[2 * j + 1, 4] + ej * X[2 * j, 4])
            HZ[0, j] = h0
            HZ[1, j] = h1
            HZ[2, j] = h2
            HZ[3, j] = h3
            HZ[4, j] = h4
            Z[0, j] += bd * h0
            Z[1, j] += bd * h1
            Z[2, j] += bd * h2
            Z[3, j] += bd * h3
            Z[4, j] += bd * h4
    else:
        for q in range(nr):
            # column by column: HZ and Z rows written contiguously
            for j in range(n_len):
                hz = -(A[j] * X[2 * j + 1, q] + e[j] * X[2 * j, q])
                HZ[q, j] = hz
                Z[q, j] = Z[q, j] + (b * D[j]) * hz
    # ---- the multiplier steps (dtheta_1..J, db):
    # dy = -F1 + b H dr + g db, dr = Z_0 + sum_k Z_k dtheta_k + Z_{J+1} db;
    # counts: sum_n M_k dy + sum_j C_kj dtheta_j = -F2_k; metric: g . dr = -(E - v)
    # (sums that only steer the step: reassociated, as the other Newton-KKT Schur complements)
    if J == 2:
        _cascade_schur2(b, g, M, P, F1, F2, ev, HZ, Z, n_len, S, rs, cv)
    elif J == 3:
        _cascade_schur3(b, g, M, P, F1, F2, ev, HZ, Z, n_len, S, rs, cv)
    else:
        _cascade_schur(b, g, M, P, F1, F2, ev, HZ, Z, J, n_len, S, rs, cv)
    _hold_pinned(S, rs, cv, J)
    if not _solve_small(S, rs, J + 1):
        return False
    if tol > 0.0:
        _leftover_steps(rs, cv, F2, J, tol)
    db = rs[J]
    if J == 2:
        r0 = rs[0]
        r1 = rs[1]
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[3, n] * db + HZ[1, n] * r0 + HZ[2, n] * r1
            dy[n] = -F1[n] + b * hdr + g[n] * db
    elif J == 3:
        r0 = rs[0]
        r1 = rs[1]
        r2 = rs[2]
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[4, n] * db + HZ[1, n] * r0 + HZ[2, n] * r1 + HZ[3, n] * r2
            dy[n] = -F1[n] + b * hdr + g[n] * db
    else:
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[J + 1, n] * db
            for k in range(1, Lc):
                hdr += HZ[k, n] * rs[k - 1]
            dy[n] = -F1[n] + b * hdr + g[n] * db
    return True


cdef void _cascade_schur2(double b, double[::1] g, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, double[:, ::1] HZ, double[:, ::1] Z, Py_ssize_t n_len, double[:, ::1] S, double[::1] rs, double[::1] cv) noexcept nogil:
    """:func:`_cascade_schur` for J = 2 (ERR's three grades): its 21 sums in one pass over
    the ranks."""
    cdef double[::1] H0
    cdef double[::1] H1
    cdef double[::1] H2
    cdef double[::1] H3
    cdef double[::1] M1
    cdef double[::1] M2
    cdef double[::1] P1
    cdef double[::1] P2
    cdef double[::1] Z0
    cdef double[::1] Z1
    cdef double[::1] Z2
    cdef double[::1] Z3
    cdef double f
    cdef double gn
    cdef double gz0
    cdef double gz1
    cdef double gz2
    cdef double gz3
    cdef double h0
    cdef double h1
    cdef double h2
    cdef double h3
    cdef double m1
    cdef double m2
    cdef Py_ssize_t n
    cdef double p1
    cdef double p11
    cdef double p12
    cdef double p2
    cdef double p22
    cdef double q1
    cdef double q2
    cdef double s1f
    cdef double s1g
    cdef double s1h0
    cdef double s1h1
    cdef double s1h2
    cdef double s1h3
    cdef double s2f
    cdef double s2g
    cdef double s2h0
    cdef double s2h1
    cdef double s2h2
    cdef double s2h3
    s1f = s1h0 = s1h1 = s1h2 = s1h3 = s1g = p11 = p12 = p1 = 0.0
    s2f = s2h0 = s2h1 = s2h2 = s2h3 = s2g = p22 = p2 = 0.0
    gz0 = gz1 = gz2 = gz3 = 0.0
    M1 = M[1]
    M2 = M[2]
    P1 = P[1]
    P2 = P[2]
    H0 = HZ[0]
    H1 = HZ[1]
    H2 = HZ[2]
    H3 = HZ[3]
    Z0 = Z[0]
    Z1 = Z[1]
    Z2 = Z[2]
    Z3 = Z[3]
    for n in range(n_len):
        m1 = M1[n]
        m2 = M2[n]
        q1 = P1[n]
        q2 = P2[n]
        gn = g[n]
        f = F1[n]
        h0 = H0[n]
        h1 = H1[n]
        h2 = H2[n]
        h3 = H3[n]
        s1f += m1 * f
        s1h0 += m1 * h0
        s1h1 += m1 * h1
        s1h2 += m1 * h2
        s1h3 += m1 * h3
        s1g += m1 * gn
        s2f += m2 * f
        s2h0 += m2 * h0
        s2h1 += m2 * h1
        s2h2 += m2 * h2
        s2h3 += m2 * h3
        s2g += m2 * gn
        p11 += q1 * q1
        p12 += q1 * q2
        p22 += q2 * q2
        p1 += q1
        p2 += q2
        gz0 += gn * Z0[n]
        gz1 += gn * Z1[n]
        gz2 += gn * Z2[n]
        gz3 += gn * Z3[n]
    rs[0] = -F2[1] + s1f - b * s1h0
    rs[1] = -F2[2] + s2f - b * s2h0
    S[0, 0] = b * s1h1 + (p1 - p11)
    S[0, 1] = b * s1h2 - p12
    S[0, 2] = b * s1h3 + s1g
    S[1, 0] = b * s2h1 - p12
    S[1, 1] = b * s2h2 + (p2 - p22)
    S[1, 2] = b * s2h3 + s2g
    cv[0] = (p1 - p11) / p1
    cv[1] = (p2 - p22) / p2
    rs[2] = -ev - gz0
    S[2, 0] = gz1
    S[2, 1] = gz2
    S[2, 2] = gz3


cdef void _cascade_schur3(double b, double[::1] g, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, double[:, ::1] HZ, double[:, ::1] Z, Py_ssize_t n_len, double[:, ::1] S, double[::1] rs, double[::1] cv) noexcept nogil:
    """:func:`_cascade_schur` for J = 3 (ERR's four grades): its 35 sums in one pass over
    the ranks (independent chains, where one pass per sum waits on each sum's own)."""
    cdef double m[3]
    cdef double q[3]
    cdef double h[5]
    cdef double sf[3]
    cdef double sg[3]
    cdef double sh[3][5]
    cdef double pp[3][3]
    cdef double ps[3]
    cdef double gz[5]
    cdef double f
    cdef double gn
    cdef Py_ssize_t i
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    for k in range(3):
        sf[k] = sg[k] = ps[k] = 0.0
        for i in range(5):
            sh[k][i] = 0.0
        for i in range(3):
            pp[k][i] = 0.0
    for i in range(5):
        gz[i] = 0.0
    for n in range(n_len):
        gn = g[n]
        f = F1[n]
        for i in range(5):
            h[i] = HZ[i, n]
            gz[i] += gn * Z[i, n]
        for k in range(3):
            m[k] = M[k + 1, n]
            q[k] = P[k + 1, n]
        for k in range(3):
            sf[k] += m[k] * f
            sg[k] += m[k] * gn
            ps[k] += q[k]
            for i in range(5):
                sh[k][i] += m[k] * h[i]
            for i in range(k, 3):
                pp[k][i] += q[k] * q[i]
    for k in range(3):
        rs[k] = -F2[k + 1] + sf[k] - b * sh[k][0]
        for i in range(3):
            S[k, i] = b * sh[k][i + 1] - pp[min(k, i)][max(k, i)]
        S[k, k] += ps[k]
        S[k, 3] = b * sh[k][4] + sg[k]
        cv[k] = (ps[k] - pp[k][k]) / ps[k]
    rs[3] = -ev - gz[0]
    for i in range(4):
        S[3, i] = gz[i + 1]


cdef void _cascade_schur(double b, double[::1] g, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, double[:, ::1] HZ, double[:, ::1] Z, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] S, double[::1] rs, double[::1] cv) noexcept nogil:
    """The (J+1) x (J+1) system of the multiplier steps of :func:`_cascade_step` into S, rs:
    count rows k = 1..J, rs = -F2_k + M_k . F1 - b M_k . HZ_0 and S[k-1, q-1] = b M_k . HZ_q
    (+ M_k . g for q = J+1, + C_kq = [k = q] sum_n p_n(k) - sum_n p_n(k) p_n(q) for q <= J);
    the metric row, rs = -(E - v) - g . Z_0 and S[J, q-1] = g . Z_q. cv[k-1] = C_kk / sum_n p_n(k),
    the relative variance of grade k's count (:func:`_hold_pinned`)."""
    cdef Py_ssize_t Lc
    cdef double[::1] Mk
    cdef double cc
    cdef Py_ssize_t jj
    cdef Py_ssize_t k
    cdef Py_ssize_t nr
    cdef double psum
    cdef Py_ssize_t q
    Lc = J + 1
    nr = J + 2
    for k in range(1, Lc):
        Mk = M[k]
        rs[k - 1] = -F2[k] + _rsum_cx(Mk, F1, 0, n_len) - b * _rsum_cx(Mk, HZ[0], 0, n_len)
        for q in range(1, nr):
            S[k - 1, q - 1] = b * _rsum_cx(Mk, HZ[q], 0, n_len)
        S[k - 1, J] += _rsum_cx(Mk, g, 0, n_len)
        for jj in range(1, Lc):
            cc = -_rsum_cx(P[k], P[jj], 0, n_len)
            if jj == k:
                psum = _rsum(P[k], 0, n_len)
                cc += psum
                cv[k - 1] = cc / psum
            S[k - 1, jj - 1] += cc
    rs[J] = -ev - _rsum_cx(g, Z[0], 0, n_len)
    for q in range(1, nr):
        S[J, q - 1] = _rsum_cx(g, Z[q], 0, n_len)


cdef void _hold_pinned(double[:, ::1] S, double[::1] rs, double[::1] cv, Py_ssize_t J) noexcept nogil:
    """Hold the multiplier of every grade k = 1..J whose count cannot move: where every p_n(k)
    is 0 or 1 to rounding (relative variance cv[k - 1] = sum_n p_n(k) (1 - p_n(k)) /
    sum_n p_n(k) <= _PIN_REL), theta_k changes no probability, so its row and column of the
    multiplier system are zero or rounding noise (times |b|, which is ~1e10 near the maximum
    of ERR) and the system is singular. Its step is set to 0: row and column cleared, unit
    diagonal, rs = 0. The other multipliers then solve the system without it."""
    cdef Py_ssize_t i
    cdef Py_ssize_t k
    for k in range(J):
        if cv[k] <= _PIN_REL:
            for i in range(J + 1):
                S[k, i] = 0.0
                S[i, k] = 0.0
            S[k, k] = 1.0
            rs[k] = 0.0


cdef void _leftover_steps(double[::1] rs, double[::1] cv, double[::1] F2, Py_ssize_t J, double tol) noexcept nogil:
    """The step of the multiplier of every grade k = 1..J whose count exceeds its target by a
    mass left on ranks where the grade is improbable: its probabilities are near 0 or 1
    (relative variance cv[k - 1] < _DECAY_CV) and its Newton step is about -1. Near ERR's
    maximum the top grade's documents fill the first ranks with probability 1 to rounding,
    and its count's residual F2_k is the grade's mass on the other ranks, proportional to
    exp(theta_k); Newton's step on it is then -F2_k / var_k = -1, which removes a factor e of
    the mass per step (linear convergence, some ten steps to the tolerance). The step is
    taken in log space instead, ln(0.1 tol / F2_k): to a tenth of the tolerance at once."""
    cdef Py_ssize_t k
    for k in range(J):
        if F2[k + 1] > tol and cv[k] < _DECAY_CV and -1.1 < rs[k] < -0.9:
            rs[k] = log(0.1 * tol / F2[k + 1])


cdef (double, double, double, double) _cascade_eval(double[:, ::1] TH, double[:, ::1] Yv, double b, Py_ssize_t k, double[::1] sp, double[::1] s, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] c, double[:, :, ::1] PP, double[:, :, ::1] V, double[:, :, ::1] MM, double[:, ::1] FF2, double[::1] Kp, double v, double[::1] pm, SoftmaxScratch sws) noexcept nogil:
    """State (:func:`_cascade_state`) and residual (:func:`_cascade_residual`) of the
    iterate in slot k of the two-slot arrays of :func:`_cascade_newton` (V[k] rows: r, A,
    e, g, D, 1 - r, F1). Returns (E, merit, stationarity, residual)."""
    cdef double E
    cdef double[:, ::1] Vk
    cdef double merit
    cdef double res
    cdef double st
    Vk = V[k]
    E = _cascade_state(TH[k], Yv[k], sp, s, Lc, n_len, c, PP[k], Vk[0], Vk[1], Vk[2], Vk[3], Vk[4],
                       MM[k], Vk[5], pm, sws)
    merit, st, res = _cascade_residual(PP[k], Yv[k], b, Vk[3], Lc, n_len, Kp, E, v, sp, Vk[6], FF2[k])
    return E, merit, st, res


cdef bint _newton_accepts(double mt, double merit, double t, double st, double res, double kkt_tol, double tol) noexcept nogil:
    """Whether a Newton-KKT trial at step t is taken (cascade and prefix kernels): Armijo on the
    squared residual, mt <= (1 - 2e-4 t) merit, or the trial meets the certificate (st, res)
    even though its merit rose. Near the maximum of ERR (|b| ~ 4e10) the merit's y-equation
    terms are rounding noise of 1e-11 to 1e-17 between nearby t while the certified
    quantities converge (trec_covid_r1 BITEM_df/10: stationarity 1.9e-9 -> 4e-19, merit 3e-17
    -> 1.5e-11; refused, 2200 linearisation steps end at the boundary instead)."""
    return isfinite(mt) and (mt <= (1.0 - 2e-4 * t) * merit + 1e-28 or (st <= kkt_tol and res <= tol))


cdef (bint, Py_ssize_t, double, double, double) _cascade_newton(double[:, ::1] Pf, Py_ssize_t J, Py_ssize_t n_len, double[::1] Kp, double[::1] s, double[::1] c, double v, double tol, double kkt_tol, Py_ssize_t max_newton, double[::1] th, double[:, ::1] W0, CascadeWorkspace cws) noexcept nogil:
    """Newton on the KKT system of a cascade metric (RR, ERR) in the variables (theta, y, b):
    p_n = softmax(theta + s' y_n), y = b dE/dr(p) at the solution, counts, E = v. From the
    start th (Lc+1: [theta, b]) with the last linearised subproblem's features W0
    (y_n = b W0[J, n] / s'_J). Each step solves the band system of :func:`_cascade_system`
    for J + 2 right-hand sides, then the (J+1) x (J+1) system of the multiplier steps; Armijo
    on the squared residual. The iterate and the trial point live in the two slots of each
    state array (an accepted trial flips the slot). Pf (Lc, N) gets p; th the multipliers.
    ``cws``: the scratch of :func:`_cascade_workspace` for these J (every entry is written
    before it is read, except FF2's, cleared here).
    Returns (certified, nit, stationarity, E, residual)."""
    cdef double[:, ::1] AB
    cdef double E
    cdef double Et
    cdef double[:, ::1] FF2
    cdef double[:, ::1] HZ
    cdef Py_ssize_t Lc
    cdef double[:, :, ::1] MM
    cdef double[:, :, ::1] PP
    cdef double[:, ::1] S
    cdef double[:, ::1] Sc
    cdef double[:, ::1] TH
    cdef double[:, :, ::1] V
    cdef double[:, ::1] Vc
    cdef double[:, ::1] X
    cdef double[:, ::1] Yv
    cdef double[:, ::1] Z
    cdef bint acc_
    cdef double b
    cdef double bt
    cdef Py_ssize_t cur
    cdef double db
    cdef double[::1] dy
    cdef Py_ssize_t k
    cdef Py_ssize_t ls
    cdef double merit
    cdef double mt
    cdef Py_ssize_t n
    cdef Py_ssize_t nit
    cdef Py_ssize_t nr
    cdef Py_ssize_t nxt
    cdef double[::1] pm
    cdef double res
    cdef double rest
    cdef double[::1] rs
    cdef double[::1] sp
    cdef double st
    cdef double stt
    cdef double t
    Lc = J + 1
    nr = J + 2
    sp = cws.sp
    TH = cws.TH
    Yv = cws.Yv
    PP = cws.PP
    V = cws.V
    MM = cws.MM
    pm = cws.pm
    FF2 = cws.FF2
    AB = cws.AB
    X = cws.X
    Sc = cws.Sc
    Z = cws.Z
    HZ = cws.HZ
    S = cws.S
    rs = cws.rs
    dy = cws.dy
    for k in range(Lc):
        sp[k] = s[k] - s[0]
    _cascade_power(sp, Lc, pm)
    for k in range(Lc):
        FF2[0, k] = 0.0
        FF2[1, k] = 0.0
    cur = 0
    for k in range(Lc):
        TH[cur, k] = th[k]
    b = th[Lc]
    for n in range(n_len):
        Yv[cur, n] = b * W0[J, n] / sp[J]
    E, merit, st, res = _cascade_eval(TH, Yv, b, cur, sp, s, Lc, n_len, c, PP, V, MM, FF2, Kp, v, pm, cws.sws)
    nit = 0
    while True:
        if st <= kkt_tol and res <= tol and isfinite(merit):
            for k in range(Lc):
                th[k] = TH[cur, k]
            th[Lc] = b
            _copy(PP[cur], Pf, Lc, n_len)
            return True, nit, st, E, res
        if nit == max_newton:
            break
        nit += 1
        Vc = V[cur]
        if not _cascade_step(b, Vc[1], Vc[2], Vc[3], Vc[4], Vc[5], MM[cur], PP[cur], Vc[6], FF2[cur], E - v,
                             J, n_len, AB, X, Z, HZ, S, rs, cws.cv, dy, Sc, tol):
            break
        db = rs[J]
        # ---- Armijo on the squared residual, the trial in the other slot
        nxt = 1 - cur
        t = 1.0
        acc_ = False
        for ls in range(_LS_STEPS):
            TH[nxt, 0] = TH[cur, 0]
            for k in range(1, Lc):
                TH[nxt, k] = TH[cur, k] + t * rs[k - 1]
            for n in range(n_len):
                Yv[nxt, n] = Yv[cur, n] + t * dy[n]
            bt = b + t * db
            Et, mt, stt, rest = _cascade_eval(TH, Yv, bt, nxt, sp, s, Lc, n_len, c, PP, V, MM, FF2, Kp, v, pm, cws.sws)
            if _newton_accepts(mt, merit, t, stt, rest, kkt_tol, tol):
                acc_ = True
                cur = nxt
                b = bt
                E, merit, st, res = Et, mt, stt, rest
                break
            t *= 0.5
        if not acc_:
            break
    return False, nit, st, E, res
