cdef bint _thomas_scalar(double[:, ::1] P, Py_ssize_t n_len, double b, double k, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, Py_ssize_t nr, double[:, :, ::1] Gs, bint unit) noexcept nogil:
    """:func:`_block_thomas` for one slot (binary metrics): scalar recurrences on raw
    pointers. E'_n = 1/p_0 + 1/p_1 + b k f_n, T_nn = E'_n + E'_{n+1} - b k w_n,
    T_{n,n+1} = -E'_{n+1}. ``unit``: column 1 of R is 1 at every rank (:func:`_thomas_2x2`'s
    ``unit``), so its eliminated right-hand side is 0 above the last rank: written, not
    computed."""
    cdef const double* P0 = &P[0, 0]
    cdef const double* P1 = &P[1, 0]
    cdef const double* Rp = &R[0, 0, 0]
    cdef double* Xp = &X[0, 0, 0]
    cdef double* G = &Gs[0, 0, 0]
    cdef Py_ssize_t SG = Gs.shape[1] * Gs.shape[2]
    cdef double acc
    cdef double bk
    cdef double d
    cdef double dinv
    cdef double dinv_prev
    cdef double e_n
    cdef double e_next
    cdef double en1
    cdef double fac
    cdef Py_ssize_t n
    cdef Py_ssize_t q
    cdef Py_ssize_t o
    cdef double rt
    cdef double y
    bk = b * k
    # G[n * SG] (Gs[n, 0, 0]) holds 1/D_n and G[n * SG + 1] E'_{n+1} for the backward pass
    # (g_n goes to X, then y overwrites it)
    e_next = 0.0
    if n_len > 0:
        e_next = 1.0 / max(P1[0], 1.0 / _PINV_MAX) + 1.0 / max(P0[0], 1.0 / _PINV_MAX) + bk * f[0]
    dinv_prev = 0.0
    for n in range(n_len):
        e_n = e_next
        if n + 1 < n_len:
            e_next = (1.0 / max(P1[n + 1], 1.0 / _PINV_MAX) + 1.0 / max(P0[n + 1], 1.0 / _PINV_MAX)
                      + bk * f[n + 1])
        else:
            e_next = 0.0
        d = e_n + e_next - bk * w[n]
        if n > 0:
            d -= e_n * e_n * dinv_prev
        if not (d != 0.0) or not isfinite(d):
            return False
        dinv = 1.0 / d
        fac = e_n * dinv_prev
        for q in range(nr):
            o = n * nr + q
            if unit and q == 1 and n + 1 < n_len:
                Xp[o] = 0.0
                continue
            rt = Rp[o] - (Rp[o + nr] if n + 1 < n_len else 0.0)
            if n > 0:
                rt += fac * Xp[o - nr]
            Xp[o] = rt
        G[n * SG] = dinv
        G[n * SG + 1] = e_next
        dinv_prev = dinv
    for n in range(n_len - 1, -1, -1):
        dinv = G[n * SG]
        en1 = G[n * SG + 1]
        for q in range(nr):
            o = n * nr + q
            acc = Xp[o]
            if n + 1 < n_len:
                acc += en1 * Xp[o + nr]
            y = dinv * acc
            if not isfinite(y):
                return False
            Xp[o] = y
    for n in range(n_len - 1, 0, -1):
        for q in range(nr):
            o = n * nr + q
            Xp[o] -= Xp[o - nr]
    return True


cdef (double, double, double) _sym_sandwich(double ta, double tc, double td, double pa, double pc, double pd, double ea, double ec, double ed) noexcept nogil:
    """(ta, tc, td) - E D E for symmetric 2 x 2 blocks held as (a, c, d) = [[a, c], [c, d]]:
    D = (pa, pc, pd), E = (ea, ec, ed) (:func:`_thomas_2x2`'s Schur complement), expanded so
    that D enters last, (E D E)_aa = ea^2 pa + 2 ea ec pc + ec^2 pd and likewise: from D, a
    chain of three multiply-adds per entry (the elimination's latency chain runs through D)."""
    return (ta - (ea * ea) * pa - (2.0 * ea * ec) * pc - (ec * ec) * pd,
            tc - (ea * ec) * pa - (ea * ed + ec * ec) * pc - (ec * ed) * pd,
            td - (ec * ec) * pa - (2.0 * ec * ed) * pc - (ed * ed) * pd)


