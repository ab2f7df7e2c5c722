cdef double _prefix_E_G(double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[::1] kap, double[::1] f, double c0, double[:, ::1] G, double[:, ::1] Q, bint want_G) noexcept nogil:
    """E (and, if want_G, G'_{r,n} = dE/dQ'_{r,n} = kappa'_r [f_n (1 + S_{n-1,r}) +
    sum_{m>n} f_m Q'_{m,r}]) of slot-form p: P (J+1, N) over the populated categories in
    increasing order. Q (J, N) and, without want_G, G are scratch. Row passes: Q'_r = p_{r+1}
    + Q'_{r+1}, the prefix sums S and suffix sums in four interleaved chains, E's sum in
    compensated blocks."""
    cdef double E
    cdef double[::1] Gr
    cdef double[::1] Qr
    cdef double k
    cdef Py_ssize_t n
    cdef Py_ssize_t r
    for n in range(n_len):
        Q[J - 1, n] = P[J, n]
    for r in range(J - 2, -1, -1):
        for n in range(n_len):
            Q[r, n] = P[r + 1, n] + Q[r + 1, n]
    E = c0
    for r in range(J):
        Gr = G[r]
        Qr = Q[r]
        _prefix_excl(Qr, n_len, Gr)
        for n in range(n_len):
            Gr[n] = f[n] * (1.0 + Gr[n])
        k = kap[r]
        E += k * _csum(Qr, Gr, n_len)
        if want_G:
            _suffix_excl_xy(f, Qr, n_len, Qr)      # Qr <- sum_{m>n} f_m Q'_m (Q' not needed again)
            for n in range(n_len):
                Gr[n] = k * (Gr[n] + Qr[n])
    return E


cdef void _features(double[:, ::1] G, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] Wc) noexcept nogil:
    """Category-form features of the slot form: W'(0) = 0, W'(i) = sum_{r < i} G'_r."""
    cdef Py_ssize_t i
    cdef Py_ssize_t n
    for n in range(n_len):
        Wc[0, n] = 0.0
    for i in range(1, J + 1):
        for n in range(n_len):
            Wc[i, n] = Wc[i - 1, n] + G[i - 1, n]


cpdef (double, double, double) _kkt_residual(double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[::1] alpha, double b, double[:, ::1] G, double[::1] Kp, double E, double v, double[:, ::1] F, double[:, ::1] LR, double[::1] cum, double[::1] c, bint masked = False) noexcept nogil:
    """F_{r,n} = ln p_r - ln p_{r+1} + alpha_r + b G'_{r,n} into F (J, N), the log-ratios
    given in LR (:func:`_log_ratios`, or carried along by the log-space steps), and the tail
    count residuals c_r = sum_{i > r} (sum_n p_i - K_i) into c (J) (compensated sums: the
    Newton step's count rows); returns (merit = |F|^2 + |c|^2 + e^2, stationarity =
    max |cumsum_r F|, count/metric residual). cum: (N) scratch. Row passes; the merit (it only steers the line search) reassociated,
    the counts in compensated blocks.

    ``masked`` (the Newton iterations, never a certificate): F_{r,n} = 0 where p_r or p_{r+1}
    sits on the floor (< _AT_FLOOR). Its exponential-family value underflowed, and the floor's
    log-odds are no stationarity residual: Newton cannot lower them (a trial is floored again),
    so its line search stalled on them (trec_covid_r1 GAP near the minimum: 90 of the 129 lists
    Newton left to the second run, e.g. F = 7.6 at one entry, 6e-5 elsewhere)."""
    cdef double a
    cdef bint at_floor
    cdef double cres
    cdef double d
    cdef double e
    cdef Py_ssize_t i
    cdef double merit
    cdef Py_ssize_t n
    cdef Py_ssize_t r
    cdef double st
    cdef double tail
    merit = 0.0
    st = 0.0
    for r in range(J):
        a = alpha[r]
        for n in range(n_len):
            F[r, n] = LR[r, n] + a + b * G[r, n]
        if masked:
            for n in range(n_len):
                at_floor = (P[r, n] < _AT_FLOOR) | (P[r + 1, n] < _AT_FLOOR)
                F[r, n] = 0.0 if at_floor else F[r, n]
        merit += _rsum_cx(F[r], F[r], 0, n_len)
        if r == 0:
            for n in range(n_len):
                cum[n] = F[0, n]
        else:
            for n in range(n_len):
                cum[n] += F[r, n]
        st = max(st, _absmax(cum, n_len))
    # counts of the categories (as Batch.residuals) and of the tails (the Newton rows):
    # the tail residual sum_{i>r} (sum_n p_i - K_i) from the category residuals d_i
    cres = 0.0
    tail = 0.0
    for i in range(J, -1, -1):
        d = _csum1(P[i], n_len) - Kp[i]
        cres = max(cres, abs(d))
        if i > 0:
            tail += d
            c[i - 1] = tail
            merit += tail * tail
    e = E - v
    merit += e * e
    return merit, st, max(cres, abs(e))


