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
    back-substitution. Each column (modulo 8) sums into its own accumulators, so that the
    columns' sums do not wait on each other: the order of a sum of non-negative excesses
    cannot change whether it is 0, nor (short of overflow) that of the residuals whether it
    is finite."""
    cdef double a1
    cdef double aj
    cdef double d1
    cdef double ej
    cdef double ex
    cdef double fin
    cdef Py_ssize_t j
    cdef double m1
    cdef double over
    cdef double overq[8]
    cdef double finq[8]
    cdef Py_ssize_t q
    cdef double r
    cdef double t1
    cdef double t2
    cdef double t3
    cdef double t4
    for q in range(8):
        overq[q] = 0.0
        finq[q] = 0.0
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
            finq[q & 7] += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            overq[q & 7] += ex if ex > 0.0 else 0.0
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
            finq[q & 7] += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            overq[q & 7] += ex if ex > 0.0 else 0.0
    over = 0.0
    fin = 0.0
    for q in range(8):
        over += overq[q]
        fin += finq[q]
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