cdef (bint, double, double, double) _sym_inverse(double ta, double tc, double td) noexcept nogil:
    """(ok, inverse) of the symmetric 2 x 2 block (ta, tc, td) by its adjugate; ok is False
    when its determinant is 0 or not finite."""
    cdef double det
    cdef double idet
    det = ta * td - tc * tc
    if not (det != 0.0) or not isfinite(det):
        return False, 0.0, 0.0, 0.0
    idet = 1.0 / det
    return True, td * idet, -tc * idet, ta * idet


cdef inline void _thomas_2x2_coef(double[:, ::1] P, double[::1] f, double k0, double k1, double fl, double* E3, Py_ssize_t NE, Py_ssize_t n) noexcept nogil:
    """E'_n, the p-part of rank n's block in :func:`_thomas_2x2` (a symmetric tridiagonal
    2 x 2 block of 1/p over the three grades, plus b kappa' f_n on its diagonal), into E3[:, n]."""
    cdef double i0
    cdef double i1
    cdef double i2
    i0 = 1.0 / max(P[0, n], fl)
    i1 = 1.0 / max(P[1, n], fl)
    i2 = 1.0 / max(P[2, n], fl)
    E3[0 * NE + n] = i1 + i0 + k0 * f[n]
    E3[1 * NE + n] = -i1
    E3[2 * NE + n] = i2 + i1 + k1 * f[n]


cdef inline (bint, double, double, double) _thomas_2x2_rank(double* E3, Py_ssize_t NE, double[:, :, ::1] R, double[:, :, ::1] X, double[:, :, ::1] Dinv, double[::1] w, double k0, double k1, Py_ssize_t n, bint has_next, bint coupled, Py_ssize_t ie, Py_ssize_t prev, Py_ssize_t im, double pa, double pc, double pd, bint zero12, double* dots) noexcept nogil:
    """One rank n of an elimination of :func:`_thomas_2x2` (top or bottom): the block
    T_nn = E'_n (+ E'_{n+1} if has_next) - b w_n diag(kappa'), minus E'_ie D E'_ie if coupled
    (D = (pa, pc, pd), the inverse of the previous rank's block, ``prev``), and its inverse
    D_n^-1; then h_n = D_n^-1 (R_n (- R_{n+1} if has_next) (+ E'_ie h_prev if coupled)) into
    X[:, n] (columns 1 and 2 set to 0 if zero12: :func:`_thomas_2x2`'s ``unit``) and the
    back-substitution's matrix D_n^-1 E'_im into Dinv[n]; the rank's terms g_n . h_n of
    :func:`_thomas_2x2_dots` added to dots. Returns (ok, D_n^-1)."""
    cdef double ea
    cdef double ec
    cdef double ed
    cdef double fa
    cdef double fc
    cdef double fd
    cdef double h0
    cdef double h1
    cdef double na
    cdef double nc
    cdef double nd
    cdef bint ok
    cdef Py_ssize_t q
    cdef double r0
    cdef double r1
    cdef double g0[4]
    cdef double g1[4]
    cdef double y0[4]
    cdef double y1[4]
    cdef double ta
    cdef double tc
    cdef double td
    ta = E3[0 * NE + n] - k0 * w[n]
    tc = E3[1 * NE + n]
    td = E3[2 * NE + n] - k1 * w[n]
    if has_next:
        ta += E3[0 * NE + n + 1]
        tc += E3[1 * NE + n + 1]
        td += E3[2 * NE + n + 1]
    ea = E3[0 * NE + ie]
    ec = E3[1 * NE + ie]
    ed = E3[2 * NE + ie]
    if coupled:
        ta, tc, td = _sym_sandwich(ta, tc, td, pa, pc, pd, ea, ec, ed)
    ok, na, nc, nd = _sym_inverse(ta, tc, td)
    if not ok:
        return False, 0.0, 0.0, 0.0
    for q in range(4):
        if zero12 and (q == 1 or q == 2):
            X[0, n, q] = 0.0
            X[1, n, q] = 0.0
            g0[q] = g1[q] = y0[q] = y1[q] = 0.0
            continue
        r0 = R[0, n, q]
        r1 = R[1, n, q]
        if has_next:
            r0 -= R[0, n + 1, q]
            r1 -= R[1, n + 1, q]
        if coupled:
            h0 = X[0, prev, q]
            h1 = X[1, prev, q]
            r0 += ea * h0 + ec * h1
            r1 += ec * h0 + ed * h1
        h0 = na * r0 + nc * r1
        h1 = nc * r0 + nd * r1
        X[0, n, q] = h0
        X[1, n, q] = h1
        g0[q] = r0
        g1[q] = r1
        y0[q] = h0
        y1[q] = h1
    _thomas_2x2_dots(g0, g1, y0, y1, dots, not zero12)
    fa = E3[0 * NE + im]
    fc = E3[1 * NE + im]
    fd = E3[2 * NE + im]
    Dinv[n, 0, 0] = na * fa + nc * fc
    Dinv[n, 0, 1] = na * fc + nc * fd
    Dinv[n, 1, 0] = nc * fa + nd * fc
    Dinv[n, 1, 1] = nc * fc + nd * fd
    return True, na, nc, nd