cdef (Py_ssize_t, Py_ssize_t, double, double, double) _prefix_one(double[:, ::1] Pf, Py_ssize_t J, Py_ssize_t n_len, double[::1] Kp, double[::1] kap, double[::1] f, double[::1] w, double c0, double v, double tol, double kkt_tol, Py_ssize_t max_newton, Py_ssize_t fallback, double[::1] th_out, bint near, PrefixWorkspace ws) noexcept nogil:
    """One interior problem of a prefix metric in slot form. Pf (J+1, N) gets p. ``near``:
    the target is within _NEAR of the range's width from an end of it. ``ws``: the scratch
    arrays of :func:`_prefix_workspace` for these J (every entry is written before it is read).

    Returns (code, nit, stationarity, E, residual): code 0 certified by Newton, 3 certified
    by successive linearisation from the start (the second run, at most ``fallback`` steps,
    for the problems Newton-KKT leaves; for a near problem also its second start), 2 not
    certified; th_out (J+2) gets [a_0 = 0, a_1, .., a_J, b] over
    the populated categories."""
    cdef double[:, :, ::1] Dinv
    cdef double E
    cdef double El
    cdef double[:, :, ::1] Ep
    cdef double Et
    cdef double[:, ::1] F
    cdef double[:, ::1] Ft
    cdef double[:, ::1] G
    cdef double[:, :, ::1] Gs
    cdef double[:, ::1] Gt
    cdef double[:, ::1] LR
    cdef double[:, ::1] LRt
    cdef Py_ssize_t Lc
    cdef Py_ssize_t N
    cdef double[:, ::1] P
    cdef double[:, ::1] Pt
    cdef double[:, ::1] Q
    cdef double[:, :, ::1] R
    cdef double[:, ::1] S
    cdef double[:, ::1] W0
    cdef double[:, ::1] W1
    cdef double[:, :, ::1] X
    cdef double[::1] Zs
    cdef double _
    cdef double a
    cdef bint acc_
    cdef double[::1] alpha
    cdef double[::1] alpha_t
    cdef Py_ssize_t attempt
    cdef double b
    cdef double bt
    cdef double[::1] c
    cdef double[::1] ct
    cdef double cur
    cdef double[:, ::1] dQ
    cdef double db
    cdef bint early
    cdef double[:, ::1] ell
    cdef double[:, ::1] ell_x
    cdef Py_ssize_t floored
    cdef Py_ssize_t i
    cdef Py_ssize_t it
    cdef Py_ssize_t ls
    cdef double merit
    cdef double mt
    cdef Py_ssize_t n
    cdef Py_ssize_t n_newton
    cdef Py_ssize_t nit
    cdef Py_ssize_t nit_s
    cdef Py_ssize_t nl
    cdef double[::1] nopw
    cdef unsigned char[::1] ok
    cdef bint ok_
    cdef double[::1] ones
    cdef bint polished
    cdef Py_ssize_t r
    cdef double res
    cdef double resl
    cdef double rest
    cdef double[::1] rs
    cdef double st
    cdef bint stalled
    cdef double stat
    cdef double stl
    cdef double stt
    cdef double t
    cdef double[:, ::1] tA
    cdef double[:, ::1] tB
    cdef double[::1] tV
    cdef double[::1] th
    Lc = J + 1
    N = Pf.shape[1]
    ok = ws.ok
    ones = ws.ones
    nopw = ws.nopw
    G = ws.G
    Q = ws.Q
    W0 = ws.W0
    W1 = ws.W1
    P = ws.P
    Pt = ws.Pt
    F = ws.F
    Gt = ws.Gt
    th = ws.th
    Zs = ws.Zs
    alpha = ws.alpha
    LR = ws.LR
    LRt = ws.LRt
    R = ws.R
    X = ws.X
    Ep = ws.Ep
    Dinv = ws.Dinv
    Gs = ws.Gs
    tA = ws.tA
    tB = ws.tB
    tV = ws.tV
    c = ws.c
    ct = ws.ct
    S = ws.S
    rs = ws.rs
    dQ = ws.dQ
    ell = ws.ell
    ell_x = ws.ell_x
    Ft = ws.Ft
    alpha_t = ws.alpha_t
    nit = 0
    n_newton = min(max_newton, _NEAR_NEWTON) if near else max_newton
    # Newton-KKT from the inexact start, then (if not certified) from a second start: away
    # from the ends, the exact start of the numpy solver (each start subproblem solved to
    # _START_TOL within _INNER_ITER steps, a failed warm start re-solved cold). The inexact
    # start's subproblems are unsolved by design, so the cold re-solve (dual residual >
    # _COLD_RES) cannot tell a failed one, and one can leave Newton too far from the KKT
    # point: trec_covid_r1 run2/16 under GAP(g=0.2,0.8) (count residual 2.2 after 3 dual
    # steps, Newton stalls, and the second run's linearisation oscillates around b = 452.22
    # for 2000 steps; from the exact start Newton certifies it in 5 steps). Near an end
    # (|b| ~ 1e4-1e5, where b can have to grow 40x from the inexact start's) Newton fails from
    # both of these; its second start there is successive linearisation until the
    # stationarity is <= _NEAR_SWITCH.
    for attempt in range(2):
        if attempt == 1 and near:
            ok_, nit_s, stat, El, resl = _linearize_run(ws.ls, J, n_len, Kp, kap, f, c0, v, tol, kkt_tol,
                                                        fallback, _FAR_TOL, P, Pt, th, W0, W1, G, Gt, Q,
                                                        _INNER_ITER, 0, _NEAR_SWITCH)
            nit += nit_s
            if not ok_ and not stat <= _NEAR_SWITCH:
                # all ``fallback`` steps taken: the second run would repeat them
                for i in range(Lc + 1):
                    th_out[i] = th[i]
                _copy(Pt, Pf, Lc, n_len)
                return 2, nit, stat, El, resl
        else:
            # ---- start (as tests.numpy_solver.newton_kkt): two steps of successive linearisation
            # from the count-only distribution, the first being the linear relaxation; each
            # subproblem is the convex dual with W = dE/dp at the iterate, its target moved 99 %
            # of the way to the range of <W, p> when out of it, the step taken with an Armijo
            # line search on the exact penalty -H(p) + mu |E(p) - v| (tests.numpy_solver.linearize)
            ok_, nit_s, stat, El, resl = _linearize_run(ws.ls, J, n_len, Kp, kap, f, c0, v, tol, kkt_tol,
                                                        _START_STEPS, _START_TOL, P, Pt, th, W0, W1, G, Gt,
                                                        Q, _START_ITER if attempt == 0 else _INNER_ITER, 0, 0.0,
                                                        _COARSE if attempt == 0 else 0)
            nit += nit_s
        if ok_:
            for i in range(Lc + 1):
                th_out[i] = th[i]
            _copy(Pt, Pf, Lc, n_len)
            return (3 if attempt == 1 and near else 0), nit, stat, El, resl
        # the last subproblem's solution (exact exponential form) starts Newton
        # ---- Newton on the KKT system (p floored and renormalised, row passes; the residual
        # masked on the floor, the certificate not)
        _floor_normalise(Pt, Lc, n_len, P, Zs)
        for r in range(J):
            alpha[r] = th[r + 1] - th[r]
        b = th[Lc]
        E = _prefix_E_G(P, J, n_len, kap, f, c0, G, Q, True)
        # the log-ratios of Pt = softmax(th, W0) from its exponents (no logarithms; exact also
        # where a p underflowed), ln p_r - ln p_{r+1} = -(alpha_r + b (W0_{r+1} - W0_r))
        for r in range(J):
            a = alpha[r]
            for n in range(n_len):
                LR[r, n] = -(a + b * (W0[r + 1, n] - W0[r, n]))
        merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c, True)
        stalled = False
        polished = False
        for it in range(n_newton):
            if st <= kkt_tol and res <= tol:
                # certify on exact logarithms of the returned p (the steps carry them along),
                # every entry counted; a p on the floor fails it: polish (below)
                _log_ratios(P, J, n_len, LR)
                merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c)
                if st <= kkt_tol and res <= tol and isfinite(merit):
                    _to_th(alpha, b, J, th_out)
                    _copy(P, Pf, Lc, n_len)
                    return 0, nit, st, E, res
                stalled = True
            early = (not stalled and not polished and st <= kkt_tol and res > tol and res <= _EARLY_RES)
            if stalled or it == n_newton - 1 or early:
                # polish: one exact linearised subproblem with W = dE/dp(p) (then certify):
                # a stalled or last iterate, or one early (_EARLY_RES)
                polished = True
                _features(G, J, n_len, W1)
                cur = 0.0
                for i in range(Lc):
                    cur += _csum(W1[i], P[i], n_len)
                _to_th(alpha, b, J, th)
                _dual_solve(ws.ls.ds, W1, ones, Lc, n_len, ok, Kp, v - E + cur, th, Pt, 0.1 * tol, _POLISH_ITER, False, nopw, th, INFINITY)
                El = _prefix_E_G(Pt, J, n_len, kap, f, c0, Gt, Q, True)
                _features(Gt, J, n_len, W0)
                stl, resl, _ = _linearised_certificate(Pt, W1, W0, Lc, n_len, Kp, th[Lc], El, v)
                nit += 1
                if resl <= tol and stl <= kkt_tol:
                    for i in range(Lc + 1):
                        th_out[i] = th[i]
                    _copy(Pt, Pf, Lc, n_len)
                    return 0, nit, stl, El, resl
                if not early or it == n_newton - 1:
                    break
                # an early polish that did not certify: Newton goes on from its iterate (the
                # polish wrote only scratch: Pt, th, W0, W1, Gt, Q)
            nit += 1
            # ---- Newton direction: X = A^{-1} [F, 1_s (s < J), G']
            if not _newton_direction(P, J, n_len, b, kap, f, w, F, G, c, E - v, R, X, Ep, Dinv, Gs,
                                     tA, tB, tV, S, rs, dQ):
                stalled = True
                continue
            db = rs[J]
            _newton_log_step(dQ, F, G, P, J, n_len, rs, db, b, kap, f, Ft, ell, Zs)
            # ---- Armijo on the squared KKT residual
            t = 1.0
            acc_ = False
            for ls in range(_LS_STEPS):
                floored = _trial_p(P, ell, t, Lc, n_len, ell_x, Pt, Zs)
                # log-ratios of the trial without logarithms: ln(p'_r / p'_{r+1}) =
                # ln(p_r / p_{r+1}) + x_r - x_{r+1} (the normalisation cancels); exact logs
                # when a probability hit the floor (and before certifying, below)
                if floored > 0:
                    _log_ratios(Pt, J, n_len, LRt)
                else:
                    for r in range(J):
                        for n in range(n_len):
                            LRt[r, n] = LR[r, n] + (ell_x[r, n] - ell_x[r + 1, n])
                for r in range(J):
                    alpha_t[r] = alpha[r] + t * rs[r]
                bt = b + t * db
                Et = _prefix_E_G(Pt, J, n_len, kap, f, c0, Gt, Q, True)
                mt, stt, rest = _kkt_residual(Pt, J, n_len, alpha_t, bt, Gt, Kp, Et, v, Ft, LRt, Zs, ct, True)
                if _newton_accepts(mt, merit, t, stt, rest, kkt_tol, tol):
                    acc_ = True
                    # the trial becomes the iterate (swap buffers)
                    P, Pt = Pt, P
                    G, Gt = Gt, G
                    F, Ft = Ft, F
                    LR, LRt = LRt, LR
                    c, ct = ct, c
                    for r in range(J):
                        alpha[r] = alpha_t[r]
                    b = bt
                    E, merit, st, res = Et, mt, stt, rest
                    break
                t *= 0.5
            stalled = not acc_
            if not acc_:
                # F was overwritten by the trials: recompute it at the iterate
                merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c, True)
    # second run: successive linearisation from the count-only distribution, for what Newton
    # left from both starts (trec_covid_r1 GAP and AP: no list of the benchmark's 5000)
    ok_, nl, stl, El, resl = _linearize_run(ws.ls, J, n_len, Kp, kap, f, c0, v, tol, kkt_tol, fallback,
                                            _FAR_TOL, P, Pt, th, W0, W1, G, Gt, Q)
    for i in range(Lc + 1):
        th_out[i] = th[i]
    _copy(Pt, Pf, Lc, n_len)
    return (3 if ok_ else 2), nit + nl, stl, El, resl


