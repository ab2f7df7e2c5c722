cdef inline void _chain_fix(const double* c, const double* A, double* e, double* g, Py_ssize_t m, double x) noexcept nogil:
    """One segment (m ranks) of :func:`_cascade_chain`: T_n = Tloc_n + B_n x (Tloc in e, B in
    g, x: T at the segment's last rank), then e_n = c_n - T_n and g_n = A_n e_n, in place."""
    cdef double T
    cdef Py_ssize_t j
    for j in range(m):
        T = e[j] + g[j] * x
        e[j] = c[j] - T
        g[j] = A[j] * e[j]


cpdef double _cascade_chain(double[::1] R, double[::1] OM, double[::1] c, Py_ssize_t n_len, double[::1] A, double[::1] e, double[::1] g, bint want_g) noexcept nogil:
    """The cascade recursions from r (R) and 1 - r (OM): A_n = prod_{m<n} (1 - r_m) into A,
    E = sum_n c_n r_n A_n (compensated sum, returned) and, if want_g, e_n = c_n - T_n and
    g_n = dE/dr_n = A_n e_n with the suffix recursion T_n = c_{n+1} r_{n+1} + (1 - r_{n+1})
    T_{n+1}, T_{N-1} = 0: no division, so no vanishing product is divided by (the numpy
    gradients divide by 1 - r or use log-space sums), every g_n accurate to ulps of itself.

    Both recursions run on four segments at once (four independent multiply or multiply-add
    chains instead of one of n_len latencies; T's segments walked from their ends): A within
    each segment, then scaled by the products of the segments before it; T within each
    segment from its end (Tloc_n, with B_n = prod_{n<l<=end} (1 - r_l)), then T_n = Tloc_n +
    B_n T_end with T_end, the T at the segment's last rank, from the segments after it. Sums
    and products of non-negative terms only, as the sequential recursions (which lists of
    fewer than 16 ranks take)."""
    cdef const double* Rp = &R[0]
    cdef const double* OMp = &OM[0]
    cdef const double* cp = &c[0]
    cdef double* Ap = &A[0]
    cdef double* ep = &e[0]
    cdef double* gp = &g[0]
    cdef Py_ssize_t M, M3, i, j, n, k0, k1, k2, k3
    cdef double E, Ec, a, a0, a1, a2, a3, b0, b1, b2, b3, h1, h2, h3, t, t0, t1, t2, t3, x0, x1, x2
    if n_len < 16:
        E = 0.0
        Ec = 0.0
        a = 1.0
        for n in range(n_len):
            Ap[n] = a
            E, Ec = _nsum(E, Ec, cp[n] * Rp[n] * a)
            a *= OMp[n]
        if want_g:
            t = 0.0
            for n in range(n_len - 1, -1, -1):
                ep[n] = cp[n] - t
                gp[n] = Ap[n] * ep[n]
                t = cp[n] * Rp[n] + OMp[n] * t
        return E + Ec
    M = (n_len + 3) // 4
    M3 = n_len - 3 * M
    # four segments starting at 0, M, 2M and 3M (the last M3 <= M ranks long)
    a0 = 1.0
    a1 = 1.0
    a2 = 1.0
    a3 = 1.0
    for j in range(M):
        Ap[j] = a0
        Ap[M + j] = a1
        Ap[2 * M + j] = a2
        a0 *= OMp[j]
        a1 *= OMp[M + j]
        a2 *= OMp[2 * M + j]
        if j < M3:
            Ap[3 * M + j] = a3
            a3 *= OMp[3 * M + j]
    h1 = a0
    h2 = h1 * a1
    h3 = h2 * a2
    for j in range(M):
        Ap[M + j] *= h1
        Ap[2 * M + j] *= h2
    for j in range(M3):
        Ap[3 * M + j] *= h3
    E = _csum2(c, R, A, n_len)
    if want_g:
        # T by segments from their ends (i = distance from the segment's end: memory index
        # k_s - i): the local sums into e, the products B_n = prod_{n<l<=end} OM_l into g
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        b0 = 1.0
        b1 = 1.0
        b2 = 1.0
        b3 = 1.0
        for i in range(M):
            k0 = M - 1 - i
            k1 = 2 * M - 1 - i
            k2 = 3 * M - 1 - i
            ep[k0] = t0
            gp[k0] = b0
            ep[k1] = t1
            gp[k1] = b1
            ep[k2] = t2
            gp[k2] = b2
            t0 = cp[k0] * Rp[k0] + OMp[k0] * t0
            t1 = cp[k1] * Rp[k1] + OMp[k1] * t1
            t2 = cp[k2] * Rp[k2] + OMp[k2] * t2
            b0 *= OMp[k0]
            b1 *= OMp[k1]
            b2 *= OMp[k2]
            if i < M3:                  # the last segment is the shortest
                k3 = n_len - 1 - i
                ep[k3] = t3
                gp[k3] = b3
                t3 = cp[k3] * Rp[k3] + OMp[k3] * t3
                b3 *= OMp[k3]
        x2 = t3
        x1 = t2 + b2 * x2
        x0 = t1 + b1 * x1
        _chain_fix(cp, Ap, ep, gp, M, x0)
        _chain_fix(cp + M, Ap + M, ep + M, gp + M, M, x1)
        _chain_fix(cp + 2 * M, Ap + 2 * M, ep + 2 * M, gp + 2 * M, M, x2)
        _chain_fix(cp + 3 * M, Ap + 3 * M, ep + 3 * M, gp + 3 * M, M3, 0.0)
    return E


