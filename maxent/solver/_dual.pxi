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
    b = theta[Lc]
    slse, alse = _softmax(W, c, Lc, n_len, ok, theta, P, S, Z, pw)
    for n in range(n_len):
        wbar[n] = 0.0
    for z in range(Lc):
        if ok[z]:
            for n in range(n_len):
                wbar[n] += P[z, n] * W[z, n]
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


cdef void _dual_hessian(double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[:, ::1] P, double[::1] wbar, double[:, ::1] H) noexcept nogil:
    """Hessian H (Lc+1, Lc+1) of the dual at the p (P) and mean features (wbar) of
    :func:`_dual_state`: H_zy = sum_n c_n (p_z [z = y] - p_z p_y), H_zb = sum_n c_n p_z
    (W_z - wbar), H_bb = sum_n c_n sum_z p_z (W_z - wbar)^2 (reassociated sums). The
    reference category's row and column stay 0: _dual_solve replaces them (a_ref = 0)."""
    cdef double acc
    cdef double hbb
    cdef double hzb
    cdef double hzz
    cdef Py_ssize_t ref
    cdef Py_ssize_t y
    cdef Py_ssize_t z
    ref = -1
    for z in range(Lc):
        if ok[z]:
            ref = z
            break
    hbb = 0.0
    for z in range(Lc + 1):
        for y in range(Lc + 1):
            H[z, y] = 0.0
    for z in range(Lc):
        if not ok[z]:
            continue
        hzb, hzz = _rsum_dev(c, P[z], W[z], wbar, n_len)
        hbb += hzz
        if z == ref:
            continue
        H[z, Lc] = hzb
        H[Lc, z] = hzb
        for y in range(z, Lc):
            if not ok[y]:
                continue
            acc = _rsum_cxy(c, P[z], P[y], 0, n_len)
            H[z, y] -= acc
            if y != z:
                H[y, z] -= acc
        H[z, z] += _rsum_cx(c, P[z], 0, n_len)
    H[Lc, Lc] = hbb


cdef (Py_ssize_t, double, double) _dual_solve(DualScratch ds, double[:, ::1] W, double[::1] c, Py_ssize_t Lc, Py_ssize_t n_len, unsigned char[::1] ok, double[::1] K, double v, double[::1] theta, double[:, ::1] P, double tol, Py_ssize_t max_iter, bint rel_ridge, double[::1] pw, double[::1] alt, double D_alt) noexcept nogil:
    """Damped Newton on the dual (as :func:`maxent.solver.dual.newton_dual`, one problem):
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