cpdef bint _newton_direction(double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, ::1] F, double[:, ::1] G, double[::1] c, double e, double[:, :, ::1] R, double[:, :, ::1] X, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, double[:, :, ::1] Gs, double[:, ::1] tA, double[:, ::1] tB, double[::1] tV, double[:, ::1] S, double[::1] rs, double[:, ::1] dQ) noexcept nogil:
    """The Newton-KKT direction at an iterate: the solves X = A^-1 [F, 1_s (s < J), G']
    (:func:`_block_thomas`; R's columns 1..J hold the constant 1_{s = r}, set once by the
    caller), the multiplier steps rs = (dalpha, db) from the (J + 1) x (J + 1) system of
    :func:`_schur` (residuals c of the tail counts and e = E - v), and
    dQ' = X_F + sum_s X_s dalpha_s + X_G db into dQ (J, N). Returns False on a singular or
    non-finite system. For J = 2 and 3 the system comes from the eliminations alone and one
    back-substitution gives dQ' (:func:`_schur_2x2`, :func:`_schur_3x3`, :func:`_combine_h`)."""
    cdef double dots[9]
    cdef Py_ssize_t nr = J + 2
    cdef Py_ssize_t r, n, s
    cdef double acc, db
    _newton_rhs(F, G, J, n_len, R)
    if J == 2:
        if not _thomas_2x2_forward(P, n_len, b, kap, f, w, R, X, Ep, Dinv, True, dots):
            return False
        _schur_2x2(dots, c, e, S, rs)
    elif J == 3:
        if not _thomas_3x3_forward(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, True, dots):
            return False
        _schur_3x3(X, n_len, nr, dots, c, e, S, rs)
    else:
        if not _block_thomas(P, J, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, Gs, tA, tB, tV, True):
            return False
        _schur(X, G, J, n_len, c, e, S, rs)
    if not _solve_small(S, rs, J + 1):
        return False
    db = rs[J]
    if J == 2 or J == 3:
        # the combination's h, then one back-substitution (the elimination is linear in the
        # right-hand side)
        _combine_h(X, J, n_len, rs, db)
        if J == 2:
            _thomas_2x2_back(X, Dinv, n_len, 0, 1)
        else:
            _thomas_3x3_back(X, Dinv, n_len, nr, 0, 1)
        acc = 0.0
        for r in range(J):
            for n in range(n_len):
                dQ[r, n] = X[r, n, 0]
            acc += _rsum(dQ[r], 0, n_len)
        # a non-finite direction (which no longer enters the multiplier system's sums) is a
        # failed solve: the sum of its entries is not finite
        return isfinite(acc)
    for r in range(J):
        for n in range(n_len):
            acc = X[r, n, 0] + X[r, n, J + 1] * db
            for s in range(J):
                acc += X[r, n, 1 + s] * rs[s]
            dQ[r, n] = acc
    return True