cpdef double _cascade_E_W(double[:, ::1] P, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] s, double[::1] c, double[:, ::1] W, bint want_W, double[:, ::1] Sc) noexcept nogil:
    """E = sum_n c_n r_n prod_{m<n} (1 - r_m) of slot-form p (P (Lc, N)), r_n = sum_k s_k
    p_n(k) (RR, ERR; ``metric.cascade_form``) and, if want_W, the category-form features
    W[k, n] = (s_k - s_0) dE/dr_n (:func:`_cascade_chain`). 1 - r_n is summed as
    sum_k (1 - s_k) p_n(k), exact where r_n is near 1. Sc (5, N): scratch."""
    cdef double[::1] A
    cdef double E
    cdef double[::1] OM
    cdef double[::1] R
    cdef double[::1] e
    cdef double[::1] g
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef double o0
    cdef double ok_
    cdef double s0
    cdef double sk
    R, OM, A, e, g = Sc[0], Sc[1], Sc[2], Sc[3], Sc[4]
    # whole-row passes (contiguous inner loops over the ranks)
    s0 = s[0]
    o0 = 1.0 - s[0]
    for n in range(n_len):
        R[n] = s0 * P[0, n]
        OM[n] = o0 * P[0, n]
    for k in range(1, Lc):
        sk = s[k]
        ok_ = 1.0 - s[k]
        for n in range(n_len):
            R[n] += sk * P[k, n]
            OM[n] += ok_ * P[k, n]
    E = _cascade_chain(R, OM, c, n_len, A, e, g, want_W)
    if want_W:
        for k in range(Lc):
            sk = s[k] - s[0]
            for n in range(n_len):
                W[k, n] = sk * g[n]
    return E


cdef double _metric_E(Py_ssize_t kind, double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[::1] kap, double[::1] f, double c0, double[:, ::1] G, double[:, ::1] Q, bint want_G, double[:, ::1] Sc) noexcept nogil:
    """E of slot-form p: kind 0 a prefix metric (:func:`_prefix_E_G`, G' into G if want_G),
    kind 1 a cascade metric (:func:`_cascade_E_W`, kap = s, f = c; G unused)."""
    if kind == 0:
        return _prefix_E_G(P, J, n_len, kap, f, c0, G, Q, want_G)
    return _cascade_E_W(P, J + 1, n_len, kap, f, Q, False, Sc)


cdef void _metric_W(Py_ssize_t kind, double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[::1] kap, double[::1] f, double[:, ::1] G, double[:, ::1] Wc, double[:, ::1] Sc) noexcept nogil:
    """Category-form features dE/dp at P (slot 0's features 0): kind 0 from the G' that
    :func:`_metric_E` left in G at the same P, kind 1 computed from P."""
    if kind == 0:
        _features(G, J, n_len, Wc)
    else:
        _cascade_E_W(P, J + 1, n_len, kap, f, Wc, True, Sc)


cpdef void _cascade_power(double[::1] sp, Py_ssize_t Lc, double[::1] pw) noexcept nogil:
    """Whether s'_k = m_k u with integers 0 <= m_k <= _POW_MAX (within 4 ulps; ERR's
    exponential gains: s' = (0, 1, 3) / 4, linear ones (0, 1, 2) / 3; RR (0, 1)): pw (Lc + 1)
    gets [m_0 .. m_{Lc-1}, u] (u = -1: no such structure), for :func:`_cascade_power_rows`."""
    cdef Py_ssize_t k
    cdef double m
    cdef double ratio
    cdef double u
    pw[Lc] = -1.0
    u = 0.0
    for k in range(Lc):
        if sp[k] != 0.0:
            u = sp[k]
            break
    if not (u > 0.0):
        return
    for k in range(Lc):
        ratio = sp[k] / u
        m = floor(ratio + 0.5)
        # within 4 ulps: m_k u y_n is then s'_k y_n to 4 ulps of it (the certificate allows 16)
        if not (abs(ratio - m) <= 4.0 * _EPS * m and 0.0 <= m <= _POW_MAX):
            return
        pw[k] = m
    pw[Lc] = u


