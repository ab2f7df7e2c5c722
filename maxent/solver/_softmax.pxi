cpdef void _power_structure(double[:, ::1] W, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] pw) noexcept nogil:
    """Whether the feature rows are integer multiples of one row, W[z, n] = m_z w_n (DCG and
    nDCG: gains 0, 1, 3 = 2^z - 1; binary linear metrics: 0, 1), within 1e-14 relative (the
    metric's own rounding of m_z w_n). Fills pw (Lc + 3): [m_0 .. m_{Lc-1}, base row zb
    (m_zb = 1; -1: no such structure), min_n w_n, max_n w_n]."""
    cdef double m
    cdef Py_ssize_t n
    cdef Py_ssize_t n0
    cdef Py_ssize_t _blk
    cdef double ratio
    cdef double w
    cdef double wmax
    cdef double wmin
    cdef Py_ssize_t z
    cdef Py_ssize_t zb
    pw[Lc] = -1.0
    zb = -1
    n0 = -1
    for z in range(Lc):
        for n in range(n_len):
            if W[z, n] != 0.0:
                zb = z
                n0 = n
                break
        if zb >= 0:
            break
    if zb < 0:
        return
    for z in range(Lc):
        ratio = W[z, n0] / W[zb, n0]
        m = floor(ratio + 0.5)
        if not (abs(ratio - m) <= 1e-12 and 0.0 <= m <= _POW_MAX):
            return
        pw[z] = m
    wmin = INFINITY
    wmax = -INFINITY
    for n in range(n_len):
        w = W[zb, n]
        for z in range(Lc):
            if not (abs(W[z, n] - pw[z] * w) <= 1e-14 * abs(W[z, n])):
                return
        wmin = min(wmin, w)
        wmax = max(wmax, w)
    pw[Lc] = zb
    pw[Lc + 1] = wmin
    pw[Lc + 2] = wmax


cdef void _power_products(double[::1] S, double* U, double[::1] Z, double[:, ::1] P, double[::1] theta, unsigned char[::1] ok, double[::1] mult, Py_ssize_t Lc, Py_ssize_t n_len, double b, double wmid, double xmax) noexcept nogil:
    """The products of the power path (:func:`_softmax_power`, :func:`_cascade_softmax`):
    from u_n in S, P[z, n] = A_z u_n^{m_z} by repeated products (U: scratch, u_n^k, given
    as 1), A_z = exp(a_z + m_z b w_mid - xmax), m_z = int(mult[z]), over the allowed
    categories (0 elsewhere), and their sums over z added into Z (given as 0): unnormalised.
    The callers set S, U and Z in the pass that computes S."""
    cdef double A
    cdef double e
    cdef Py_ssize_t k
    cdef Py_ssize_t mmax
    cdef Py_ssize_t n
    cdef Py_ssize_t z
    mmax = 0
    for z in range(Lc):
        if ok[z]:
            mmax = max(mmax, <Py_ssize_t>(mult[z]))
        else:
            for n in range(n_len):
                P[z, n] = 0.0
    for k in range(mmax + 1):
        if k > 0:
            for n in range(n_len):
                U[n] *= S[n]
        for z in range(Lc):
            if ok[z] and <Py_ssize_t>(mult[z]) == k:
                A = exp(theta[z] + k * b * wmid - xmax)
                for n in range(n_len):
                    e = A * U[n]
                    P[z, n] = e
                    Z[n] += e


cdef (double, double) _softmax_power(double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[::1] theta, double[:, ::1] P, double[::1] S, double[::1] Z, double[::1] pw, double xmax, double xr) noexcept nogil:
    """:func:`_softmax` when W[z, n] = m_z w_n (:func:`_power_structure`) and every exponent
    x_zn = a_z + b m_z w_n lies in [xmax - xr, xmax], xr <= _POW_RANGE: one exp per rank,
    u_n = exp(b (w_n - w_mid)), and p_n(z) ~ A_z u_n^{m_z} by repeated products, A_z =
    exp(a_z + m_z b w_mid - xmax) (each factor within e^{+-300}: no overflow, no subnormal).
    sum_n c_n ln Z_n from products over blocks of ranks short enough for Z_n in [e^-xr, Lc]."""
    cdef double* U
    cdef double b
    cdef Py_ssize_t blk
    cdef double cs
    cdef double lz
    cdef Py_ssize_t n
    cdef Py_ssize_t nok
    cdef double span
    cdef double wmid
    cdef Py_ssize_t z
    cdef Py_ssize_t zb
    cdef double Ubuf[_STACK_RANKS]
    b = theta[Lc]
    zb = <Py_ssize_t>(pw[Lc])
    wmid = 0.5 * (pw[Lc + 1] + pw[Lc + 2])
    U = &Ubuf[0] if n_len <= _STACK_RANKS else <double*> malloc(n_len * sizeof(double))
    for n in range(n_len):
        S[n] = _fexp(b * (W[zb, n] - wmid))
        U[n] = 1.0
        Z[n] = 0.0
    _power_products(S, U, Z, P, theta, ok, pw, Lc, n_len, b, wmid, xmax)
    nok = 0
    for z in range(Lc):
        if ok[z]:
            nok += 1
    span = max(xr, log(max(nok, 2)), 1.0)
    blk = max(1, <Py_ssize_t>(600.0 / span))
    if blk < 32:
        # short blocks (|b| large: ERR's subproblems, blocks of 1-9 ranks): a logarithm per
        # rank without libm calls (:func:`_log_rows`) instead of a libm log per block (Z_n in [e^-xr, Lc]: positive normal numbers)
        _log_rows(&Z[0], n_len, &S[0])
        lz = _rsum_cx(c, S, 0, n_len)
    else:
        lz = _sum_log(Z, c, n_len, blk)
    cs = _rsum(c, 0, n_len)
    for n in range(n_len):
        Z[n] = 1.0 / Z[n]
    for z in range(Lc):
        if ok[z]:
            for n in range(n_len):
                P[z, n] *= Z[n]
    if U != &Ubuf[0]:
        free(U)
    return cs * xmax + lz, cs * (abs(xmax) + span)


