cdef (double, double, double) _linearised_certificate(double[:, ::1] Pt, double[:, ::1] W_lin, double[:, ::1] W_new, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] Kp, double b, double E, double v) noexcept nogil:
    """Certificate of a linearised subproblem's solution Pt (features W_lin, metric
    multiplier b): stationarity |b| max|W_new - W_lin| (W_new: the features at Pt, slot 0's
    zero), the constraint residual max(|sum_n Pt[i, n] - Kp[i]| (compensated sums), |E - v|)
    and the stationarity with the rounding allowance of
    :func:`tests.numpy_solver.linearize.stationarity`, |b| max(0, max|dW| - _W_ULPS ulp(max|W_new|))."""
    cdef double a
    cdef double d
    cdef double dmax
    cdef Py_ssize_t i
    cdef double res
    cdef double wmax
    dmax = 0.0
    wmax = 0.0
    for i in range(Lc):
        d, a = _absmax_diff(W_new[i], W_lin[i], n_len)
        dmax = d if d > dmax else dmax
        wmax = a if a > wmax else wmax
    res = 0.0
    for i in range(Lc):
        res = max(res, abs(_csum1(Pt[i], n_len) - Kp[i]))
    return abs(b) * dmax, max(res, abs(E - v)), abs(b) * max(dmax - _W_ULPS * _EPS * wmax, 0.0)


cdef bint _cascade_edge_start(double[:, ::1] P, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] Kp, double[::1] s, double[::1] c, double v, double E, double[:, ::1] X, double[:, ::1] Pu, double[:, ::1] W, double[:, ::1] Sc) noexcept nogil:
    """The start of a cascade metric's linearisation before Newton-KKT, near an end of its
    range: when the target v lies within _EDGE_START of the way from E (the count-only p in
    P) to E at the deterministic list of that end (:func:`_extreme_list`, highest category
    first above E, lowest first below), P becomes u P + (1 - u) p_end, with u the smallest on
    a grid of ln u in [-40, 0] (spacing 40 / 2^12) whose E is not past v. Returns whether P
    moved.

    Near ERR's maximum the solution holds the top ranks at the highest grade, and |b| grows
    with each rank held (about 1 / (1 - s) per rank: 1e7-1e10 on TREC lists). From the
    count-only p each linearised subproblem holds about one rank more, so |b| grows only a
    few times per step; from this start the first subproblem's |b| is within a few times
    its final value. X, Pu (Lc, >= n_len), W and Sc (:func:`_cascade_E_W`'s): scratch."""
    cdef double E_end
    cdef double hi = 0.0
    cdef double lo = -40.0
    cdef double mid
    cdef bint up = v > E
    _extreme_list(X, Lc - 1, n_len, Kp, up)
    E_end = _cascade_E_W(X, Lc, n_len, s, c, W, False, Sc)
    if not ((E_end - v) * (v - E) > 0.0 and abs(E_end - v) < _EDGE_START * abs(E_end - E)):
        return False
    for _ in range(12):
        mid = 0.5 * (lo + hi)
        _blend(P, X, exp(mid), Lc, n_len, Pu)
        if (_cascade_E_W(Pu, Lc, n_len, s, c, W, False, Sc) - v) * (E_end - E) > 0.0:
            lo = mid                        # past v: more of the counts
        else:
            hi = mid
    _blend(P, X, exp(hi), Lc, n_len, P)
    return True


cdef void _blend(double[:, ::1] A, double[:, ::1] B, double u, Py_ssize_t Lc, Py_ssize_t n_len, double[:, ::1] out) noexcept nogil:
    """out = u A + (1 - u) B over Lc rows and n_len ranks (out may be A)."""
    cdef Py_ssize_t i
    cdef Py_ssize_t n
    for i in range(Lc):
        for n in range(n_len):
            out[i, n] = u * A[i, n] + (1.0 - u) * B[i, n]