cdef void _cascade_power_rows(double[:, ::1] W, double[::1] pm, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] pw) noexcept nogil:
    """:func:`_power_structure` of cascade features W[k, n] = s'_k g_n when s'_k = m_k u
    (pm of :func:`_cascade_power`): the multiples are known, so only the base row's range
    is scanned (no per-element check: m_k W[zb, n] is W[k, n] to 4 ulps)."""
    cdef Py_ssize_t k
    cdef double wmax
    cdef double wmin
    cdef Py_ssize_t zb
    zb = 0
    for k in range(Lc):
        pw[k] = pm[k]
        if pm[k] == 1.0 and zb == 0:
            zb = k
    wmin, wmax = _minmax(W[zb], n_len)
    pw[Lc] = zb
    pw[Lc + 1] = wmin
    pw[Lc + 2] = wmax


cdef void _cascade_softmax(double[::1] theta, double[::1] y, double[::1] sp, Py_ssize_t Lc, Py_ssize_t n_len, double[:, ::1] P, double[::1] pm, SoftmaxScratch sws) noexcept nogil:
    """P[k, n] = softmax_k(theta_k + s'_k y_n): :func:`_softmax` with the features
    W[k, n] = s'_k y_n and b = 1. When s'_k = m_k u (pm of :func:`_cascade_power`) and every
    exponent lies within _POW_RANGE of the largest, its power path (one exp per rank) runs
    here on y itself: the operations of :func:`_softmax_power` on W[zb] = u y (u y_n - w_mid
    may now be one fused multiply-add), without writing W or summing the log-partitions
    (Newton-KKT needs neither). ``sws``: its scratch (W (Lc, N), ones (N),
    ones (Lc, bool), th1 (Lc+1), S, Z (N), pw (Lc+3)) from :func:`_cascade_workspace`; the
    two ``ones`` are only read."""
    cdef double[::1] S
    cdef double[::1] U
    cdef double[:, ::1] W
    cdef double[::1] Z
    cdef double hi
    cdef Py_ssize_t k
    cdef double lo
    cdef Py_ssize_t n
    cdef unsigned char[::1] okb
    cdef double[::1] ones
    cdef double[::1] pw
    cdef double[::1] th1
    cdef double u
    cdef double whi
    cdef double wlo
    cdef double wmid
    cdef double xmax
    cdef double xmin
    cdef double yhi
    cdef double ylo
    cdef Py_ssize_t z
    cdef Py_ssize_t zb
    W = sws.W
    ones = sws.ones
    okb = sws.okb
    th1 = sws.th1
    S = sws.S
    Z = sws.Z
    pw = sws.pw
    if pm[Lc] > 0.0 and n_len > 0:
        # the power path on y itself (W is not written): _softmax_power's operations on
        # W[zb] = u y with b = 1, without its sum of log-partitions
        zb = 0
        for k in range(Lc):
            if pm[k] == 1.0:
                zb = k
                break
        u = sp[zb]
        ylo, yhi = _minmax(y, n_len)
        wlo = u * ylo
        whi = u * yhi
        xmax = -INFINITY
        xmin = INFINITY
        for k in range(Lc):
            lo = theta[k] + pm[k] * wlo
            hi = theta[k] + pm[k] * whi
            xmax = max(xmax, max(lo, hi))
            xmin = min(xmin, min(lo, hi))
        if xmax - xmin <= _POW_RANGE:
            wmid = 0.5 * (wlo + whi)
            U = W[0]
            for n in range(n_len):
                S[n] = _fexp(u * y[n] - wmid)
                U[n] = 1.0
                Z[n] = 0.0
            _power_products(S, &U[0], Z, P, theta, okb, pm, Lc, n_len, 1.0, wmid, xmax)
            for n in range(n_len):
                Z[n] = 1.0 / Z[n]
            for z in range(Lc):
                for n in range(n_len):
                    P[z, n] *= Z[n]
            return
    for k in range(Lc):
        for n in range(n_len):
            W[k, n] = sp[k] * y[n]
    for k in range(Lc + 3):
        pw[k] = -1.0
    if pm[Lc] > 0.0:
        _cascade_power_rows(W, pm, Lc, n_len, pw)
    for k in range(Lc):
        th1[k] = theta[k]
    th1[Lc] = 1.0
    _softmax(W, ones, Lc, n_len, okb, th1, P, S, Z, pw)