cpdef (double, double) _softmax(double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[::1] theta, double[:, ::1] P, double[::1] S, double[::1] Z, double[::1] pw) noexcept nogil:
    """P[z, n] = softmax_z(a_z + b W[z, n]) over the allowed categories (0 elsewhere), in
    whole-row passes; returns (sum_n c_n lse_n, an upper bound of
    sum_n c_n |lse_n|: the scale of its rounding) (c_n: the number of ranks that column n
    stands for). lse_n = S_n + ln Z_n with S_n the row maximum and Z_n in [1, Lc], so
    sum_n ln Z_n is taken as the logarithm of products over blocks that cannot overflow
    (one log per block instead of one per rank; columns with c_n != 1: c_n ln Z_n).
    S, Z: (>= n_len) scratch (row maxima, then 1/partition)."""
    cdef double[::1] P0
    cdef double[::1] P1
    cdef double[::1] P2
    cdef double[::1] W0
    cdef double[::1] W1
    cdef double[::1] W2
    cdef double a
    cdef double a0
    cdef double a1
    cdef double a2
    cdef double alse
    cdef double b
    cdef double cs
    cdef double d
    cdef double d0
    cdef double d1
    cdef double d2
    cdef double e
    cdef double e0
    cdef double e1
    cdef double e2
    cdef double hi
    cdef double iz
    cdef double lo
    cdef double lse
    cdef double lz
    cdef double mx
    cdef Py_ssize_t n
    cdef Py_ssize_t nok
    cdef double pz
    cdef double slse
    cdef double sn
    cdef double x
    cdef double x0
    cdef double x1
    cdef double x2
    cdef double xmax
    cdef double xmin
    cdef Py_ssize_t z
    cdef double zn
    cdef double zs
    b = theta[Lc]
    if b == 0.0:
        # the count-only start: the same softmax of the a_z at every rank, no exps per rank
        mx = -INFINITY
        for z in range(Lc):
            if ok[z]:
                mx = max(mx, theta[z])
        zs = 0.0
        for z in range(Lc):
            if ok[z]:
                zs += exp(theta[z] - mx)
        lse = mx + log(zs)
        for z in range(Lc):
            pz = exp(theta[z] - lse) if ok[z] else 0.0
            for n in range(n_len):
                P[z, n] = pz
        cs = _rsum(c, 0, n_len)
        return cs * lse, cs * abs(lse)
    if pw[Lc] >= 0.0:
        # features m_z w_n: the exponents' range from w's two ends
        xmax = -INFINITY
        xmin = INFINITY
        for z in range(Lc):
            if ok[z]:
                lo = theta[z] + b * pw[z] * pw[Lc + 1]
                hi = theta[z] + b * pw[z] * pw[Lc + 2]
                xmax = max(xmax, max(lo, hi))
                xmin = min(xmin, min(lo, hi))
        if xmax - xmin <= _POW_RANGE:
            return _softmax_power(W, c, Lc, n_len, ok, theta, P, S, Z, pw, xmax, xmax - xmin)
    if Lc == 3 and ok[0] and ok[1] and ok[2]:
        # three categories (GAP's two slots; general features): exponents, maxima, exps and
        # partitions in one vectorised pass over the ranks, the same operations in the same
        # order as the row passes below (p bit-identical), and no reduction in the loops
        # that write
        a0 = theta[0]
        a1 = theta[1]
        a2 = theta[2]
        W0 = W[0]
        W1 = W[1]
        W2 = W[2]
        P0 = P[0]
        P1 = P[1]
        P2 = P[2]
        for n in range(n_len):
            x0 = a0 + b * W0[n]
            x1 = a1 + b * W1[n]
            x2 = a2 + b * W2[n]
            sn = max(x0, max(x1, x2))
            d0 = x0 - sn
            d1 = x1 - sn
            d2 = x2 - sn
            e0 = _fexp_normal(max(d0, -700.0))
            e1 = _fexp_normal(max(d1, -700.0))
            e2 = _fexp_normal(max(d2, -700.0))
            e0 = e0 if d0 >= _EXP_MIN else 0.0
            e1 = e1 if d1 >= _EXP_MIN else 0.0
            e2 = e2 if d2 >= _EXP_MIN else 0.0
            zn = e0 + e1 + e2
            S[n] = sn
            Z[n] = zn
            P0[n] = e0
            P1[n] = e1
            P2[n] = e2
        lz = _sum_log(Z, c, n_len, max(1, <Py_ssize_t>(600.0 / log(3.0))))
        slse = _rsum_cx(c, S, 0, n_len) + lz
        for n in range(n_len):
            iz = 1.0 / Z[n]
            P0[n] *= iz
            P1[n] *= iz
            P2[n] *= iz
        return slse, lz + _rsum_cabs(c, S, n_len)
    for n in range(n_len):
        S[n] = -INFINITY
        Z[n] = 0.0
    for z in range(Lc):
        if ok[z]:
            a = theta[z]
            for n in range(n_len):
                x = a + b * W[z, n]
                P[z, n] = x
                S[n] = max(S[n], x)
    nok = 0
    for z in range(Lc):
        if ok[z]:
            nok += 1
            for n in range(n_len):
                d = P[z, n] - S[n]
                e = _fexp_normal(max(d, -700.0))
                e = e if d >= _EXP_MIN else 0.0
                P[z, n] = e
                Z[n] += e
        else:
            for n in range(n_len):
                P[z, n] = 0.0
    lz = _sum_log(Z, c, n_len, max(1, <Py_ssize_t>(600.0 / log(max(nok, 2)))))     # nok^blk <= e^600
    slse = _rsum_cx(c, S, 0, n_len) + lz
    alse = lz + _rsum_cabs(c, S, n_len)
    for n in range(n_len):          # no reduction in this loop: it vectorises
        Z[n] = 1.0 / Z[n]
    for z in range(Lc):
        if ok[z]:
            for n in range(n_len):
                P[z, n] *= Z[n]
    return slse, alse