cdef void _newton_rhs(double[:, ::1] F, double[:, ::1] G, Py_ssize_t J, Py_ssize_t n_len, double[:, :, ::1] R) noexcept nogil:
    """Right-hand sides of the Newton-KKT solve, R[r, n] = [F_rn, 1_{s = r} (s < J), G'_rn]:
    the columns of F and G' (the constant ones, 1_{s = r}, are set once by the caller)."""
    cdef Py_ssize_t n
    cdef Py_ssize_t r
    for r in range(J):
        for n in range(n_len):
            R[r, n, 0] = F[r, n]
            R[r, n, J + 1] = G[r, n]


cdef void _schur(double[:, :, ::1] X, double[:, ::1] G, Py_ssize_t J, Py_ssize_t n_len, double[::1] c, double e, double[:, ::1] S, double[::1] rs) noexcept nogil:
    """The (J+1) x (J+1) system of the multiplier steps from the solves X (sums over ranks,
    reassociated: they steer the step, the certificate is taken on the iterate): S[r, s] =
    sum_n X_s, S[J, s] = sum G' X_s, right-hand side rs = -(sum_n X_F + c_r, sum G' X_F + e).
    (J = 2 and 3 take it from the eliminations: :func:`_schur_2x2`, :func:`_schur_3x3`.)"""
    cdef double a0
    cdef double a1
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t n
    cdef Py_ssize_t q
    cdef Py_ssize_t r
    cdef double x
    for i in range(J + 1):
        rs[i] = 0.0
        for j in range(J + 1):
            S[i, j] = 0.0
    for r in range(J):
        for q in range(J + 2):
            a0 = 0.0
            a1 = 0.0
            for n in range(n_len):
                x = X[r, n, q]
                a0 += x
                a1 += G[r, n] * x
            if q == 0:
                rs[r] -= a0
                rs[J] -= a1
            else:
                S[r, q - 1] += a0
                S[J, q - 1] += a1
        rs[r] -= c[r]
    rs[J] -= e