cdef inline void _thomas_2x2_dots(double* g0, double* g1, double* y0, double* y1, double* dots, bint units) noexcept nogil:
    """One rank's terms of the products x^T T^-1 z = sum_n g_x,n . h_z,n (T = N Delta N^T,
    the two eliminations' twisted factorisation; g the eliminated right-hand side, h = y at
    the meeting rank) over the columns (F, 1_0, 1_1, G') of the Newton-KKT solve, into
    dots: [G'G', G'F, 1_0 1_0, 1_0 1_1, 1_1 1_1, 1_0 G', 1_1 G', 1_0 F, 1_1 F] (:func:`_schur_2x2`).
    ``units``: the unit columns' terms too (their g is 0 in the top elimination)."""
    dots[0] += g0[3] * y0[3] + g1[3] * y1[3]
    dots[1] += g0[3] * y0[0] + g1[3] * y1[0]
    if units:
        dots[2] += g0[1] * y0[1] + g1[1] * y1[1]
        dots[3] += g0[1] * y0[2] + g1[1] * y1[2]
        dots[4] += g0[2] * y0[2] + g1[2] * y1[2]
        dots[5] += g0[1] * y0[3] + g1[1] * y1[3]
        dots[6] += g0[2] * y0[3] + g1[2] * y1[3]
        dots[7] += g0[1] * y0[0] + g1[1] * y1[0]
        dots[8] += g0[2] * y0[0] + g1[2] * y1[0]


cdef inline void _thomas_2x2_back_rank(double[:, :, ::1] X, double[:, :, ::1] Dinv, Py_ssize_t n, Py_ssize_t nb, Py_ssize_t q0, Py_ssize_t q1) noexcept nogil:
    """One rank n of a back-substitution of :func:`_thomas_2x2` for columns q0..q1-1:
    y_n = h_n + M_n y_nb (h_n in X[:, n], M_n in Dinv[n]: :func:`_thomas_2x2_rank`) with the
    neighbour nb already solved, in place in X[:, n]: two multiply-adds from y_nb."""
    cdef double m00
    cdef double m01
    cdef double m10
    cdef double m11
    cdef Py_ssize_t q
    cdef double y0
    cdef double y1
    m00 = Dinv[n, 0, 0]
    m01 = Dinv[n, 0, 1]
    m10 = Dinv[n, 1, 0]
    m11 = Dinv[n, 1, 1]
    for q in range(q0, q1):
        y0 = X[0, nb, q]
        y1 = X[1, nb, q]
        X[0, n, q] += m00 * y0 + m01 * y1
        X[1, n, q] += m10 * y0 + m11 * y1


cdef bint _thomas_2x2(double[:, ::1] P, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, Py_ssize_t nr, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, bint unit = False) noexcept nogil:
    """:func:`_block_thomas` for two slots (three populated grades):
    :func:`_thomas_2x2_forward`, then :func:`_thomas_2x2_back` on every column."""
    cdef double dots[9]
    if not _thomas_2x2_forward(P, n_len, b, kap, f, w, R, X, Ep, Dinv, unit, dots):
        return False
    _thomas_2x2_back(X, Dinv, n_len, 0, 4)
    return True


