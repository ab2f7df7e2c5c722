cdef (double, double, double) _cascade_coef(double b, double[::1] A, double[::1] e, double[::1] D, double[::1] OM, Py_ssize_t j) noexcept nogil:
    """Coefficients of rank j in the system of :func:`_cascade_system`: (m_j, a_j, d_j) =
    (b D_j A_j e_j - (1 - r_j), b D_j A_j^2, b D_j e_j^2)."""
    cdef double bd
    bd = b * D[j]
    return bd * A[j] * e[j] - OM[j], bd * A[j] * A[j], bd * e[j] * e[j]


cpdef void _cascade_system(double b, double[::1] A, double[::1] e, double[::1] D, double[::1] OM, Py_ssize_t n_len, double[:, ::1] AB) noexcept nogil:
    """Band matrix (kl = ku = 2) of S z = w, S = I - b D H (H = d^2E/dr^2), in the unknowns
    x_{2j} = V_j = sum_{k<j} A_k P(k, j) z_k and x_{2j+1} = U_j = sum_{k>j} P(j, k) e_k z_k
    (P(j, k) = prod_{j<l<k} (1 - r_l)), where (H z)_j = -(A_j U_j + e_j V_j) and
    z_j = w_j - b D_j (A_j U_j + e_j V_j): with (m_j, a_j, d_j) of :func:`_cascade_coef`,
    V_{j+1} + m_j V_j + a_j U_j = A_j w_j, U_{j-1} + m_j U_j + d_j V_j = e_j w_j,
    V_0 = U_{N-1} = 0."""
    cdef double a
    cdef double d
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t kl
    cdef double m
    cdef Py_ssize_t n2
    cdef Py_ssize_t q
    n2 = 2 * n_len
    for i in range(n2):
        for q in range(7):
            AB[i, q] = 0.0
    kl = 2
    AB[0, kl] = 1.0                       # V_0 = 0
    AB[n2 - 1, kl] = 1.0                  # U_{N-1} = 0
    for j in range(n_len):
        m, a, d = _cascade_coef(b, A, e, D, OM, j)
        if j + 1 < n_len:                 # row 2(j+1): V_{j+1}
            i = 2 * (j + 1)
            AB[i, kl] = 1.0
            AB[i, kl - 2] = m             # V_j   (column i - 2)
            AB[i, kl - 1] = a             # U_j   (column i - 1)
        if j >= 1:                        # row 2(j-1)+1: U_{j-1}
            i = 2 * j - 1
            AB[i, kl] = 1.0
            AB[i, kl + 2] = m             # U_j   (column i + 2)
            AB[i, kl + 1] = d             # V_j   (column i + 1)


