cdef (double, double) _nsum(double s, double c, double x) noexcept nogil:
    """One step of Neumaier's compensated summation: returns (s + x, new compensation);
    the sum is s + c. (Naive sums over 1000 ranks lose ~1e-11 on counts of ~1000, above the
    1e-10 certificate's margin; numpy's pairwise sums do not.)"""
    cdef double t
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


cdef Py_ssize_t _pivot_row(double[:, ::1] A, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """Partial pivoting: the row i >= k of largest |A[i, k]| (first on ties) is swapped into
    row k of A[:n,:n]; returns it (the caller swaps its right-hand side the same way), or -1
    when that pivot is 0 or not finite."""
    cdef double best
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t piv
    cdef double tmp
    piv = k
    best = abs(A[k, k])
    for i in range(k + 1, n):
        if abs(A[i, k]) > best:
            best = abs(A[i, k])
            piv = i
    if not (best > 0.0) or not isfinite(best):
        return -1
    if piv != k:
        for j in range(n):
            tmp = A[k, j]
            A[k, j] = A[piv, j]
            A[piv, j] = tmp
    return piv


cpdef bint _solve_small(double[:, ::1] A, double[::1] x, Py_ssize_t n) noexcept nogil:
    """Solve A[:n,:n] y = x[:n] in place (Gaussian elimination, partial pivoting); A is
    overwritten. Returns False when a pivot is 0 or not finite."""
    cdef double fac
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t k
    cdef Py_ssize_t piv
    cdef double s
    cdef double tmp
    for k in range(n):
        piv = _pivot_row(A, k, n)
        if piv < 0:
            return False
        if piv != k:
            tmp = x[k]
            x[k] = x[piv]
            x[piv] = tmp
        for i in range(k + 1, n):
            fac = A[i, k] / A[k, k]
            if fac != 0.0:
                for j in range(k, n):
                    A[i, j] -= fac * A[k, j]
                x[i] -= fac * x[k]
    for k in range(n - 1, -1, -1):
        s = x[k]
        for j in range(k + 1, n):
            s -= A[k, j] * x[j]
        x[k] = s / A[k, k]
        if not isfinite(x[k]):
            return False
    return True


cpdef bint _invert_small(double[:, ::1] A, double[:, ::1] out, Py_ssize_t n) noexcept nogil:
    """out[:n,:n] = inverse of A[:n,:n] (Gauss-Jordan, partial pivoting); A is overwritten.
    Returns False when singular or not finite."""
    cdef double d
    cdef double fac
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t k
    cdef Py_ssize_t piv
    cdef double tmp
    for i in range(n):
        for j in range(n):
            out[i, j] = 1.0 if i == j else 0.0
    for k in range(n):
        piv = _pivot_row(A, k, n)
        if piv < 0:
            return False
        if piv != k:
            for j in range(n):
                tmp = out[k, j]
                out[k, j] = out[piv, j]
                out[piv, j] = tmp
        d = 1.0 / A[k, k]
        for j in range(n):
            A[k, j] *= d
            out[k, j] *= d
        for i in range(n):
            if i != k:
                fac = A[i, k]
                if fac != 0.0:
                    for j in range(n):
                        A[i, j] -= fac * A[k, j]
                        out[i, j] -= fac * out[k, j]
    return True


cpdef double _rsum_cx(const double[::1] c, const double[::1] x, Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    """sum_{n0 <= n < n1} c_n x_n, reassociated into four partial sums (independent add chains
    the compiler can keep in vector registers); the other reassociated sums below likewise."""
    cdef const double* cp = &c[0]
    cdef const double* xp = &x[0]
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t n = n0
    while n + 4 <= n1:
        s0 += cp[n] * xp[n]
        s1 += cp[n + 1] * xp[n + 1]
        s2 += cp[n + 2] * xp[n + 2]
        s3 += cp[n + 3] * xp[n + 3]
        n += 4
    while n < n1:
        s0 += cp[n] * xp[n]
        n += 1
    return (s0 + s1) + (s2 + s3)

cpdef double _rsum_cxy(const double[::1] c, const double[::1] x, const double[::1] y, Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    """sum_{n0 <= n < n1} c_n x_n y_n (four partial sums: :func:`_rsum_cx`)."""
    cdef const double* cp = &c[0]
    cdef const double* xp = &x[0]
    cdef const double* yp = &y[0]
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t n = n0
    while n + 4 <= n1:
        s0 += cp[n] * xp[n] * yp[n]
        s1 += cp[n + 1] * xp[n + 1] * yp[n + 1]
        s2 += cp[n + 2] * xp[n + 2] * yp[n + 2]
        s3 += cp[n + 3] * xp[n + 3] * yp[n + 3]
        n += 4
    while n < n1:
        s0 += cp[n] * xp[n] * yp[n]
        n += 1
    return (s0 + s1) + (s2 + s3)

cdef extern from *:
    """
    /* _rsum_dev's two pairs of partial sums (even and odd ranks) held in one vector of two
       doubles each (GCC and clang vector extensions), so that the compiler keeps them in
       registers instead of vectorising the loop over ranks with in-order, lane-by-lane
       reductions. Elsewhere: the same sums in scalars. Either way each partial sum takes
       its terms in rank order: the results are the same. */
    #if defined(__GNUC__) || defined(__clang__)
    typedef double maxent_v2d __attribute__((vector_size(16)));
    static inline void maxent_rsum_dev(const double* c, const double* p, const double* w,
                                       const double* wbar, Py_ssize_t n_len, double* h1, double* h2) {
        maxent_v2d a = {0.0, 0.0}, q = {0.0, 0.0}, cv, pv, wv, bv, d, pd;
        Py_ssize_t n = 0;
        for (; n + 2 <= n_len; n += 2) {
            __builtin_memcpy(&cv, c + n, 16);
            __builtin_memcpy(&pv, p + n, 16);
            __builtin_memcpy(&wv, w + n, 16);
            __builtin_memcpy(&bv, wbar + n, 16);
            d = wv - bv;
            pd = cv * pv * d;
            a += pd;
            q += pd * d;
        }
        double h1a = a[0], h1b = a[1], h2a = q[0], h2b = q[1];
    #else
    static inline void maxent_rsum_dev(const double* c, const double* p, const double* w,
                                       const double* wbar, Py_ssize_t n_len, double* h1, double* h2) {
        double h1a = 0.0, h1b = 0.0, h2a = 0.0, h2b = 0.0, pd, qd;
        Py_ssize_t n = 0;
        for (; n + 2 <= n_len; n += 2) {
            pd = c[n] * p[n] * (w[n] - wbar[n]);
            qd = c[n + 1] * p[n + 1] * (w[n + 1] - wbar[n + 1]);
            h1a += pd;
            h1b += qd;
            h2a += pd * (w[n] - wbar[n]);
            h2b += qd * (w[n + 1] - wbar[n + 1]);
        }
    #endif
        if (n < n_len) {
            double pn = c[n] * p[n] * (w[n] - wbar[n]);
            h1a += pn;
            h2a += pn * (w[n] - wbar[n]);
        }
        *h1 = h1a + h1b;
        *h2 = h2a + h2b;
    }
    """
    void maxent_rsum_dev(const double* c, const double* p, const double* w, const double* wbar, Py_ssize_t n_len, double* h1, double* h2) noexcept nogil


cdef (double, double) _rsum_dev(const double[::1] c, const double[::1] p, const double[::1] w, const double[::1] wbar, Py_ssize_t n_len) noexcept nogil:
    """(sum_n c_n p_n (w_n - wbar_n), sum_n c_n p_n (w_n - wbar_n)^2) (two partial sums each,
    even and odd ranks: ``maxent_rsum_dev`` above)."""
    cdef double h1, h2
    maxent_rsum_dev(&c[0], &p[0], &w[0], &wbar[0], n_len, &h1, &h2)
    return h1, h2

cdef double _rsum_cabs(const double[::1] c, const double[::1] x, Py_ssize_t n_len) noexcept nogil:
    """sum_{n < n_len} c_n |x_n| (four partial sums: :func:`_rsum_cx`)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t n = 0
    while n + 4 <= n_len:
        s0 += c[n] * fabs(x[n])
        s1 += c[n + 1] * fabs(x[n + 1])
        s2 += c[n + 2] * fabs(x[n + 2])
        s3 += c[n + 3] * fabs(x[n + 3])
        n += 4
    while n < n_len:
        s0 += c[n] * fabs(x[n])
        n += 1
    return (s0 + s1) + (s2 + s3)

cpdef double _rprod(const double[::1] x, const double[::1] c, Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    """prod_{n0 <= n < n1} x_n over the columns of weight c_n = 1 (four partial products)."""
    cdef const double* cp = &c[0]
    cdef const double* xp = &x[0]
    cdef double q0 = 1.0, q1 = 1.0, q2 = 1.0, q3 = 1.0
    cdef Py_ssize_t n = n0
    while n + 4 <= n1:
        q0 *= xp[n] if cp[n] == 1.0 else 1.0
        q1 *= xp[n + 1] if cp[n + 1] == 1.0 else 1.0
        q2 *= xp[n + 2] if cp[n + 2] == 1.0 else 1.0
        q3 *= xp[n + 3] if cp[n + 3] == 1.0 else 1.0
        n += 4
    while n < n1:
        q0 *= xp[n] if cp[n] == 1.0 else 1.0
        n += 1
    return (q0 * q1) * (q2 * q3)

cpdef double _csum(double[::1] c, double[::1] x, Py_ssize_t n_len) noexcept nogil:
    """sum_n c_n x_n: blocks of _BLOCK terms (reassociated), compensated across blocks.
    (:func:`_csum1` and :func:`_csum2`: the same for one and three factors.)"""
    cdef Py_ssize_t n0
    cdef Py_ssize_t _blk
    cdef double s
    cdef double sc
    s = 0.0
    sc = 0.0
    for _blk in range((n_len + _BLOCK - 1) // _BLOCK):
        n0 = _blk * _BLOCK
        s, sc = _nsum(s, sc, _rsum_cx(c, x, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


cpdef double _csum2(double[::1] c, double[::1] x, double[::1] y, Py_ssize_t n_len) noexcept nogil:
    """sum_n c_n x_n y_n: blocks of _BLOCK terms (reassociated), compensated across blocks."""
    cdef Py_ssize_t n0
    cdef Py_ssize_t _blk
    cdef double s
    cdef double sc
    s = 0.0
    sc = 0.0
    for _blk in range((n_len + _BLOCK - 1) // _BLOCK):
        n0 = _blk * _BLOCK
        s, sc = _nsum(s, sc, _rsum_cxy(c, x, y, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


cpdef double _rsum(const double[::1] x, Py_ssize_t n0, Py_ssize_t n1) noexcept nogil:
    """sum_{n0 <= n < n1} x_n (four partial sums: :func:`_rsum_cx`)."""
    cdef const double* xp = &x[0]
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t n = n0
    while n + 4 <= n1:
        s0 += xp[n]
        s1 += xp[n + 1]
        s2 += xp[n + 2]
        s3 += xp[n + 3]
        n += 4
    while n < n1:
        s0 += xp[n]
        n += 1
    return (s0 + s1) + (s2 + s3)

cpdef double _csum1(double[::1] x, Py_ssize_t n_len) noexcept nogil:
    """sum_n x_n: blocks of _BLOCK terms (reassociated), compensated across blocks."""
    cdef Py_ssize_t n0
    cdef Py_ssize_t _blk
    cdef double s
    cdef double sc
    s = 0.0
    sc = 0.0
    for _blk in range((n_len + _BLOCK - 1) // _BLOCK):
        n0 = _blk * _BLOCK
        s, sc = _nsum(s, sc, _rsum(x, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


cdef double _absmax_of(double[::1] x, double[::1] y, Py_ssize_t n_len, bint diff) noexcept nogil:
    """max_n |x_n - y_n| (diff) or max_n |x_n| (four independent running maxima; NaN ignored
    as by ``if |x| > m``)."""
    cdef double a0
    cdef double a1
    cdef double a2
    cdef double a3
    cdef double m0
    cdef double m1
    cdef double m2
    cdef double m3
    cdef Py_ssize_t n
    cdef Py_ssize_t n4
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    m3 = 0.0
    n4 = n_len - n_len % 4
    for n in range(0, n4, 4):
        a0 = abs(x[n] - y[n]) if diff else abs(x[n])
        a1 = abs(x[n + 1] - y[n + 1]) if diff else abs(x[n + 1])
        a2 = abs(x[n + 2] - y[n + 2]) if diff else abs(x[n + 2])
        a3 = abs(x[n + 3] - y[n + 3]) if diff else abs(x[n + 3])
        m0 = a0 if a0 > m0 else m0
        m1 = a1 if a1 > m1 else m1
        m2 = a2 if a2 > m2 else m2
        m3 = a3 if a3 > m3 else m3
    for n in range(n4, n_len):
        a0 = abs(x[n] - y[n]) if diff else abs(x[n])
        m0 = a0 if a0 > m0 else m0
    return max(max(m0, m1), max(m2, m3))


cpdef double _absmax(double[::1] x, Py_ssize_t n_len) noexcept nogil:
    """max_n |x_n| (:func:`_absmax_of`)."""
    return _absmax_of(x, x, n_len, False)


cpdef (double, double) _absmax_diff(double[::1] x, double[::1] y, Py_ssize_t n_len) noexcept nogil:
    """(max_n |x_n - y_n|, max_n |x_n|) (:func:`_absmax_of`)."""
    return _absmax_of(x, y, n_len, True), _absmax_of(x, x, n_len, False)


cpdef (double, double) _minmax(double[::1] x, Py_ssize_t n_len) noexcept nogil:
    """(min_n x_n, max_n x_n) in four independent chains each (n_len >= 1)."""
    cdef double hi0
    cdef double hi1
    cdef double hi2
    cdef double hi3
    cdef double lo0
    cdef double lo1
    cdef double lo2
    cdef double lo3
    cdef Py_ssize_t n
    cdef Py_ssize_t n4
    lo0 = lo1 = lo2 = lo3 = INFINITY
    hi0 = hi1 = hi2 = hi3 = -INFINITY
    n4 = n_len - n_len % 4
    for n in range(0, n4, 4):
        lo0 = min(lo0, x[n])
        lo1 = min(lo1, x[n + 1])
        lo2 = min(lo2, x[n + 2])
        lo3 = min(lo3, x[n + 3])
        hi0 = max(hi0, x[n])
        hi1 = max(hi1, x[n + 1])
        hi2 = max(hi2, x[n + 2])
        hi3 = max(hi3, x[n + 3])
    for n in range(n4, n_len):
        lo0 = min(lo0, x[n])
        hi0 = max(hi0, x[n])
    return min(min(lo0, lo1), min(lo2, lo3)), max(max(hi0, hi1), max(hi2, hi3))


cdef inline void _scan4(const double* x, const double* y, Py_ssize_t n_len, double* out, bint prod, bint rev) noexcept nogil:
    """out[n] = sum_{m < n} t_m, t = x y (prod) or x, over the ranks in order (rev: in reverse,
    view index v at memory index n_len - 1 - v, for a suffix): four segments scanned in one
    loop (four independent add chains instead of one of n_len latencies), then each shifted
    by the sums before it. out may be y (each y_n is read before out[n] is written)."""
    cdef Py_ssize_t M, M3, j, n, i0, i1, i2, i3, d
    cdef double h1, h2, h3, s, s0, s1, s2, s3, t, t0, t1, t2, t3
    d = -1 if rev else 1
    i0 = n_len - 1 if rev else 0            # memory index of view index 0
    if n_len < 16:
        s = 0.0
        for n in range(n_len):
            t = x[i0] * y[i0] if prod else x[i0]
            out[i0] = s
            s += t
            i0 += d
        return
    M = (n_len + 3) // 4
    M3 = n_len - 3 * M          # the last segment's length (1 <= M3 <= M for n_len >= 16)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(M):
        i1 = i0 + d * M
        i2 = i1 + d * M
        t0 = x[i0] * y[i0] if prod else x[i0]
        t1 = x[i1] * y[i1] if prod else x[i1]
        t2 = x[i2] * y[i2] if prod else x[i2]
        out[i0] = s0
        out[i1] = s1
        out[i2] = s2
        s0 += t0
        s1 += t1
        s2 += t2
        if j < M3:                      # the last segment is the shortest
            i3 = i2 + d * M
            t3 = x[i3] * y[i3] if prod else x[i3]
            out[i3] = s3
            s3 += t3
        i0 += d
    h1 = s0
    h2 = h1 + s1
    h3 = h2 + s2
    i1 = (n_len - 1 - M) if rev else M
    for j in range(M):
        out[i1 + d * j] += h1
        out[i1 + d * (M + j)] += h2
    for j in range(M3):
        out[i1 + d * (2 * M + j)] += h3


cpdef void _prefix_excl(double[::1] x, Py_ssize_t n_len, double[::1] out) noexcept nogil:
    """out[n] = sum_{m < n} x_m (:func:`_scan4`)."""
    _scan4(&x[0], &x[0], n_len, &out[0], False, False)


cpdef void _suffix_excl_xy(double[::1] x, double[::1] y, Py_ssize_t n_len, double[::1] out) noexcept nogil:
    """out[n] = sum_{m > n} x_m y_m (out may be y): :func:`_scan4` over the ranks in reverse."""
    _scan4(&x[0], &y[0], n_len, &out[0], True, True)


cdef double _sum_log(double[::1] Z, double[::1] c, Py_ssize_t n_len, Py_ssize_t blk) noexcept nogil:
    """sum_n c_n ln Z_n: the logarithm of products over blocks of ``blk`` ranks (whose
    product cannot overflow or underflow: one log per block instead of one per rank);
    columns with c_n != 1 (a coarse subproblem's blocks of ranks), c_n ln Z_n in rank order,
    the logarithms by :func:`_log_rows` over chunks of 64 columns that have any (the callers'
    Z_n are partitions whose largest term is 1: positive normal numbers)."""
    cdef double lg[64]
    cdef double lz
    cdef bint mixed
    cdef Py_ssize_t n
    cdef Py_ssize_t n0
    cdef Py_ssize_t n1
    cdef Py_ssize_t _blk
    lz = 0.0
    for _blk in range((n_len + blk - 1) // blk):
        n0 = _blk * blk
        lz += log(_rprod(Z, c, n0, min(n0 + blk, n_len)))
    for n0 in range(0, n_len, 64):
        n1 = min(n0 + 64, n_len)
        mixed = False
        for n in range(n0, n1):
            mixed = mixed | (c[n] != 1.0)
        if mixed:
            _log_rows(&Z[n0], n1 - n0, lg)
            for n in range(n0, n1):
                if c[n] != 1.0:
                    lz += c[n] * lg[n - n0]
    return lz


cpdef bint _band_solve(double[:, ::1] AB, Py_ssize_t n, Py_ssize_t kl, Py_ssize_t ku, double[:, ::1] X, Py_ssize_t nr) noexcept nogil:
    """Solve a band system by Gaussian elimination with partial pivoting. AB (n, 2 kl + ku + 1):
    row i holds columns i - kl .. i + kl + ku at AB[i, col - i + kl] (the last kl: room for
    the fill-in of row swaps); X (n, nr) right-hand sides, overwritten by the solutions.
    Returns False on a zero or non-finite pivot."""
    cdef double a
    cdef double acc
    cdef double best
    cdef Py_ssize_t cc
    cdef double d
    cdef double f
    cdef Py_ssize_t hi
    cdef Py_ssize_t i
    cdef double inv
    cdef Py_ssize_t p
    cdef Py_ssize_t piv
    cdef Py_ssize_t q
    for i in range(n):
        piv = i
        best = abs(AB[i, kl])
        for p in range(i + 1, min(n, i + kl + 1)):
            a = abs(AB[p, i - p + kl])
            if a > best:
                best = a
                piv = p
        if not (best > 0.0) or not isfinite(best):
            return False
        hi = min(n, i + kl + ku + 1)
        if piv != i:
            for cc in range(i, hi):
                a = AB[i, cc - i + kl]
                AB[i, cc - i + kl] = AB[piv, cc - piv + kl]
                AB[piv, cc - piv + kl] = a
            for q in range(nr):
                a = X[i, q]
                X[i, q] = X[piv, q]
                X[piv, q] = a
        inv = 1.0 / AB[i, kl]
        for p in range(i + 1, min(n, i + kl + 1)):
            f = AB[p, i - p + kl] * inv
            if f != 0.0:
                AB[p, i - p + kl] = 0.0
                for cc in range(i + 1, hi):
                    AB[p, cc - p + kl] -= f * AB[i, cc - i + kl]
                for q in range(nr):
                    X[p, q] -= f * X[i, q]
    for i in range(n - 1, -1, -1):
        hi = min(n, i + kl + ku + 1)
        d = AB[i, kl]
        for q in range(nr):
            acc = X[i, q]
            for cc in range(i + 1, hi):
                acc -= AB[i, cc - i + kl] * X[cc, q]
            X[i, q] = acc / d
    return True


cdef void _copy(double[:, ::1] src, double[:, ::1] dst, Py_ssize_t Lc, Py_ssize_t n_len) noexcept nogil:
    cdef Py_ssize_t i
    cdef Py_ssize_t n
    for i in range(Lc):
        for n in range(n_len):
            dst[i, n] = src[i, n]