cdef bint _thomas_2x2_forward(double[:, ::1] P, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, bint unit, double* dots) noexcept nogil:
    """The eliminations of :func:`_block_thomas` for two slots with closed-form 2 x 2
    blocks: symmetric blocks held as (a, c, d) = [[a, c], [c, d]]; E'_n in three contiguous
    rows of Ep's memory.

    Two-sided ("burn at both ends"): one recurrence eliminates from the top (D_n =
    T_nn - E'_n D_{n-1}^-1 E'_n, g_n = Rt_n + E'_n h_{n-1}, n < m), another from the bottom
    (U_n = T_nn - E'_{n+1} U_{n+1}^-1 E'_{n+1}, g_n likewise, n > m), in one loop so that their
    latency chains (a division per rank) overlap; each rank keeps h_n = D_n^-1 g_n and
    M_n = D_n^-1 E'_{n+1} (U_n^-1 E'_n below m). They meet at m = n_len // 2, where
    S_m = T_mm - E'_m D_{m-1}^-1 E'_m - E'_{m+1} U_{m+1}^-1 E'_{m+1} gives y_m (into X[:, m]),
    and two interleaved back-substitutions (:func:`_thomas_2x2_back`) give y_n = h_n + M_n y_{n+1}
    above m and y_n = h_n + M_n y_{n-1} below it. E'_n in a pass of its own (its three
    divisions per rank stay out of the eliminations' latency chains). dots gets the products
    of :func:`_thomas_2x2_dots` summed over the ranks.

    Always nr = J + 2 = 4 right-hand sides, looped over as a constant. The back-substitutions
    do not check finiteness per entry: a non-finite solve makes the system of the multiplier
    steps non-finite, whose solve (:func:`_solve_small`) fails.

    ``unit``: columns 1 and 2 of R are 1_{s = r} at every rank (the Newton-KKT solve's), so
    R_n - R_{n+1} is 0 there above the last rank and the top elimination's g_n is 0 in them:
    written, not computed (the same X)."""
    cdef double* E3
    cdef Py_ssize_t NE
    cdef double ea
    cdef double ec
    cdef double ed
    cdef double fa
    cdef double fc
    cdef double fd
    cdef double fl
    cdef double h0
    cdef double h1
    cdef Py_ssize_t k
    cdef double k0
    cdef double k1
    cdef Py_ssize_t m
    cdef Py_ssize_t n
    cdef double na
    cdef Py_ssize_t nbot
    cdef double nc
    cdef double nd
    cdef bint ok
    cdef double pa
    cdef double pc
    cdef double pd
    cdef Py_ssize_t q
    cdef double qa
    cdef double qc
    cdef double qd
    cdef double r0
    cdef double r1
    cdef Py_ssize_t s
    cdef double ta
    cdef double tc
    cdef double td
    cdef double g0[4]
    cdef double g1[4]
    cdef double z0[4]
    cdef double z1[4]
    # E'_n in three contiguous rows of Ep's memory (4 N doubles): E3[z * NE + n]
    NE = Ep.shape[0]
    E3 = &Ep[0, 0, 0]
    k0 = b * kap[0]
    k1 = b * kap[1]
    fl = 1.0 / _PINV_MAX
    for n in range(n_len):
        _thomas_2x2_coef(P, f, k0, k1, fl, E3, NE, n)
    for q in range(9):
        dots[q] = 0.0
    if n_len == 0:
        return True
    m = n_len // 2
    nbot = n_len - 1 - m
    pa = 0.0    # D_{n-1}^-1 of the top recurrence
    pc = 0.0
    pd = 0.0
    qa = 0.0    # U_{n+1}^-1 of the bottom recurrence
    qc = 0.0
    qd = 0.0
    # both eliminations in one loop body (so that their division chains overlap); the helper
    # per rank is inline
    for k in range(m):
        # top: rank k (its next rank k + 1 <= m: always there), coupled to k - 1
        ok, pa, pc, pd = _thomas_2x2_rank(E3, NE, R, X, Dinv, w, k0, k1, k, True, k > 0, k, k - 1, k + 1,
                                          pa, pc, pd, unit, dots)
        if not ok:
            return False
        if k < nbot:
            # bottom: rank n_len - 1 - k (> m), coupled to the rank after it
            n = n_len - 1 - k
            ok, qa, qc, qd = _thomas_2x2_rank(E3, NE, R, X, Dinv, w, k0, k1, n, k > 0, k > 0, n + 1,
                                              n + 1, n, qa, qc, qd, False, dots)
            if not ok:
                return False
    # ---- the meeting rank m: both Schur complements (T_mm assembled as in _thomas_2x2_rank)
    ta = E3[0 * NE + m] - k0 * w[m]
    tc = E3[1 * NE + m]
    td = E3[2 * NE + m] - k1 * w[m]
    if m + 1 < n_len:
        ta += E3[0 * NE + m + 1]
        tc += E3[1 * NE + m + 1]
        td += E3[2 * NE + m + 1]
    ea = E3[0 * NE + m]
    ec = E3[1 * NE + m]
    ed = E3[2 * NE + m]
    fa = 0.0
    fc = 0.0
    fd = 0.0
    if m > 0:
        ta, tc, td = _sym_sandwich(ta, tc, td, pa, pc, pd, ea, ec, ed)
    if m + 1 < n_len:
        fa = E3[0 * NE + m + 1]
        fc = E3[1 * NE + m + 1]
        fd = E3[2 * NE + m + 1]
        ta, tc, td = _sym_sandwich(ta, tc, td, qa, qc, qd, fa, fc, fd)
    ok, na, nc, nd = _sym_inverse(ta, tc, td)
    if not ok:
        return False
    for q in range(4):
        r0 = R[0, m, q]
        r1 = R[1, m, q]
        if m + 1 < n_len:
            r0 -= R[0, m + 1, q]
            r1 -= R[1, m + 1, q]
            h0 = X[0, m + 1, q]
            h1 = X[1, m + 1, q]
            r0 += fa * h0 + fc * h1
            r1 += fc * h0 + fd * h1
        if m > 0:
            h0 = X[0, m - 1, q]
            h1 = X[1, m - 1, q]
            r0 += ea * h0 + ec * h1
            r1 += ec * h0 + ed * h1
        h0 = na * r0 + nc * r1
        h1 = nc * r0 + nd * r1
        if not (isfinite(h0) and isfinite(h1)):
            return False
        X[0, m, q] = h0
        X[1, m, q] = h1
        g0[q] = r0
        g1[q] = r1
        z0[q] = h0
        z1[q] = h1
    _thomas_2x2_dots(g0, g1, z0, z1, dots, True)
    return True