cdef inline bint _cascade_thomas_body(double b, double[::1] A, double[::1] e, double[::1] D, double[::1] OM, Py_ssize_t n_len, double[:, ::1] W, Py_ssize_t nr, double[:, ::1] X, double[:, ::1] Sc) noexcept nogil:
    """The system of :func:`_cascade_system` for the columns w = W[q] (W (nr, N); the
    right-hand sides of :func:`_cascade_rhs`, built here as the eliminations reach their rows;
    the solution into X (2N, nr), in the system's row order) as block-tridiagonal with
    identity diagonal blocks over
    u_j = (V_j, U_j), by two eliminations without pivoting that meet at the middle rank
    h = n_len // 2 (:func:`_cascade_coef`'s m_j, a_j, d_j; O(N nr), one division per rank):

    - from the top, the V rows: pi_j V_j - kappa_j m_j U_j = yV'_j (j <= h), kappa_0 = 0,
      kappa_{j+1} = a_j + kappa_j m_j^2 / pi_j, pi_j = 1 - kappa_j d_j,
      yV'_j = yV_j - (m_{j-1} / pi_{j-1}) yV'_{j-1} - kappa_j yU_{j-1};
    - from the bottom, the U rows: sigma_j U_j - eta_j m_j V_j = yU'_j (j >= h),
      eta_{N-1} = 0, eta_{j-1} = d_j + eta_j m_j^2 / sigma_j, sigma_j = 1 - eta_j a_j,
      yU'_j = yU_j - eta_j yV_{j+1} - (m_{j+1} / sigma_{j+1}) yU'_{j+1};

    in one loop, so that their division chains overlap. The two relations at h give (V_h, U_h);
    back-substitution (again both halves in one loop) takes U_j from its own row and then V_j
    above h, V_j from its own row and then U_j below it. Those rows hold by construction (up to
    the rounding of two products); every other row is checked by :func:`_thomas_check`
    (:func:`_cascade_thomas`). False on a pivot pi_j, sigma_j or the middle one below 1e-8 (X
    then holds no solution: the caller builds the right-hand sides again and pivots). Sc (5, N):
    scratch (kappa and 1 / pi per rank above h, eta and 1 / sigma below it; m, a, d)."""
    cdef double a
    cdef double a0
    cdef double[::1] aa
    cdef double aj
    cdef double d
    cdef double d2
    cdef double[::1] dd
    cdef double det
    cdef double ej
    cdef double emt
    cdef double et
    cdef double eta_h
    cdef Py_ssize_t h
    cdef double idet
    cdef double ip
    cdef double ipi
    cdef double isg
    cdef Py_ssize_t j
    cdef double[::1] kap
    cdef double kap_h
    cdef double kmt
    cdef double kt
    cdef double m
    cdef double m0
    cdef double m2
    cdef double mi
    cdef double[::1] mm
    cdef double pi
    cdef double pi_h
    cdef double[::1] piv
    cdef Py_ssize_t q
    cdef double sg
    cdef double sg_h
    cdef Py_ssize_t t
    cdef double xu
    cdef double xv
    cdef double yu
    cdef double yv
    cdef double zu
    cdef double zv
    kap, piv, mm, aa, dd = Sc[0], Sc[1], Sc[2], Sc[3], Sc[4]
    if n_len == 0:
        return True
    for q in range(nr):
        X[0, q] = 0.0
        X[2 * n_len - 1, q] = 0.0
    h = n_len // 2
    kt = 0.0                     # kappa_j of the top elimination
    et = 0.0                     # eta_j of the bottom one
    pi_h = 1.0
    kap_h = 0.0
    sg_h = 1.0
    eta_h = 0.0
    for t in range(max(h + 1, n_len - h)):
        # ---- top: rank j = t <= h
        if t <= h:
            j = t
            m, a, d = _cascade_coef(b, A, e, D, OM, j)
            mm[j], aa[j], dd[j] = m, a, d
            pi = 1.0 - kt * d
            if not (abs(pi) >= 1e-8) or not isfinite(pi):
                return False
            ipi = 1.0 / pi
            if j >= 1:
                # the right-hand sides of U row j - 1 (kept) and V row j (eliminated)
                mi = mm[j - 1] * piv[j - 1]
                ej = e[j]
                aj = A[j - 1]
                for q in range(nr):
                    xu = ej * W[q, j]
                    X[2 * j - 1, q] = xu
                    X[2 * j, q] = aj * W[q, j - 1] - (mi * X[2 * j - 2, q] + kt * xu)
            if j < h:
                kap[j] = kt
                piv[j] = ipi
            else:
                kap_h = kt
                pi_h = pi
            kt = a + kt * m * m * ipi
        # ---- bottom: rank j = n_len - 1 - t >= h
        if t < n_len - h:
            j = n_len - 1 - t
            m, a, d = _cascade_coef(b, A, e, D, OM, j)
            mm[j], aa[j], dd[j] = m, a, d
            sg = 1.0 - et * a
            if not (abs(sg) >= 1e-8) or not isfinite(sg):
                return False
            isg = 1.0 / sg
            if j + 1 < n_len:
                # the right-hand sides of V row j + 1 (kept) and U row j (eliminated)
                mi = mm[j + 1] * piv[j + 1]
                aj = A[j]
                ej = e[j + 1]
                for q in range(nr):
                    xv = aj * W[q, j]
                    X[2 * j + 2, q] = xv
                    X[2 * j + 1, q] = ej * W[q, j + 1] - (et * xv + mi * X[2 * j + 3, q])
            if j > h:
                kap[j] = et
                piv[j] = isg
            else:
                eta_h = et
                sg_h = sg
            et = d + et * m * m * isg
    # ---- the middle rank: [pi, -kappa m; -eta m, sigma] (V_h, U_h) = (yV'_h, yU'_h)
    m = mm[h]
    det = pi_h * sg_h - kap_h * eta_h * m * m
    if not (abs(det) >= 1e-8 * abs(sg_h)) or not isfinite(det):
        return False
    idet = 1.0 / det
    for q in range(nr):
        yv = X[2 * h, q]
        yu = X[2 * h + 1, q]
        X[2 * h, q] = (sg_h * yv + kap_h * m * yu) * idet
        X[2 * h + 1, q] = (pi_h * yu + eta_h * m * yv) * idet
    # ---- back-substitution from h, upwards and downwards (the other rows: _thomas_check)
    for t in range(1, h + 1):
        # above h: rank j, U_j from U row j, V_j from the top relation
        j = h - t
        kmt = kap[j] * mm[j]
        ip = piv[j]
        d2 = dd[j + 1]
        m2 = mm[j + 1]
        for q in range(nr):
            zu = X[2 * j + 1, q] - (d2 * X[2 * j + 2, q] + m2 * X[2 * j + 3, q])
            X[2 * j + 1, q] = zu
            zv = (X[2 * j, q] + kmt * zu) * ip
            X[2 * j, q] = zv
        # below h: rank j, V_j from V row j, U_j from the bottom relation
        j = h + t
        if j < n_len:
            emt = kap[j] * mm[j]
            isg = piv[j]
            m0 = mm[j - 1]
            a0 = aa[j - 1]
            for q in range(nr):
                zv = X[2 * j, q] - (m0 * X[2 * j - 2, q] + a0 * X[2 * j - 1, q])
                X[2 * j, q] = zv
                zu = (X[2 * j + 1, q] + emt * zv) * isg
                X[2 * j + 1, q] = zu
    return True