cdef void _schur_3x3(double[:, :, ::1] X, Py_ssize_t n_len, Py_ssize_t nr, double* dots, double[::1] c, double e, double[:, ::1] S, double[::1] rs) noexcept nogil:
    """:func:`_schur`'s system for J = 3 from :func:`_thomas_3x3_forward` alone, without
    the back-substitutions. A^-1 = Delta T^-1 Delta^T (X = Delta y), so a sum over the ranks
    of a solve is its y at the last rank, which the elimination gives (y_last = h_last):
    sum_n X_s = h_s,last (a unit column s), and sum_n X_F, sum_n X_G likewise. By symmetry
    sum G' X_s = sum_n X_G[s]; sum G' X_G and sum G' X_F are the elimination's dots."""
    cdef Py_ssize_t r, s
    cdef Py_ssize_t o
    cdef Py_ssize_t SX = X.shape[1] * nr
    cdef double* Xp = &X[0, 0, 0]
    for r in range(3):
        o = r * SX + (n_len - 1) * nr
        for s in range(3):
            S[r, s] = Xp[o + 1 + s]
        S[r, 3] = Xp[o + 4]
        S[3, r] = Xp[o + 4]
        rs[r] = -(Xp[o] + c[r])
    S[3, 3] = dots[0]
    rs[3] = -(dots[1] + e)