cdef void _thomas_2x2_back(double[:, :, ::1] X, double[:, :, ::1] Dinv, Py_ssize_t n_len, Py_ssize_t q0, Py_ssize_t q1) noexcept nogil:
    """The back-substitutions of :func:`_thomas_2x2_forward` for columns q0..q1-1 of X, from
    the meeting rank upwards and downwards (interleaved), then the differences y_n - y_{n-1}
    (each column's previous y carried in a register), in place."""
    cdef double[:, ::1] Xs
    cdef double c
    cdef Py_ssize_t k
    cdef Py_ssize_t m
    cdef Py_ssize_t n
    cdef Py_ssize_t nbot
    cdef double p
    cdef Py_ssize_t q
    cdef Py_ssize_t s
    m = n_len // 2
    nbot = n_len - 1 - m
    for k in range(1, m + 1):
        _thomas_2x2_back_rank(X, Dinv, m - k, m - k + 1, q0, q1)
        if k <= nbot:
            _thomas_2x2_back_rank(X, Dinv, m + k, m + k - 1, q0, q1)
    for s in range(2):
        Xs = X[s]
        for q in range(q0, q1):
            p = Xs[0, q]
            for n in range(1, n_len):
                c = Xs[n, q]
                Xs[n, q] = c - p
                p = c


cdef bint _thomas_3x3(double[:, ::1] P, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, Py_ssize_t nr, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, bint unit) noexcept nogil:
    """:func:`_block_thomas` for three slots (four populated grades: graded metrics on 0-3
    scales): :func:`_thomas_3x3_forward`, then :func:`_thomas_3x3_back` on every column."""
    cdef double dots[2]
    if not _thomas_3x3_forward(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, unit, dots):
        return False
    _thomas_3x3_back(X, Dinv, n_len, nr, 0, nr)
    return True


