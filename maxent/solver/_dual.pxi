cdef (double, double, double) _dual_state(double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[::1] K, double[::1] theta, double v, double[:, ::1] P, double[::1] wbar, double[::1] g, double[::1] S, double[::1] Z, double[::1] pw) noexcept nogil:
    """p = softmax(a + b W) into P (Lc, >= n_len), the mean feature per rank into wbar and
    the gradient g (Lc+1) of the dual; returns (D, rounding scale of D, entropy of P
    computed without logarithms). Whole-row passes (softmax, then sums per category);
    column n counts c_n times. The Hessian: :func:`_dual_hessian`, only where a step needs it."""
    cdef double D
    cdef double aK
    cdef double alse
    cdef double b
    cdef double ent
    cdef double mag
    cdef Py_ssize_t n
    cdef double slse
    cdef Py_ssize_t z
    cdef Py_ssize_t R
    cdef const double* rows[5]
    cdef double sums[5]
    cdef bint fused
    b = theta[Lc]
    slse, alse = _softmax(W, c, Lc, n_len, ok, theta, P, S, Z, pw)
    for n in range(n_len):
        wbar[n] = 0.0
    for z in range(Lc):
        if ok[z]:
            for n in range(n_len):
                wbar[n] += P[z, n] * W[z, n]
    # g: one compensated sum per allowed category and one of wbar (``maxent_csum_rows``:
    # side by side, up to five rows; else one after the other, with the same results)
    R = 0
    for z in range(Lc):
        if ok[z]:
            if R < 4:
                rows[R] = &P[z, 0]
            R += 1
    fused = False
    if R <= 4:
        rows[R] = &wbar[0]
        fused = maxent_csum_rows(R + 1, &c[0], rows, n_len, sums)
    if fused:
        R = 0
        for z in range(Lc):
            g[z] = 0.0
            if ok[z]:
                g[z] = sums[R]
                R += 1
        g[Lc] = sums[R]
    else:
        for z in range(Lc):
            g[z] = _csum(c, P[z], n_len) if ok[z] else 0.0
        g[Lc] = _csum(c, wbar, n_len)
    aK = 0.0
    for z in range(Lc):
        if ok[z]:
            aK += theta[z] * K[z]
    D = slse - aK - b * v
    mag = alse + abs(aK) + abs(b * v) + 1.0
    # entropy: ln p_nz = a_z + b W_nz - lse_n, summed with p: sum lse - sum a_z (sum_n p_nz) - b sum p W
    ent = slse - b * g[Lc]
    for z in range(Lc):
        if ok[z]:
            ent -= theta[z] * g[z]
    for z in range(Lc):
        if ok[z]:
            g[z] -= K[z]
    g[Lc] -= v
    return D, mag, ent