cdef bint _thomas_check(double[::1] A, double[::1] e, double[:, ::1] W, double[:, ::1] X, double[::1] mm, double[::1] aa, double[::1] dd, Py_ssize_t h, Py_ssize_t n_len, Py_ssize_t nr) noexcept nogil:
    """The rows of :func:`_cascade_thomas_body` not solved by construction: the V rows
    1..h (V_{j+1} + m_j V_j + a_j U_j = A_j w_j, j < h) and the U rows h..N-2
    (U_{j-1} + m_j U_j + d_j V_j = e_j w_j, j > h), which take in every unknown: True when
    each residual is <= 1e-12 of its terms' size (+ 1e-300) and every residual is finite (a
    non-finite unknown or right-hand side fails). A pass of its own, whose two sums only count
    (the excesses over the tolerance, >= 0, and the residuals), not branches in the
    back-substitution."""
    cdef double a1
    cdef double aj
    cdef double d1
    cdef double ej
    cdef double ex
    cdef double fin
    cdef Py_ssize_t j
    cdef double m1
    cdef double over
    cdef Py_ssize_t q
    cdef double r
    cdef double t1
    cdef double t2
    cdef double t3
    cdef double t4
    over = 0.0
    fin = 0.0
    for j in range(h):
        m1 = mm[j]
        a1 = aa[j]
        aj = A[j]
        for q in range(nr):
            t1 = X[2 * j + 2, q]
            t2 = m1 * X[2 * j, q]
            t3 = a1 * X[2 * j + 1, q]
            t4 = aj * W[q, j]
            r = t1 + t2 + t3 - t4
            fin += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            over += ex if ex > 0.0 else 0.0
    for j in range(h + 1, n_len):
        m1 = mm[j]
        d1 = dd[j]
        ej = e[j]
        for q in range(nr):
            t1 = X[2 * j - 1, q]
            t2 = m1 * X[2 * j + 1, q]
            t3 = d1 * X[2 * j, q]
            t4 = ej * W[q, j]
            r = t1 + t2 + t3 - t4
            fin += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            over += ex if ex > 0.0 else 0.0
    return over == 0.0 and isfinite(fin)