cdef void _cascade_moments3(double[::1] sp, double[::1] s, Py_ssize_t n_len, double[:, ::1] P, double[::1] R, double[::1] D, double[:, ::1] M, double[::1] OM) noexcept nogil:
    """R, OM, M, D of :func:`_cascade_state` for three categories in one pass over the ranks
    (the row passes' operations in their order: the same values)."""
    cdef double[::1] M0
    cdef double[::1] M1
    cdef double[::1] M2
    cdef double[::1] P0
    cdef double[::1] P1
    cdef double[::1] P2
    cdef double d0
    cdef double d1
    cdef double d2
    cdef double m0
    cdef double m1
    cdef double m2
    cdef Py_ssize_t n
    cdef double o0
    cdef double o1
    cdef double o2
    cdef double om
    cdef double p0
    cdef double p1
    cdef double p2
    cdef double r
    cdef double s1
    cdef double s2
    cdef double t0
    s1 = sp[1]
    s2 = sp[2]
    o0 = 1.0 - s[0]
    o1 = 1.0 - s[1]
    o2 = 1.0 - s[2]
    t0 = s[0]
    P0 = P[0]
    P1 = P[1]
    P2 = P[2]
    M0 = M[0]
    M1 = M[1]
    M2 = M[2]
    for n in range(n_len):
        p0 = P0[n]
        p1 = P1[n]
        p2 = P2[n]
        r = 0.0 + sp[0] * p0
        r = r + s1 * p1
        r = r + s2 * p2
        om = 0.0 + o0 * p0
        om = om + o1 * p1
        om = om + o2 * p2
        d0 = sp[0] - r
        d1 = s1 - r
        d2 = s2 - r
        m0 = p0 * d0
        m1 = p1 * d1
        m2 = p2 * d2
        M0[n] = m0
        M1[n] = m1
        M2[n] = m2
        D[n] = 0.0 + m0 * d0 + m1 * d1 + m2 * d2
        OM[n] = om
        R[n] = r + t0


cpdef double _cascade_state(double[::1] theta, double[::1] y, double[::1] sp, double[::1] s, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] c, double[:, ::1] P, double[::1] R, double[::1] A, double[::1] e, double[::1] g, double[::1] D, double[:, ::1] M, double[::1] OM, double[::1] pm, SoftmaxScratch sws) noexcept nogil:
    """State of the cascade Newton-KKT iterate (theta (Lc), y (N)): p_n(k) =
    softmax_k(theta_k + s'_k y_n) into P (s' = s - s_0; :func:`_cascade_softmax` with the
    multiples pm of :func:`_cascade_power`), r_n =
    sum_k s_k p_n(k) into R, A_n = prod_{m<n} (1 - r_m), e_n = c_n - T_n, g_n = dE/dr_n =
    A_n e_n, D_n = Var_n(s), M[k, n] = dr_n/dtheta_k = p_n(k) (s_k - r_n) (M (Lc, N)),
    1 - r_n = sum_k (1 - s_k) p_n(k) into OM (:func:`_cascade_chain`). Returns E
    (compensated sum). ``sws``: :func:`_cascade_softmax`'s scratch."""
    cdef double dv
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef double ok_
    cdef double sk
    _cascade_softmax(theta, y, sp, Lc, n_len, P, pm, sws)
    if Lc == 3:
        _cascade_moments3(sp, s, n_len, P, R, D, M, OM)
        return _cascade_chain(R, OM, c, n_len, A, e, g, True)
    for n in range(n_len):
        R[n] = 0.0
        OM[n] = 0.0
        D[n] = 0.0
    for k in range(Lc):
        sk = sp[k]
        ok_ = 1.0 - s[k]
        for n in range(n_len):
            R[n] += sk * P[k, n]
            OM[n] += ok_ * P[k, n]
    for k in range(Lc):
        sk = sp[k]
        for n in range(n_len):
            dv = sk - R[n]
            M[k, n] = P[k, n] * dv
            D[n] += M[k, n] * dv
    for n in range(n_len):
        R[n] += s[0]
    return _cascade_chain(R, OM, c, n_len, A, e, g, True)