cdef extern from *:
    """
    /* The sums of the dual Hessian (_dual_hessian) for up to four categories in one pass over
       the ranks: each sum keeps its own partial sums, taking its terms in the order of
       _rsum_dev (two lanes: even and odd ranks) and _rsum_cx / _rsum_cxy (four lanes, the
       ranks after the last multiple of four in lane 0), so the results are the same as
       theirs, but the sums' add chains run side by side instead of one after the other.
       Returns 0 (the caller sums row by row) for more categories or without GCC/clang
       vector extensions. Outputs for every category z < Lc (and y >= z): dev1[z], dev2[z]
       (_rsum_dev), cx[z] (_rsum_cx of c p_z), cxy[4 z + y] (_rsum_cxy of c p_z p_y). */
    #if defined(__GNUC__) || defined(__clang__)
    typedef double maxent_v4d __attribute__((vector_size(32)));
    /* loads through an unaligned, aliasing vector type (a macro: a vector argument or return
       value would warn of the ABI of builds without AVX, -Wpsabi; and no memcpy into the
       accumulators' arrays, whose taken address would keep them out of registers) */
    typedef double maxent_v4du __attribute__((vector_size(32), aligned(8), may_alias));
    #define MAXENT_LOAD4(v, p) ((v) = *(const maxent_v4du*)(p))
    #define MAXENT_LANES4(s) (((s)[0] + (s)[1]) + ((s)[2] + (s)[3]))
    static inline void maxent_hess_sums_k(const int Lc, const double* c, const double* P, Py_ssize_t sP,
                                          const double* W, Py_ssize_t sW, const double* wb, Py_ssize_t n_len,
                                          double* dev1, double* dev2, double* cx, double* cxy) {
        const maxent_v2d z2 = {0.0, 0.0};
        const maxent_v4d z4 = {0.0, 0.0, 0.0, 0.0};
        maxent_v2d d1[4], d2[4];
        maxent_v4d x1[4], xy[4][4], pz[4];
        Py_ssize_t n = 0, k;
        int z, y;
        for (z = 0; z < Lc; z++) {
            d1[z] = z2;
            d2[z] = z2;
            x1[z] = z4;
            for (y = z; y < Lc; y++) xy[z][y] = z4;
        }
        for (; n + 4 <= n_len; n += 4) {
            maxent_v4d cv, bv, d;
            MAXENT_LOAD4(cv, c + n);
            MAXENT_LOAD4(bv, wb + n);
            for (z = 0; z < Lc; z++) MAXENT_LOAD4(pz[z], P + z * sP + n);
            for (z = 0; z < Lc; z++) {
                MAXENT_LOAD4(d, W + z * sW + n);
                d -= bv;
                maxent_v4d cp = cv * pz[z];
                maxent_v4d pd = cp * d;
                maxent_v4d q = pd * d;
                d1[z] += (maxent_v2d){pd[0], pd[1]};
                d1[z] += (maxent_v2d){pd[2], pd[3]};
                d2[z] += (maxent_v2d){q[0], q[1]};
                d2[z] += (maxent_v2d){q[2], q[3]};
                x1[z] += cp;
                for (y = z; y < Lc; y++) xy[z][y] += cp * pz[y];
            }
        }
        for (z = 0; z < Lc; z++) {
            const double* p = P + z * sP;
            const double* w = W + z * sW;
            double h1a = d1[z][0], h1b = d1[z][1], h2a = d2[z][0], h2b = d2[z][1], s0, t, e;
            k = n;
            if (k + 2 <= n_len) {
                t = c[k] * p[k] * (w[k] - wb[k]);
                e = c[k + 1] * p[k + 1] * (w[k + 1] - wb[k + 1]);
                h1a += t;
                h1b += e;
                h2a += t * (w[k] - wb[k]);
                h2b += e * (w[k + 1] - wb[k + 1]);
                k += 2;
            }
            if (k < n_len) {
                t = c[k] * p[k] * (w[k] - wb[k]);
                h1a += t;
                h2a += t * (w[k] - wb[k]);
            }
            dev1[z] = h1a + h1b;
            dev2[z] = h2a + h2b;
            s0 = x1[z][0];
            for (k = n; k < n_len; k++) s0 += c[k] * p[k];
            x1[z][0] = s0;
            cx[z] = MAXENT_LANES4(x1[z]);
            for (y = z; y < Lc; y++) {
                const double* py = P + y * sP;
                s0 = xy[z][y][0];
                for (k = n; k < n_len; k++) s0 += c[k] * p[k] * py[k];
                xy[z][y][0] = s0;
                cxy[4 * z + y] = MAXENT_LANES4(xy[z][y]);
            }
        }
    }
    static inline int maxent_hess_sums(Py_ssize_t Lc, const double* c, const double* P, Py_ssize_t sP,
                                       const double* W, Py_ssize_t sW, const double* wb, Py_ssize_t n_len,
                                       double* dev1, double* dev2, double* cx, double* cxy) {
        switch (Lc) {       /* a constant count per case: the compiler unrolls the loops over
                               categories and keeps the partial sums in registers */
            case 2: maxent_hess_sums_k(2, c, P, sP, W, sW, wb, n_len, dev1, dev2, cx, cxy); return 1;
            case 3: maxent_hess_sums_k(3, c, P, sP, W, sW, wb, n_len, dev1, dev2, cx, cxy); return 1;
            case 4: maxent_hess_sums_k(4, c, P, sP, W, sW, wb, n_len, dev1, dev2, cx, cxy); return 1;
            default: return 0;
        }
    }
    /* _csum (blocks of _BLOCK terms in four lanes, compensated across blocks) of R rows at
       once, each with its own partial sums and compensation in _csum's order: the same
       results, the rows' add chains side by side. */
    static inline void maxent_csum_rows_k(const int R, const double* c, const double* const* x,
                                          Py_ssize_t n_len, double* out) {
        const maxent_v4d z4 = {0.0, 0.0, 0.0, 0.0};
        double s[5], sc[5], s0, b, t;
        maxent_v4d a[5], cv, xv;
        Py_ssize_t n0, n1, n, k;
        int r;
        for (r = 0; r < R; r++) {
            s[r] = 0.0;
            sc[r] = 0.0;
        }
        for (n0 = 0; n0 < n_len; n0 += _BLOCK) {
            n1 = n0 + _BLOCK < n_len ? n0 + _BLOCK : n_len;
            for (r = 0; r < R; r++) a[r] = z4;
            for (n = n0; n + 4 <= n1; n += 4) {
                MAXENT_LOAD4(cv, c + n);
                for (r = 0; r < R; r++) {
                    MAXENT_LOAD4(xv, x[r] + n);
                    a[r] += cv * xv;
                }
            }
            for (r = 0; r < R; r++) {
                s0 = a[r][0];
                for (k = n; k < n1; k++) s0 += c[k] * x[r][k];
                b = (s0 + a[r][1]) + (a[r][2] + a[r][3]);
                t = s[r] + b;           /* _nsum */
                if (__builtin_fabs(s[r]) >= __builtin_fabs(b)) sc[r] += (s[r] - t) + b;
                else sc[r] += (b - t) + s[r];
                s[r] = t;
            }
        }
        for (r = 0; r < R; r++) out[r] = s[r] + sc[r];
    }
    static inline int maxent_csum_rows(Py_ssize_t R, const double* c, const double* const* x,
                                       Py_ssize_t n_len, double* out) {
        switch (R) {
            case 2: maxent_csum_rows_k(2, c, x, n_len, out); return 1;
            case 3: maxent_csum_rows_k(3, c, x, n_len, out); return 1;
            case 4: maxent_csum_rows_k(4, c, x, n_len, out); return 1;
            case 5: maxent_csum_rows_k(5, c, x, n_len, out); return 1;
            default: return 0;
        }
    }
    #else
    static inline int maxent_csum_rows(Py_ssize_t R, const double* c, const double* const* x,
                                       Py_ssize_t n_len, double* out) {
        return 0;
    }
    static inline int maxent_hess_sums(Py_ssize_t Lc, const double* c, const double* P, Py_ssize_t sP,
                                       const double* W, Py_ssize_t sW, const double* wb, Py_ssize_t n_len,
                                       double* dev1, double* dev2, double* cx, double* cxy) {
        return 0;
    }
    #endif
    """
    bint maxent_csum_rows(Py_ssize_t R, const double* c, const double* const* x, Py_ssize_t n_len, double* out) noexcept nogil
    bint maxent_hess_sums(Py_ssize_t Lc, const double* c, const double* P, Py_ssize_t sP, const double* W, Py_ssize_t sW, const double* wb, Py_ssize_t n_len, double* dev1, double* dev2, double* cx, double* cxy) noexcept nogil