cdef void _schur_2x2(double* dots, double[::1] c, double e, double[:, ::1] S, double[::1] rs) noexcept nogil:
    """:func:`_schur`'s system for J = 2 from :func:`_thomas_2x2_forward`'s products alone:
    A^-1 = Delta T^-1 Delta^T (X = Delta y), so sum_n X_s[r] = 1_r^T A^-1 1_s and
    sum G' X_s = G'^T A^-1 1_s are products x^T T^-1 z of the right-hand sides, which the
    eliminations' factorisation gives as sums over ranks (:func:`_thomas_2x2_dots`)."""
    S[0, 0] = dots[2]
    S[0, 1] = dots[3]
    S[1, 0] = dots[3]
    S[1, 1] = dots[4]
    S[0, 2] = dots[5]
    S[2, 0] = dots[5]
    S[1, 2] = dots[6]
    S[2, 1] = dots[6]
    S[2, 2] = dots[0]
    rs[0] = -(dots[7] + c[0])
    rs[1] = -(dots[8] + c[1])
    rs[2] = -(dots[1] + e)


cdef void _combine_h(double[:, :, ::1] X, Py_ssize_t J, Py_ssize_t n_len, double[::1] rs, double db) noexcept nogil:
    """h of the direction's right-hand side F + sum_s dalpha_s 1_s + db G' into X[:, :, 0],
    from the eliminations' h of each column (J = 2 or 3; columns 1..J are 0 where the unit
    right-hand sides' g is)."""
    cdef Py_ssize_t r, n
    cdef double r0 = rs[0]
    cdef double r1 = rs[1]
    cdef double r2 = rs[2] if J == 3 else 0.0
    for r in range(J):
        if J == 2:
            for n in range(n_len):
                X[r, n, 0] = X[r, n, 0] + db * X[r, n, 3] + r0 * X[r, n, 1] + r1 * X[r, n, 2]
        else:
            for n in range(n_len):
                X[r, n, 0] = (X[r, n, 0] + db * X[r, n, 4] + r0 * X[r, n, 1] + r1 * X[r, n, 2]
                              + r2 * X[r, n, 3])