cpdef double _entropy(double[:, ::1] P, Py_ssize_t Lc, Py_ssize_t n_len) noexcept nogil:
    """-sum p ln p over P[:Lc, :n_len] (p = 0 counts 0; :func:`_log_rows`, whose nonsense
    for 0 and subnormal p is multiplied by p <= 2.3e-308)."""
    cdef Py_ssize_t N
    cdef double h
    cdef double* lg
    cdef Py_ssize_t n
    cdef Py_ssize_t z
    cdef double buf[_STACK_RANKS]
    N = P.shape[1]
    lg = &buf[0] if N <= _STACK_RANKS else <double*> malloc(N * sizeof(double))
    h = 0.0
    for z in range(Lc):
        _log_rows(&P[z, 0], n_len, lg)
        for n in range(n_len):
            h -= P[z, n] * lg[n]
    if lg != &buf[0]:
        free(lg)
    return h


cpdef void _log_ratios(double[:, ::1] P, Py_ssize_t J, Py_ssize_t n_len, double[:, ::1] LR) noexcept nogil:
    """LR_{r,n} = ln p_r - ln p_{r+1} (J, N). A p that underflowed to 0 after a trial's
    renormalisation gives +-inf (numpy's rule, not an exception): the trial's merit is then
    not finite and the line search rejects it, as in the numpy solver."""
    cdef Py_ssize_t N
    cdef Py_ssize_t bad
    cdef Py_ssize_t n
    cdef double q
    cdef Py_ssize_t r
    cdef double* x
    cdef double buf[_STACK_RANKS]
    N = P.shape[1]
    x = &buf[0] if N <= _STACK_RANKS else <double*> malloc(N * sizeof(double))
    for r in range(J):
        bad = 0
        for n in range(n_len):
            q = P[r, n] / P[r + 1, n]
            x[n] = q
            bad += not (_MIN_NORMAL <= q <= _MAX_FINITE)
        _log_rows(x, n_len, &LR[r, 0])
        if bad:
            for n in range(n_len):
                if not (_MIN_NORMAL <= x[n] <= _MAX_FINITE):
                    LR[r, n] = log(x[n])     # 0, subnormal, inf, NaN: numpy's values
    if x != &buf[0]:
        free(x)