cdef void _dual_hessian(double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[:, ::1] P, double[::1] wbar, double[:, ::1] H) noexcept nogil:
    """Hessian H (Lc+1, Lc+1) of the dual at the p (P) and mean features (wbar) of
    :func:`_dual_state`: H_zy = sum_n c_n (p_z [z = y] - p_z p_y), H_zb = sum_n c_n p_z
    (W_z - wbar), H_bb = sum_n c_n sum_z p_z (W_z - wbar)^2 (reassociated sums: up to four
    categories in one pass, ``maxent_hess_sums``, else row by row, with the same results). The
    reference category's row and column stay 0: _dual_solve replaces them (a_ref = 0)."""
    cdef double acc
    cdef double hbb
    cdef double hzb
    cdef double hzz
    cdef Py_ssize_t ref
    cdef Py_ssize_t y
    cdef Py_ssize_t z
    cdef double dev1[4]
    cdef double dev2[4]
    cdef double cx[4]
    cdef double cxy[16]
    cdef bint fused
    ref = -1
    for z in range(Lc):
        if ok[z]:
            ref = z
            break
    hbb = 0.0
    for z in range(Lc + 1):
        for y in range(Lc + 1):
            H[z, y] = 0.0
    fused = maxent_hess_sums(Lc, &c[0], &P[0, 0], P.shape[1], &W[0, 0], W.shape[1], &wbar[0], n_len,
                             dev1, dev2, cx, cxy)
    for z in range(Lc):
        if not ok[z]:
            continue
        if fused:
            hzb = dev1[z]
            hzz = dev2[z]
        else:
            hzb, hzz = _rsum_dev(c, P[z], W[z], wbar, n_len)
        hbb += hzz
        if z == ref:
            continue
        H[z, Lc] = hzb
        H[Lc, z] = hzb
        for y in range(z, Lc):
            if not ok[y]:
                continue
            acc = cxy[4 * z + y] if fused else _rsum_cxy(c, P[z], P[y], 0, n_len)
            H[z, y] -= acc
            if y != z:
                H[y, z] -= acc
        H[z, z] += cx[z] if fused else _rsum_cx(c, P[z], 0, n_len)
    H[Lc, Lc] = hbb