cdef void _newton_log_step(double[:, ::1] dQ, double[:, ::1] F, double[:, ::1] G, double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[::1] rs, double db, double b, double[::1] kap, double[::1] f, double[:, ::1] Ft, double[:, ::1] ell, double[::1] Zs) noexcept nogil:
    """Newton-KKT step in log space from the direction dQ' (:func:`_newton_direction`) and
    the multiplier steps (rs[:J], db): Ft = F + dalpha + db G' + b (Hess dQ')_r (the
    predicted log-ratio change), ell_i = sum_{r < i} Ft_r centred by p (ell (J+1, N); the
    columns of P sum to 1: every iterate is normalised)."""
    cdef Py_ssize_t Lc
    cdef double a
    cdef double hv
    cdef Py_ssize_t i
    cdef double k
    cdef Py_ssize_t n
    cdef double[::1] post
    cdef double[::1] pre
    cdef Py_ssize_t r
    Lc = J + 1
    # l_{r+1} - l_r = F + dalpha + db G' + b (Hess dQ')_r, sum_i p_i l_i = 0, with
    # (Hess dQ')_{r,n} = kappa'_r (f_n sum_{m<n} dQ'_m + sum_{m>n} f_m dQ'_m) (ell: scratch)
    pre = ell[0]
    post = ell[1]
    for r in range(J):
        k = kap[r]
        _prefix_excl(dQ[r], n_len, pre)
        _suffix_excl_xy(f, dQ[r], n_len, post)
        a = rs[r]
        for n in range(n_len):
            hv = k * (f[n] * pre[n] + post[n])
            Ft[r, n] = F[r, n] + a + db * G[r, n] + b * hv
    for n in range(n_len):
        ell[0, n] = 0.0
        Zs[n] = 0.0
    for i in range(1, Lc):
        for n in range(n_len):
            ell[i, n] = ell[i - 1, n] + Ft[i - 1, n]
            Zs[n] += P[i, n] * ell[i, n]
    for i in range(Lc):
        for n in range(n_len):
            ell[i, n] -= Zs[n]


cdef void _floor_normalise(double[:, ::1] Pin, Py_ssize_t Lc, Py_ssize_t n_len, double[:, ::1] P, double[::1] Zs) noexcept nogil:
    """P = max(Pin, _P_FLOOR) renormalised over the categories of each rank (Zs: scratch)."""
    cdef Py_ssize_t i
    cdef Py_ssize_t n
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] = max(Pin[i, n], _P_FLOOR)
    _normalise(P, Lc, n_len, Zs)


cdef void _normalise(double[:, ::1] P, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] Zs) noexcept nogil:
    """The columns of P divided by their sums (Zs: scratch), whole-row passes."""
    cdef Py_ssize_t i
    cdef Py_ssize_t n
    for n in range(n_len):
        Zs[n] = P[0, n]
    for i in range(1, Lc):
        for n in range(n_len):
            Zs[n] += P[i, n]
    for n in range(n_len):
        Zs[n] = 1.0 / max(Zs[n], 1e-300)
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] *= Zs[n]


cdef Py_ssize_t _trial_p(double[:, ::1] P, double[:, ::1] ell, double t, Py_ssize_t Lc, Py_ssize_t n_len, double[:, ::1] ell_x, double[:, ::1] Pt, double[::1] Zs) noexcept nogil:
    """Newton-KKT trial point p'_i = p_i exp(x_i) / sum_j p_j exp(x_j), x = clip(t ell, +-_MAX_EXP)
    (into ell_x), floored at _P_FLOOR; returns how many were floored. Whole-row passes
    (category-major)."""
    cdef Py_ssize_t floored
    cdef Py_ssize_t i
    cdef bint low
    cdef Py_ssize_t n
    cdef double val
    cdef double x
    floored = 0
    for i in range(Lc):
        for n in range(n_len):
            x = min(max(t * ell[i, n], -_MAX_EXP), _MAX_EXP)
            ell_x[i, n] = x
            val = P[i, n] * _fexp(x)
            low = not (val > _P_FLOOR)
            floored += low
            Pt[i, n] = _P_FLOOR if low else val
    _normalise(Pt, Lc, n_len, Zs)
    return floored


cdef void _to_th(double[::1] alpha, double b, Py_ssize_t J, double[::1] th) noexcept nogil:
    cdef Py_ssize_t r
    th[0] = 0.0
    for r in range(J):
        th[r + 1] = th[r] + alpha[r]
    th[J + 1] = b