cpdef bint _cascade_thomas(double b, double[::1] A, double[::1] e, double[::1] D, double[::1] OM, Py_ssize_t n_len, double[:, ::1] W, Py_ssize_t nr, double[:, ::1] X, double[:, ::1] Sc) noexcept nogil:
    """S z = w for the columns w = W[q] (W (nr, N)) by :func:`_cascade_thomas_body`, its
    solution (V_j, U_j) into X (2N, nr) and accepted by :func:`_thomas_check`; False: X holds
    no solution. The right-hand sides' count is a constant when it is 4 (ERR's three grades:
    its loops over them unrolled)."""
    cdef bint ok
    if nr == 4:
        ok = _cascade_thomas_body(b, A, e, D, OM, n_len, W, 4, X, Sc)
        return ok and _thomas_check(A, e, W, X, Sc[2], Sc[3], Sc[4], n_len // 2, n_len, 4)
    ok = _cascade_thomas_body(b, A, e, D, OM, n_len, W, nr, X, Sc)
    return ok and _thomas_check(A, e, W, X, Sc[2], Sc[3], Sc[4], n_len // 2, n_len, nr)


cpdef void _cascade_rhs(double[::1] A, double[::1] e, Py_ssize_t n_len, double[:, ::1] W, Py_ssize_t nr, double[:, ::1] X) noexcept nogil:
    """The right-hand sides of :func:`_cascade_system` for the columns w = W[q] (W (nr, N)):
    X[2 (j+1), q] = A_j w_j (V rows), X[2j - 1, q] = e_j w_j (U rows), rows 0 and 2N - 1 zero."""
    cdef double a
    cdef double ej
    cdef Py_ssize_t j
    cdef Py_ssize_t q
    cdef double w
    for q in range(nr):
        X[0, q] = 0.0
        X[2 * n_len - 1, q] = 0.0
    if nr == 4:
        # the four columns at once, with no branch per rank (the loop vectorises)
        for j in range(n_len - 1):
            a = A[j]
            X[2 * j + 2, 0] = a * W[0, j]
            X[2 * j + 2, 1] = a * W[1, j]
            X[2 * j + 2, 2] = a * W[2, j]
            X[2 * j + 2, 3] = a * W[3, j]
        for j in range(1, n_len):
            ej = e[j]
            X[2 * j - 1, 0] = ej * W[0, j]
            X[2 * j - 1, 1] = ej * W[1, j]
            X[2 * j - 1, 2] = ej * W[2, j]
            X[2 * j - 1, 3] = ej * W[3, j]
    else:
        for j in range(n_len):
            for q in range(nr):
                w = W[q, j]
                if j + 1 < n_len:
                    X[2 * (j + 1), q] = A[j] * w
                if j >= 1:
                    X[2 * j - 1, q] = e[j] * w


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
    :func:`maxent.solver.linearize.stationarity`, per rank instead of at the largest |b W|),
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


cpdef bint _cascade_step(double b, double[::1] A, double[::1] e, double[::1] g, double[::1] D, double[::1] OM, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] AB, double[:, ::1] X, double[:, ::1] Z, double[:, ::1] HZ, double[:, ::1] S, double[::1] rs, double[::1] dy, double[:, ::1] Sc) noexcept nogil:
    """The Newton-KKT step of :func:`_cascade_newton` at its iterate: rs[:J] = dtheta_1..J,
    rs[J] = db, dy (N). Returns False when a solve fails."""
    cdef Py_ssize_t Lc
    cdef double a
    cdef double bd
    cdef double db
    cdef double ej
    cdef double h0
    cdef double h1
    cdef double h2
    cdef double h3
    cdef double hdr
    cdef double hz
    cdef Py_ssize_t j
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t nr
    cdef Py_ssize_t q
    cdef double r0
    cdef double r1
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
        _cascade_schur2(b, g, M, P, F1, F2, ev, HZ, Z, n_len, S, rs)
    else:
        _cascade_schur(b, g, M, P, F1, F2, ev, HZ, Z, J, n_len, S, rs)
    if not _solve_small(S, rs, J + 1):
        return False
    db = rs[J]
    if J == 2:
        r0 = rs[0]
        r1 = rs[1]
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[3, n] * db + HZ[1, n] * r0 + HZ[2, n] * r1
            dy[n] = -F1[n] + b * hdr + g[n] * db
    else:
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[J + 1, n] * db
            for k in range(1, Lc):
                hdr += HZ[k, n] * rs[k - 1]
            dy[n] = -F1[n] + b * hdr + g[n] * db
    return True


cdef void _cascade_schur2(double b, double[::1] g, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, double[:, ::1] HZ, double[:, ::1] Z, Py_ssize_t n_len, double[:, ::1] S, double[::1] rs) noexcept nogil:
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
    rs[2] = -ev - gz0
    S[2, 0] = gz1
    S[2, 1] = gz2
    S[2, 2] = gz3


cdef void _cascade_schur(double b, double[::1] g, double[:, ::1] M, double[:, ::1] P, double[::1] F1, double[::1] F2, double ev, double[:, ::1] HZ, double[:, ::1] Z, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] S, double[::1] rs) noexcept nogil:
    """The (J+1) x (J+1) system of the multiplier steps of :func:`_cascade_step` into S, rs:
    count rows k = 1..J, rs = -F2_k + M_k . F1 - b M_k . HZ_0 and S[k-1, q-1] = b M_k . HZ_q
    (+ M_k . g for q = J+1, + C_kq = [k = q] sum_n p_n(k) - sum_n p_n(k) p_n(q) for q <= J);
    the metric row, rs = -(E - v) - g . Z_0 and S[J, q-1] = g . Z_q."""
    cdef Py_ssize_t Lc
    cdef double[::1] Mk
    cdef double cc
    cdef Py_ssize_t jj
    cdef Py_ssize_t k
    cdef Py_ssize_t nr
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
                cc += _rsum(P[k], 0, n_len)
            S[k - 1, jj - 1] += cc
    rs[J] = -ev - _rsum_cx(g, Z[0], 0, n_len)
    for q in range(1, nr):
        S[J, q - 1] = _rsum_cx(g, Z[q], 0, n_len)


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
    -> 1.5e-11; refused, the list went to the numpy engine for 2200 steps)."""
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
                             J, n_len, AB, X, Z, HZ, S, rs, dy, Sc):
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