cdef (Py_ssize_t, double, double) _dual_solve(DualScratch ds, double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[::1] K, double v, double[::1] theta, double[:, ::1] P, double tol, Py_ssize_t max_iter, bint rel_ridge, double[::1] pw, double[::1] alt, double D_alt) noexcept nogil:
    """Damped Newton on the dual (as :func:`tests.numpy_solver.dual.newton_dual`, one problem):
    full step first, Armijo backtracking on D; every trial point's state (p, gradient) is
    computed once and kept when accepted, the Hessian only before a step.

    theta (Lc+1) is the start and is overwritten by the result; P (Lc, >= n_len) gets p.
    ``alt`` (Lc+1), ``D_alt``: another start and its dual value (np.inf: none), taken instead
    when the dual value at theta is above it (:func:`_linearize_run`'s second subproblem: the
    count-only multipliers, whose value has a closed form; the comparison uses the first
    state, which a separate evaluation of D at theta cost again: one softmax per GAP problem).
    Returns (nit, residual max|g|, entropy); a line search that finds no decrease ends it."""
    cdef double[:, ::1] A
    cdef double D
    cdef double Dt
    cdef double[:, ::1] H
    cdef double Ksum
    cdef Py_ssize_t N
    cdef double[:, ::1] Pa
    cdef double[:, ::1] Pb
    cdef double[::1] S
    cdef double[::1] Z
    cdef bint accepted
    cdef double d
    cdef double dmax
    cdef double ent
    cdef double entt
    cdef bint fi
    cdef bint fj
    cdef double[::1] g
    cdef double[::1] g2
    cdef bint good
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t ls
    cdef double mag
    cdef double magt
    cdef Py_ssize_t n
    cdef Py_ssize_t nit
    cdef double r
    cdef Py_ssize_t ref
    cdef double slack
    cdef double slope
    cdef double[::1] step
    cdef double t
    cdef double tol_b
    cdef double[::1] trial
    cdef double[::1] wa
    cdef double[::1] wb
    cdef Py_ssize_t z
    N = W.shape[1]
    ref = -1
    Ksum = 0.0
    for z in range(Lc):
        Ksum += K[z]
        if ok[z] and ref < 0:
            ref = z
    for z in range(Lc):
        if not ok[z] or z == ref:
            theta[z] = 0.0
    tol_b = max(tol, _EPS64 * (Ksum + abs(v) + 1.0))
    Pa = ds.Pa
    Pb = ds.Pb
    wa = ds.wa
    wb = ds.wb
    g = ds.g
    g2 = ds.g2
    H = ds.H
    trial = ds.trial
    step = ds.step
    A = ds.A
    S = ds.S
    Z = ds.Z
    D, mag, ent = _dual_state(W, c, Lc, n_len, ok, K, theta, v, Pa, wa, g, S, Z, pw)
    if D_alt < D:
        for i in range(Lc + 1):
            theta[i] = alt[i]
        D, mag, ent = _dual_state(W, c, Lc, n_len, ok, K, theta, v, Pa, wa, g, S, Z, pw)
    nit = 0
    r = 0.0
    while True:
        r = 0.0
        for i in range(Lc + 1):
            if abs(g[i]) > r:
                r = abs(g[i])
        if not (r > tol_b) or nit >= max_iter:
            break
        # Newton step on the free multipliers (non-free: identity rows, zero gradient); the
        # Hessian only here, so the last state (converged, or the last allowed) never builds it
        _dual_hessian(W, c, Lc, n_len, ok, Pa, wa, H)
        dmax = 0.0
        for i in range(Lc + 1):
            fi = i == Lc or (ok[i] and i != ref)
            for j in range(Lc + 1):
                fj = j == Lc or (ok[j] and j != ref)
                A[i, j] = H[i, j] if (fi and fj) else (1.0 if i == j else 0.0)
            step[i] = -g[i] if fi else 0.0
            if abs(A[i, i]) > dmax:
                dmax = abs(A[i, i])
        for i in range(Lc + 1):
            # rel_ridge (linear metrics): the ridge relative to each multiplier's own curvature,
            # as newton_dual, so a metric multiplier far below the counts' scale (RBP with only
            # deep relevant documents) keeps its steps. The inexact start and polish subproblems
            # of AP/GAP keep the largest diagonal's ridge: that path is the one benchmarked and
            # convergence-checked; whether the relative ridge costs time there was not resolvable
            # within the machine's timing noise (+-20% between runs)
            d = abs(A[i, i])
            A[i, i] += 1e-13 * (d if (rel_ridge and d > 1e-200 * dmax) else dmax) + 1e-300
        good = _solve_small(A, step, Lc + 1)
        slope = 0.0
        for i in range(Lc + 1):
            fi = i == Lc or (ok[i] and i != ref)
            if not fi or not good:
                step[i] = 0.0
            if fi:
                slope += g[i] * step[i]
        slack = 1e-13 * mag
        t = 1.0
        accepted = False
        for ls in range(51):
            for i in range(Lc + 1):
                trial[i] = theta[i] + t * step[i]
            # the whole state at every trial (the gradient costs little beside the softmax):
            # the accepted one is kept, never recomputed (~0.7 partial steps per nDCG problem)
            Dt, magt, entt = _dual_state(W, c, Lc, n_len, ok, K, trial, v, Pb, wb, g2, S, Z, pw)
            if isfinite(Dt) and Dt <= D + _ARMIJO * t * slope + slack:
                accepted = True
                break
            t *= 0.5
        nit += 1
        if not accepted:
            break
        for i in range(Lc + 1):
            theta[i] = trial[i]
        Pa, Pb = Pb, Pa
        wa, wb = wb, wa
        g, g2 = g2, g
        D, mag, ent = Dt, magt, entt
    for z in range(Lc):
        for n in range(n_len):
            P[z, n] = Pa[z, n]
    return nit, r, ent