cdef bint _thomas_3x3_forward(double[:, ::1] P, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, Py_ssize_t nr, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, bint unit, double* dots) noexcept nogil:
    """The elimination of :func:`_block_thomas` for three slots with closed-form 3 x 3
    blocks, on raw pointers. E'_n is symmetric tridiagonal, held as (e00, e01, e11, e12, e22)
    in Ep[n]'s memory; the inverse D_n^-1 of each pivot block (symmetric) by its adjugate.
    The elimination keeps h_n = D_n^-1 g_n in X[:, n] and M_n = D_n^-1 E'_{n+1} in Dinv[n],
    so that the back-substitution (:func:`_thomas_3x3_back`) is y_n = h_n + M_n y_{n+1};
    g_{n+1} = Rt_{n+1} + E'_{n+1} h_n. ``unit``: columns 1-3 of R are 1_{s = r} at every
    rank (:func:`_thomas_2x2`'s ``unit``), so their g_n and h_n are 0 above the last rank:
    written, not computed.

    T = L D L^T, so for right-hand sides x and z, x^T T^-1 z = sum_n g_x,n . h_z,n: dots
    gets that sum for (the last column, itself) and (the last column, the first), which are
    G'^T A^-1 G' and G'^T A^-1 F of the Newton-KKT solve (:func:`_schur_3x3`)."""
    cdef const double* Pp = &P[0, 0]
    cdef Py_ssize_t SP = P.shape[1]
    cdef double* E = &Ep[0, 0, 0]
    cdef double* M = &Dinv[0, 0, 0]
    cdef const double* Rp = &R[0, 0, 0]
    cdef double* Xp = &X[0, 0, 0]
    cdef Py_ssize_t SR = R.shape[1] * nr
    cdef Py_ssize_t SX = X.shape[1] * nr
    cdef double k0 = b * kap[0]
    cdef double k1 = b * kap[1]
    cdef double k2 = b * kap[2]
    cdef double fl = 1.0 / _PINV_MAX
    cdef double i0, i1, i2, i3, wn
    cdef double e00, e01, e11, e12, e22, g00, g01, g11, g12, g22
    cdef double t00, t01, t02, t11, t12, t22, c00, c01, c02, c11, c12, c22, det, idet
    cdef double m00, m01, m02, m10, m11, m12, m20, m21, m22
    cdef double r0, r1, r2, h0, h1, h2, y0, y1, y2
    cdef Py_ssize_t n, q, o
    cdef bint nxt
    cdef double dgg = 0.0
    cdef double dgf = 0.0
    dots[0] = 0.0
    dots[1] = 0.0
    m00 = m01 = m02 = m10 = m11 = m12 = m20 = m21 = m22 = 0.0
    if n_len == 0:
        return True
    for n in range(n_len):
        i0 = 1.0 / max(Pp[n], fl)
        i1 = 1.0 / max(Pp[SP + n], fl)
        i2 = 1.0 / max(Pp[2 * SP + n], fl)
        i3 = 1.0 / max(Pp[3 * SP + n], fl)
        E[9 * n] = i1 + i0 + k0 * f[n]
        E[9 * n + 1] = -i1
        E[9 * n + 2] = i2 + i1 + k1 * f[n]
        E[9 * n + 3] = -i2
        E[9 * n + 4] = i3 + i2 + k2 * f[n]
    for n in range(n_len):
        nxt = n + 1 < n_len
        e00 = E[9 * n]
        e01 = E[9 * n + 1]
        e11 = E[9 * n + 2]
        e12 = E[9 * n + 3]
        e22 = E[9 * n + 4]
        wn = w[n]
        t00 = e00 - k0 * wn
        t01 = e01
        t02 = 0.0
        t11 = e11 - k1 * wn
        t12 = e12
        t22 = e22 - k2 * wn
        if nxt:
            t00 += E[9 * n + 9]
            t01 += E[9 * n + 10]
            t11 += E[9 * n + 11]
            t12 += E[9 * n + 12]
            t22 += E[9 * n + 13]
        if n > 0:
            # T -= E'_n M_{n-1} (M_{n-1} = D_{n-1}^-1 E'_n, carried from the previous rank in
            # m00..m22; the product is symmetric)
            t00 -= e00 * m00 + e01 * m10
            t01 -= e00 * m01 + e01 * m11
            t02 -= e00 * m02 + e01 * m12
            t11 -= e01 * m01 + e11 * m11 + e12 * m21
            t12 -= e01 * m02 + e11 * m12 + e12 * m22
            t22 -= e12 * m12 + e22 * m22
        c00 = t11 * t22 - t12 * t12
        c01 = t02 * t12 - t01 * t22
        c02 = t01 * t12 - t02 * t11
        c11 = t00 * t22 - t02 * t02
        c12 = t01 * t02 - t00 * t12
        c22 = t00 * t11 - t01 * t01
        det = t00 * c00 + t01 * c01 + t02 * c02
        if not (det != 0.0) or not isfinite(det):
            return False
        # D_n^-1 = adj / det: products with the adjugate first, the division's result last
        # (the division is the longest step of the chain from rank to rank)
        idet = 1.0 / det
        for q in range(nr):
            o = n * nr + q
            if unit and nxt and 1 <= q <= 3:
                Xp[o] = 0.0
                Xp[SX + o] = 0.0
                Xp[2 * SX + o] = 0.0
                continue
            r0 = Rp[o]
            r1 = Rp[SR + o]
            r2 = Rp[2 * SR + o]
            if nxt:
                r0 -= Rp[o + nr]
                r1 -= Rp[SR + o + nr]
                r2 -= Rp[2 * SR + o + nr]
            if n > 0:
                h0 = Xp[o - nr]
                h1 = Xp[SX + o - nr]
                h2 = Xp[2 * SX + o - nr]
                r0 += e00 * h0 + e01 * h1
                r1 += e01 * h0 + e11 * h1 + e12 * h2
                r2 += e12 * h1 + e22 * h2
            h0 = (c00 * r0 + c01 * r1 + c02 * r2) * idet
            h1 = (c01 * r0 + c11 * r1 + c12 * r2) * idet
            h2 = (c02 * r0 + c12 * r1 + c22 * r2) * idet
            Xp[o] = h0
            Xp[SX + o] = h1
            Xp[2 * SX + o] = h2
            if q == nr - 1:
                o = n * nr
                dgg += r0 * h0 + r1 * h1 + r2 * h2
                dgf += r0 * Xp[o] + r1 * Xp[SX + o] + r2 * Xp[2 * SX + o]
        if nxt:
            # M_n = D_n^-1 E'_{n+1}
            g00 = E[9 * n + 9]
            g01 = E[9 * n + 10]
            g11 = E[9 * n + 11]
            g12 = E[9 * n + 12]
            g22 = E[9 * n + 13]
            m00 = (c00 * g00 + c01 * g01) * idet
            m01 = (c00 * g01 + c01 * g11 + c02 * g12) * idet
            m02 = (c01 * g12 + c02 * g22) * idet
            m10 = (c01 * g00 + c11 * g01) * idet
            m11 = (c01 * g01 + c11 * g11 + c12 * g12) * idet
            m12 = (c11 * g12 + c12 * g22) * idet
            m20 = (c02 * g00 + c12 * g01) * idet
            m21 = (c02 * g01 + c12 * g11 + c22 * g12) * idet
            m22 = (c12 * g12 + c22 * g22) * idet
            o = 9 * n
            M[o] = m00
            M[o + 1] = m01
            M[o + 2] = m02
            M[o + 3] = m10
            M[o + 4] = m11
            M[o + 5] = m12
            M[o + 6] = m20
            M[o + 7] = m21
            M[o + 8] = m22
    dots[0] = dgg
    dots[1] = dgf
    return True