cdef (bint, Py_ssize_t, double, double, double) _linearize_run(LinScratch lsc, Py_ssize_t J, Py_ssize_t n_len, double[::1] Kp, double[::1] kap, double[::1] f, double c0, double v, double tol, double kkt_tol, Py_ssize_t steps, double far_tol, double[:, ::1] P, double[:, ::1] Pt, double[::1] th, double[:, ::1] W0, double[:, ::1] W1, double[:, ::1] G, double[:, ::1] Gt, double[:, ::1] Q, Py_ssize_t inner_iter = _INNER_ITER, Py_ssize_t kind = 0, double switch = 0.0, Py_ssize_t coarse = 0) noexcept nogil:
    """Successive linearisation (:func:`tests.numpy_solver.linearize.linearize`, one problem in
    slot form) from the count-only distribution (a cascade run before Newton-KKT near an end
    of its range: from :func:`_cascade_edge_start`), at most ``steps`` subproblems: each the
    convex dual with W = dE/dp at the iterate (inexact, dual residual ``far_tol``, while the
    stationarity is > 1e-5), its target moved 99 % of the way to the range of <W, p> when
    out of it; the step by Armijo on the exact penalty -H(p) + mu |E(p) - v| (cascade runs:
    its first trial damped, halved down to _MIN_STEP, after a reversal of b larger than half
    the last change, as the numpy code). Certified (count and metric residual <= tol,
    stationarity |b| max|W(p_l) - W_k| <= kkt_tol) on the subproblem's solution p_l, left
    in Pt with its multipliers in th (a cascade run stationary only to the rounding of W
    for more than _ROUNDING_STEPS steps ends uncertified, for Newton-KKT, whose certificate
    allows each rank's own rounding; prefix runs go on). Each subproblem starts from the
    previous one's multipliers (as the numpy code), except the second, which starts from
    the count-only multipliers when their dual value is lower (the relaxation's target is
    often moved to the edge of its range, |b| ~ 1e3-1e4, far from the next one's).

    ``inner_iter`` caps the dual Newton steps per subproblem (the start: an inexact one).
    ``switch`` > 0: return (uncertified) as soon as the stationarity is <= switch with the
    residual <= 1e-3, to start Newton-KKT there (Pt = softmax(th, W0), W0 the last
    subproblem's features).
    ``coarse`` > 0 (_COARSE: the prefix kernels' inexact start, cascade_batch's run before
    Newton-KKT): a subproblem's dual is solved over the blocks of :func:`_rank_blocks`
    (``coarse`` the ratio), features averaged per block, and its solution Pt, dual residual
    and entropy are then those of the multipliers found at every rank (one softmax at full
    resolution). The first _COARSE_STEPS subproblems only.
    ``kind``: 0 a prefix metric (kap, f, c0 of ``prefix_hessian``), 1 a cascade metric
    (kap = s, f = c of ``cascade_form``; :func:`_metric_E`), whose subproblems take the ridge
    relative to each multiplier's own curvature (as ``newton_dual``): near the maximum of ERR
    (|b| ~ 1e7-1e9, |W| ~ 1e-8) the largest diagonal's ridge dwarfs b's curvature and cut its
    steps to a few per cent (b crept for 200 steps where the numpy solver needs 20).

    Returns (certified, nit, stationarity, E(p_l), residual)."""
    cdef double D0
    cdef double E
    cdef double El
    cdef double Et
    cdef double Hc
    cdef double Hl
    cdef double Hl2
    cdef double Ht
    cdef double Ksum
    cdef Py_ssize_t Lc
    cdef Py_ssize_t M
    cdef Py_ssize_t Mc
    cdef Py_ssize_t N
    cdef double[:, ::1] Pc
    cdef double[:, ::1] Sc
    cdef double[::1] Sf
    cdef double[:, ::1] Wc
    cdef double[::1] Zf
    cdef double _
    cdef double b_last
    cdef double bl
    cdef int64_t[::1] bnd
    cdef double bot
    cdef double[::1] cc
    cdef double cur
    cdef double db
    cdef double db_last
    cdef double dres
    cdef double dres2
    cdef double[::1] gf
    cdef double hi
    cdef Py_ssize_t i
    cdef double inner
    cdef Py_ssize_t k
    cdef double lo
    cdef Py_ssize_t ls
    cdef double mu
    cdef double mu_t
    cdef Py_ssize_t n
    cdef Py_ssize_t nit
    cdef double[::1] nopw
    cdef unsigned char[::1] ok
    cdef double[::1] ones
    cdef double phi0
    cdef double phit
    cdef double[::1] pm
    cdef int64_t[::1] pref
    cdef double[::1] pw
    cdef double[::1] pwc
    cdef double q
    cdef double resl
    cdef Py_ssize_t rounding
    cdef double slack
    cdef double slope
    cdef double stat
    cdef double stat_r
    cdef double t
    cdef double t_first
    cdef double[::1] th0
    cdef double top
    cdef double vk
    cdef bint w1_fresh
    cdef double[::1] wbar
    Lc = J + 1
    N = P.shape[1]
    ok = lsc.ok                          # all 1 (read only)
    ones = lsc.ones                      # all 1 (read only)
    th0 = lsc.th0
    nopw = lsc.nopw                      # all -1 (read only): general features, no power path in the softmax
    pw = lsc.pw                          # cascade features (s'_k g_n): the power path when s' are integer multiples
    pm = lsc.pm                          # ... their multiples m_k (:func:`_cascade_power`)
    pwc = lsc.pwc                        # the blocks' power structure (cascade features)
    for i in range(Lc + 3):
        pw[i] = -1.0
        pwc[i] = -1.0
    for i in range(Lc + 1):
        pm[i] = -1.0
    if kind == 1:
        for i in range(Lc):
            th0[i] = kap[i] - kap[0]
        _cascade_power(th0, Lc, pm)
    Sc = lsc.Sc
    pref = lsc.pref                      # the extreme lists: highest category first / lowest first
    for i in range(Lc):
        pref[i] = Lc - 1 - i
    bnd = lsc.bnd
    M = _rank_blocks(n_len, coarse, bnd) if coarse > 0 else 0
    Mc = max(M, 1)
    Wc = lsc.Wc                          # the coarse subproblem: features, column weights, p
    cc = lsc.cc
    Pc = lsc.Pc
    wbar = lsc.wbar                      # ... and the full-resolution state of its multipliers
    gf = lsc.gf
    Sf = lsc.Sf
    Zf = lsc.Zf
    Ksum = 0.0
    for i in range(Lc):
        Ksum += Kp[i]
    El = 0.0
    resl = INFINITY
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] = Kp[i] / Ksum
        th[i] = log(Kp[i] / Kp[0])
    th[Lc] = 0.0
    E = _metric_E(kind, P, J, n_len, kap, f, c0, G, Q, True, Sc)
    _metric_W(kind, P, J, n_len, kap, f, G, W0, Sc)
    Hc = 0.0                    # entropy of the count-only p (constant per category)
    for i in range(Lc):
        q = Kp[i] / Ksum
        Hc -= n_len * q * log(q)
    if kind == 1 and switch > 0.0 and _cascade_edge_start(P, Lc, n_len, Kp, kap, f, v, E, W1, Pt, W0, Sc):
        E = _cascade_E_W(P, Lc, n_len, kap, f, W0, True, Sc)
        Hc = _entropy(P, Lc, n_len)
    mu = 1.0
    stat = INFINITY
    nit = 0
    t_first = 1.0
    b_last = 0.0
    db_last = 0.0
    rounding = 0
    for k in range(steps):
        cur = 0.0
        for i in range(Lc):
            cur += _csum(W0[i], P[i], n_len)
        top = _extreme_steer(W0, Lc, n_len, Kp, pref, True)
        bot = _extreme_steer(W0, Lc, n_len, Kp, pref, False)
        lo = min(top, bot)
        hi = max(top, bot)
        vk = v - E + cur
        if vk > hi:
            vk = cur + _ELASTIC * (hi - cur)
        if vk < lo:
            vk = cur + _ELASTIC * (lo - cur)
        inner = far_tol if stat > 1e-5 else 0.1 * tol
        if kind == 1 and pm[Lc] > 0.0:
            _cascade_power_rows(W0, pm, Lc, n_len, pw)
        D0 = INFINITY                     # no other start (only the second subproblem has one)
        if k == 1:
            # the relaxation's multipliers can be far from the second subproblem's (its
            # target moved to the edge of the range gives |b| ~ 1e3-1e4 where the next needs
            # ~1e2): warm start only if its dual value is below the count-only start's
            # D at the count-only multipliers (b = 0: every rank has lse = ln(sum K / K_0))
            D0 = n_len * log(Ksum / Kp[0])
            for i in range(Lc):
                th0[i] = log(Kp[i] / Kp[0])
                D0 -= th0[i] * Kp[i]
            th0[Lc] = 0.0
        if M > 0 and k < _COARSE_STEPS:
            # the dual over the blocks (column weights: their sizes), then p at every rank
            _block_means(W0, Lc, bnd, M, cc, Wc)
            if kind == 1 and pm[Lc] > 0.0:
                _cascade_power_rows(Wc, pm, Lc, M, pwc)
            _dual_solve(lsc.ds, Wc, cc, Lc, M, ok, Kp, vk, th, Pc, inner, inner_iter, kind == 1,
                        pwc if kind == 1 else nopw, th0, D0)
            _, _, Hl = _dual_state(W0, ones, Lc, n_len, ok, Kp, th, vk, Pt, wbar, gf, Sf, Zf,
                                   pw if kind == 1 else nopw)
            dres = 0.0
            for i in range(Lc + 1):
                dres = max(dres, abs(gf[i]))
        else:
            _, dres, Hl = _dual_solve(lsc.ds, W0, ones, Lc, n_len, ok, Kp, vk, th, Pt, inner, inner_iter, kind == 1,
                                      pw if kind == 1 else nopw, th0, D0)
        # cascade runs: E and the features W1 at Pt in one pass (W1 is then left as it is)
        w1_fresh = kind == 1
        if w1_fresh:
            El = _cascade_E_W(Pt, Lc, n_len, kap, f, W1, True, Sc)
        else:
            El = _metric_E(kind, Pt, J, n_len, kap, f, c0, Gt, Q, True, Sc)
        mu_t = max(mu, 2.0 * abs(th[Lc]) + 1.0)
        if dres > _COLD_RES and -Hl + mu_t * abs(El - v) > -Hc + mu_t * abs(E - v):
            # a warm start far from this subproblem's multipliers left its dual unsolved (p
            # off the counts, worse than the iterate): solve it again from the count-only
            # multipliers (as tests.numpy_solver.linearize); kept if its dual residual is lower
            for i in range(Lc + 1):
                th0[i] = th[i]
            for i in range(Lc):
                th[i] = log(Kp[i] / Kp[0])
            th[Lc] = 0.0
            w1_fresh = False                          # W1: scratch of the cold solve
            _, dres2, Hl2 = _dual_solve(lsc.ds, W0, ones, Lc, n_len, ok, Kp, vk, th, W1, inner,
                                           max(inner_iter, _COLD_ITER), kind == 1, pw if kind == 1 else nopw, th, INFINITY)
            if dres2 < dres:
                Hl = Hl2
                for i in range(Lc):
                    for n in range(n_len):
                        Pt[i, n] = W1[i, n]
                El = _metric_E(kind, Pt, J, n_len, kap, f, c0, Gt, Q, True, Sc)
            else:
                for i in range(Lc + 1):
                    th[i] = th0[i]
        if not w1_fresh:
            _metric_W(kind, Pt, J, n_len, kap, f, Gt, W1, Sc)
        bl = th[Lc]
        stat, resl, stat_r = _linearised_certificate(Pt, W0, W1, Lc, n_len, Kp, bl, El, v)
        nit += 1
        if resl <= tol and stat <= kkt_tol:
            return True, nit, stat, El, resl
        if stat <= switch and resl <= 1e-3:
            break
        if kind == 1 and resl <= tol and stat_r <= kkt_tol:
            # stationary to the rounding of dE/dp only (|b| ~ 1e6-1e9): a few more steps often
            # certify it strictly (the division-free dE/dr is accurate per element, not only
            # to ulps of its largest entry; trec_covid_r1 ERR lists at |b| ~ 3e6: 4 steps
            # more); else Newton-KKT takes it (cascade_batch), whose certificate allows the
            # rounding of each rank's own exponent
            rounding += 1
            if rounding > _ROUNDING_STEPS:
                break
        if k == steps - 1:
            break
        # damping (as tests.numpy_solver.linearize): a reversal of b larger than half its last change
        # halves the first trial step, which grows back by 1.25 per step that does not reverse.
        # Cascade runs only: a prefix problem reaches its linearisation after Newton-KKT
        db = bl - b_last
        if kind == 1 and db * db_last < 0.0 and abs(db) > 0.5 * abs(db_last):
            t_first = max(0.5 * t_first, _MIN_STEP)
        else:
            t_first = min(1.25 * t_first, 1.0)
        b_last = bl
        db_last = db
        mu = max(mu, 2.0 * abs(bl) + 1.0)
        phi0 = -Hc + mu * abs(E - v)
        slope = (abs(bl) - mu) * abs(E - v)
        slack = 1e-12 * (abs(phi0) + 1.0) + 2.0 * mu * tol
        t = 1.0
        phit = -Hl + mu * abs(El - v)
        if t_first >= 1.0 and phit <= phi0 + _ARMIJO * slope + slack:
            for i in range(Lc):
                for n in range(n_len):
                    P[i, n] = Pt[i, n]
            E, Hc = El, Hl
            for i in range(Lc):
                for n in range(n_len):
                    W0[i, n] = W1[i, n]
        else:
            t = 2.0 * t_first if t_first < 1.0 else 1.0
            Ht = Hc
            for ls in range(30):
                t *= 0.5
                for i in range(Lc):
                    for n in range(n_len):
                        W1[i, n] = P[i, n] + t * (Pt[i, n] - P[i, n])   # W1: scratch trial p
                Et = _metric_E(kind, W1, J, n_len, kap, f, c0, Gt, Q, False, Sc)
                Ht = _entropy(W1, Lc, n_len)
                if -Ht + mu * abs(Et - v) <= phi0 + _ARMIJO * t * slope + slack or ls == 29:
                    break
            for i in range(Lc):
                for n in range(n_len):
                    P[i, n] = W1[i, n]
            Hc = Ht                                     # P is the accepted trial point W1
            if kind == 1:
                E = _cascade_E_W(P, Lc, n_len, kap, f, W0, True, Sc)
            else:
                E = _metric_E(kind, P, J, n_len, kap, f, c0, G, Q, True, Sc)
                _metric_W(kind, P, J, n_len, kap, f, G, W0, Sc)
    return False, nit, stat, El, resl