cdef void _thomas_3x3_back(double[:, :, ::1] X, double[:, :, ::1] Dinv, Py_ssize_t n_len, Py_ssize_t nr, Py_ssize_t q0, Py_ssize_t q1) noexcept nogil:
    """The back-substitution of :func:`_thomas_3x3_forward` for columns q0..q1-1 of X:
    y_n = h_n + M_n y_{n+1}, then the differences y_n - y_{n-1}, in place."""
    cdef double* M = &Dinv[0, 0, 0]
    cdef double* Xp = &X[0, 0, 0]
    cdef Py_ssize_t SX = X.shape[1] * nr
    cdef double m00, m01, m02, m10, m11, m12, m20, m21, m22, y0, y1, y2
    cdef Py_ssize_t n, q, o
    for n in range(n_len - 2, -1, -1):
        o = 9 * n
        m00 = M[o]
        m01 = M[o + 1]
        m02 = M[o + 2]
        m10 = M[o + 3]
        m11 = M[o + 4]
        m12 = M[o + 5]
        m20 = M[o + 6]
        m21 = M[o + 7]
        m22 = M[o + 8]
        for q in range(q0, q1):
            o = n * nr + q
            y0 = Xp[o + nr]
            y1 = Xp[SX + o + nr]
            y2 = Xp[2 * SX + o + nr]
            Xp[o] += m00 * y0 + m01 * y1 + m02 * y2
            Xp[SX + o] += m10 * y0 + m11 * y1 + m12 * y2
            Xp[2 * SX + o] += m20 * y0 + m21 * y1 + m22 * y2
    for n in range(n_len - 1, 0, -1):
        for q in range(q0, q1):
            o = n * nr + q
            Xp[o] -= Xp[o - nr]
            Xp[SX + o] -= Xp[SX + o - nr]
            Xp[2 * SX + o] -= Xp[2 * SX + o - nr]


cpdef bint _block_thomas(double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double b, double[::1] kap, double[::1] f, double[::1] w, double[:, :, ::1] R, double[:, :, ::1] X, Py_ssize_t nr, double[:, :, ::1] Ep, double[:, :, ::1] Dinv, double[:, :, ::1] Gs, double[:, ::1] tmpA, double[:, ::1] tmpB, double[::1] tmpV, bint unit = False) noexcept nogil:
    """Solve (E_H - b Hess) X = R for nr right-hand sides (R, X: (J, N, nr)) through the
    block-tridiagonal T of :mod:`tests.numpy_solver.newton_kkt` (y = prefix sums of X):
    T_{n,n} = E'_n + E'_{n+1} - b w_n diag(kappa'), T_{n,n+1} = -E'_{n+1},
    E'_n = E_{H,n} + b f_n diag(kappa'); right-hand side R_n - R_{n+1}. Block Thomas
    (LDL^T without pivoting across blocks, Gauss-Jordan within a J x J block). ``unit``:
    R's columns 1..J are the unit right-hand sides 1_{s = r} (:func:`_thomas_2x2` uses it).
    Returns False on a singular or non-finite block."""
    cdef double acc
    cdef double ih
    cdef double il
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t q
    cdef Py_ssize_t r
    cdef Py_ssize_t s
    cdef double v
    if J == 1:
        return _thomas_scalar(P, n_len, b, kap[0], f, w, R, X, nr, Gs, unit)
    if J == 2:
        return _thomas_2x2(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, unit)
    if J == 3:
        return _thomas_3x3(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, unit)
    # E'_n for every rank: Ep (N, J, J)
    for n in range(n_len):
        for r in range(J):
            for s in range(J):
                Ep[n, r, s] = 0.0
        for r in range(J):
            ih = 1.0 / max(P[r + 1, n], 1.0 / _PINV_MAX)
            il = 1.0 / max(P[r, n], 1.0 / _PINV_MAX)
            Ep[n, r, r] = ih + il + b * f[n] * kap[r]
            if r + 1 < J:
                Ep[n, r, r + 1] = -ih
                Ep[n, r + 1, r] = -ih
    # forward: D_n = T_nn - E'_n Dinv_{n-1} E'_n ; g_n = Rt_n + E'_n Dinv_{n-1} g_{n-1}
    for n in range(n_len):
        for r in range(J):
            for s in range(J):
                v = Ep[n, r, s]
                if n + 1 < n_len:
                    v += Ep[n + 1, r, s]
                tmpA[r, s] = v
            tmpA[r, r] -= b * w[n] * kap[r]
            for k in range(nr):
                Gs[n, r, k] = R[r, n, k] - (R[r, n + 1, k] if n + 1 < n_len else 0.0)
        if n > 0:
            # tmpB = Dinv_{n-1} E'_n
            for r in range(J):
                for s in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Dinv[n - 1, r, q] * Ep[n, q, s]
                    tmpB[r, s] = acc
            for r in range(J):
                for s in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Ep[n, r, q] * tmpB[q, s]
                    tmpA[r, s] -= acc
            # g_n += E'_n (Dinv_{n-1} g_{n-1})
            for k in range(nr):
                for q in range(J):
                    acc = 0.0
                    for s in range(J):
                        acc += Dinv[n - 1, q, s] * Gs[n - 1, s, k]
                    tmpV[q] = acc
                for r in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Ep[n, r, q] * tmpV[q]
                    Gs[n, r, k] += acc
        if not _invert_small(tmpA, Dinv[n], J):      # J >= 4 here (1-3: returned above)
            return False
    # backward: y_n = Dinv_n (g_n + E'_{n+1} y_{n+1}); X holds y, then differences
    for n in range(n_len - 1, -1, -1):
        for k in range(nr):
            for r in range(J):
                acc = Gs[n, r, k]
                if n + 1 < n_len:
                    for q in range(J):
                        acc += Ep[n + 1, r, q] * X[q, n + 1, k]
                tmpV[r] = acc
            for r in range(J):
                acc = 0.0
                for q in range(J):
                    acc += Dinv[n, r, q] * tmpV[q]
                if not isfinite(acc):
                    return False
                X[r, n, k] = acc
    for n in range(n_len - 1, 0, -1):
        for r in range(J):
            for k in range(nr):
                X[r, n, k] -= X[r, n - 1, k]
    return True
