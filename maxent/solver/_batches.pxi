cdef class Problems:
    """A batch's problems as every ``*_batch`` kernel takes them, its one input beside the
    form's own arrays: targets v (B,), counts K (B, L), lengths (B,), solve_me (B,) bool (the
    problems to solve, classified strictly inside their attainable range by
    :func:`~maxent.solver.classify.classify`), the range lo, hi (B,), and the settings: the
    tolerances tol and kkt_tol, newton Newton-KKT steps, steps of successive linearisation (the
    linear form: of damped Newton on the dual), and switch, the stationarity below which a
    cascade's linearisation hands over to Newton-KKT."""
    cdef public double[::1] v, lo, hi
    cdef public double[:, ::1] K
    cdef public int64_t[::1] lengths
    cdef public unsigned char[::1] solve_me
    cdef public double tol, kkt_tol, switch
    cdef public Py_ssize_t newton, steps

    def __init__(self, v, K, lengths, solve_me, lo, hi, *, double tol, double kkt_tol=0.0,
                 Py_ssize_t newton=0, Py_ssize_t steps=0, double switch=0.0):
        self.v, self.K, self.lengths, self.solve_me, self.lo, self.hi = v, K, lengths, solve_me, lo, hi
        self.tol, self.kkt_tol, self.newton, self.steps, self.switch = tol, kkt_tol, newton, steps, switch


cdef class Results:
    """Where a ``*_batch`` kernel writes, its one output. For each problem it solves (its last
    iterate when not certified): P[b, n, z - col0] = p_n(z) for z >= col0 (binary lists: col0
    = 1, graded: 0), the multipliers theta[b] (L + 1: a_z, then b), and (B,) each: the
    kernel's code, its steps nit, the residual, the entropy ent, the attained value att and
    the stationarity stat (not written by the linear form)."""
    cdef public double[:, :, ::1] P
    cdef public Py_ssize_t col0
    cdef public double[:, ::1] theta
    cdef public int64_t[::1] code, nit
    cdef public double[::1] resid, ent, att, stat

    def __init__(self, P, Py_ssize_t col0, theta, code, nit, resid, ent, att, stat):
        self.P, self.col0, self.theta, self.code, self.nit = P, col0, theta, code, nit
        self.resid, self.ent, self.att, self.stat = resid, ent, att, stat


def linear_range(double[:, :, ::1] WT, double[:, ::1] K, int64_t[::1] lengths, double[::1] top, double[::1] bot):
    """The ends of the attainable range of <W, p> of each problem of a metric linear in p
    (arguments as :func:`linear_batch`): its values on the deterministic lists that fill the
    categories in decreasing (top) and in increasing (bot) order of their rank-1 feature."""
    cdef Py_ssize_t B
    cdef Py_ssize_t L
    cdef double[::1] W1
    cdef double e_bot
    cdef double e_top
    cdef Py_ssize_t i
    cdef Py_ssize_t n_len
    cdef int64_t[::1] pref
    cdef Py_ssize_t z
    B = WT.shape[0]
    L = WT.shape[1]
    pref = np.empty(L, dtype=np.int64)
    W1 = np.empty(L)
    with nogil:
        for i in range(B):
            n_len = lengths[i]
            for z in range(L):
                W1[z] = WT[i, z, 0] if n_len > 0 else 0.0
            _preference(W1, L, pref)
            e_top = _extreme_value(WT[i], L, n_len, K[i], pref, True)
            e_bot = _extreme_value(WT[i], L, n_len, K[i], pref, False)
            top[i] = e_top
            bot[i] = e_bot


def cascade_range(double[::1] s_all, double[::1] c, double[:, ::1] K, int64_t[::1] lengths, double[::1] top, double[::1] bot):
    """The ends of the attainable range of the deterministic lists of each problem of a cascade
    metric (arguments as :func:`cascade_batch`): their values highest category first (top) and
    lowest first (bot). The maximum is the metric's over every distribution; a fractional list can
    go below the minimum (:func:`maxent.solver._problem.cascade_lower_bound`)."""
    cdef Py_ssize_t B
    cdef Py_ssize_t J
    cdef Py_ssize_t L
    cdef Py_ssize_t Lp
    cdef Py_ssize_t N
    cdef double[::1] Kp
    cdef double[:, ::1] Pf
    cdef double[:, ::1] Sc
    cdef double[:, ::1] W0
    cdef double e_bot
    cdef double e_top
    cdef Py_ssize_t i
    cdef Py_ssize_t k
    cdef Py_ssize_t n_len
    cdef int64_t[::1] pop
    cdef double[::1] sp
    B = K.shape[0]
    L = K.shape[1]
    N = c.shape[0]
    pop = np.empty(L, dtype=np.int64)
    Kp = np.empty(L)
    sp = np.zeros(L)
    Pf = np.zeros((L, N))
    W0 = np.zeros((L, N))
    Sc = np.empty((5, N))
    with nogil:
        for i in range(B):
            n_len = lengths[i]
            Lp = _populated(K[i], pop, Kp)
            if Lp == 0:
                top[i] = 0.0
                bot[i] = 0.0
                continue
            for k in range(Lp):
                sp[k] = s_all[pop[k]]
            J = Lp - 1
            _extreme_list(Pf, J, n_len, Kp, True)
            e_top = _cascade_E_W(Pf, Lp, n_len, sp, c, W0, False, Sc)
            _extreme_list(Pf, J, n_len, Kp, False)
            e_bot = _cascade_E_W(Pf, Lp, n_len, sp, c, W0, False, Sc)
            top[i] = e_top
            bot[i] = e_bot


def linear_batch(double[:, :, ::1] WT, Problems pr, Results out):
    """Solve every problem of a batch of a metric linear in p (E = <W, p>).

    WT (B, L, N) constant features dE/dp (0 beyond lengths); the problems and settings (tol,
    steps) in ``pr``. Writes ``out`` for each problem solved (code 0, or 2: the last
    iterate), theta[b] = [a_0..a_{L-1}, b] (a_ref = 0) and att = <W, p>.
    code: 0 optimal, 1 skipped (not solve_me), 2 not certified.
    """
    cdef double[::1] v = pr.v
    cdef double[:, ::1] K = pr.K
    cdef int64_t[::1] lengths = pr.lengths
    cdef unsigned char[::1] solve_me = pr.solve_me
    cdef double tol = pr.tol
    cdef Py_ssize_t max_iter = pr.steps
    cdef double[:, :, ::1] P_out = out.P
    cdef Py_ssize_t col0 = out.col0
    cdef double[:, ::1] theta_out = out.theta
    cdef int64_t[::1] code = out.code
    cdef int64_t[::1] nit_out = out.nit
    cdef double[::1] resid_out = out.resid
    cdef double[::1] ent_out = out.ent
    cdef double[::1] att_out = out.att
    cdef Py_ssize_t B
    cdef double E
    cdef double Ec
    cdef DualScratch ds
    cdef Py_ssize_t L
    cdef Py_ssize_t N
    cdef double[:, ::1] Pc
    cdef Py_ssize_t R
    cdef double[:, ::1] W
    cdef double[:, ::1] Wc
    cdef double _
    cdef double[::1] cnt
    cdef double ent
    cdef Py_ssize_t i
    cdef Py_ssize_t it
    cdef Py_ssize_t n
    cdef Py_ssize_t n_len
    cdef unsigned char[::1] ok
    cdef double[::1] pw
    cdef Py_ssize_t q
    cdef Py_ssize_t ref
    cdef double res
    cdef int64_t[::1] run
    cdef bint same
    cdef double[::1] th
    cdef Py_ssize_t z
    with nogil:
        B = WT.shape[0]
        L = WT.shape[1]
        N = WT.shape[2]
        with gil:
            ok = np.empty(L, dtype=np.uint8)
            Pc = np.empty((L, N))
            Wc = np.empty((L, N))
            cnt = np.empty(N)
            run = np.empty(N, dtype=np.int64)
            th = np.empty(L + 1)
            pw = np.empty(L + 3)
            ds = DualScratch(L, N)
        for i in range(B):
            W = WT[i]
            n_len = lengths[i]
            if not solve_me[i]:
                code[i] = 1
                continue
            for z in range(L):
                ok[z] = K[i, z] > 0
            # count-only start: a_z = log(K_z / K_ref), b = 0
            ref = 0
            while not ok[ref]:
                ref += 1
            for z in range(L):
                th[z] = log(K[i, z] / K[i, ref]) if ok[z] else 0.0
            th[L] = 0.0
            # consecutive ranks with equal feature columns (beyond a cutoff, inside P@k's top k)
            # have equal p: solve over runs of equal columns, each counted c times
            R = 0
            for n in range(n_len):
                same = R > 0
                if same:
                    for z in range(L):
                        if W[z, n] != Wc[z, R - 1]:
                            same = False
                            break
                if same:
                    cnt[R - 1] += 1.0
                else:
                    for z in range(L):
                        Wc[z, R] = W[z, n]
                    cnt[R] = 1.0
                    R += 1
                run[n] = R - 1
            _power_structure(Wc, L, R, pw)
            it, _, ent = _dual_solve(ds, Wc, cnt, L, R, ok, K[i], v[i], th, Pc, 0.01 * tol,
                                              max_iter, True, pw, th, INFINITY)
            # certificate on the returned p (column r of the runs stands for cnt_r ranks of equal
            # p): counts and |<W, p> - v|, compensated sums
            res = 0.0
            E = 0.0
            Ec = 0.0
            for z in range(L):
                res = max(res, abs(_csum(cnt, Pc[z], R) - K[i, z]))
                E, Ec = _nsum(E, Ec, _csum2(cnt, Wc[z], Pc[z], R))
            E += Ec
            res = max(res, abs(E - v[i]))
            nit_out[i] = it
            code[i] = 0 if res <= tol else 2
            for n in range(n_len):
                q = run[n]
                for z in range(col0, L):
                    P_out[i, n, z - col0] = Pc[z, q]
            for z in range(L + 1):
                theta_out[i, z] = th[z]
            resid_out[i] = res
            ent_out[i] = ent        # the dual's entropy of p (no logarithms; _dual_state)
            att_out[i] = E


cdef void _write_slot_result(Py_ssize_t i, double[:, ::1] Pf, Py_ssize_t Lp, Py_ssize_t n_len, int64_t[::1] pop, Py_ssize_t col0, double[::1] th, double res, double st, double E, double[:, :, ::1] P_out, double[:, ::1] theta_out, double[::1] resid_out, double[::1] stat_out, double[::1] ent_out, double[::1] att_out) noexcept nogil:
    """Outputs of problem i from its slot form (Lp populated categories pop, p in Pf,
    multipliers th = [a over the slots, b]): P_out[i, n, z - col0] for z >= col0, theta_out[i]
    (a_z at the populated z, b last), residual, stationarity, entropy and E."""
    cdef Py_ssize_t L
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t z
    L = theta_out.shape[1] - 1
    for k in range(Lp):
        z = pop[k]
        if z >= col0:
            for n in range(n_len):
                P_out[i, n, z - col0] = Pf[k, n]
        theta_out[i, z] = th[k]
    theta_out[i, L] = th[Lp]
    resid_out[i] = res
    stat_out[i] = st
    ent_out[i] = _entropy(Pf, Lp, n_len)
    att_out[i] = E


cdef Py_ssize_t _prefix_slots(int64_t[::1] js, double[::1] kappa_i, double[::1] f, double[::1] K_i, Py_ssize_t n_len, int64_t[::1] pop, double[::1] Kp, double[::1] kap, double* c0) noexcept nogil:
    """The slot form of one problem of a prefix metric: its populated categories (indices in
    pop, counts in Kp), the slot weights kap (J,) and the constant c0 of the thresholds every
    document passes; returns J, the number of populated categories less one."""
    cdef Py_ssize_t J
    cdef Py_ssize_t Lp
    cdef double fn
    cdef Py_ssize_t j
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t q
    cdef Py_ssize_t r
    Lp = _populated(K_i, pop, Kp)
    J = Lp - 1
    # thresholds -> slots: r = number of populated categories below j
    c0[0] = 0.0
    fn = -1.0                       # sum_n f_n (n + 1), once per problem when needed
    for r in range(max(J, 0)):
        kap[r] = 0.0
    for q in range(js.shape[0]):
        j = js[q]
        r = 0
        for k in range(Lp):
            if pop[k] < j:
                r += 1
        if r == 0:
            if fn < 0.0:
                fn = 0.0
                for n in range(n_len):
                    fn += f[n] * (n + 1)
            c0[0] += kappa_i[q] * fn
        elif r <= J:
            kap[r - 1] += kappa_i[q]
    return J


def prefix_range(int64_t[::1] js, double[:, ::1] kappa, double[::1] f, double[:, ::1] K, int64_t[::1] lengths, double[::1] top, double[::1] bot):
    """The ends of the attainable range of E of each problem of a prefix metric (arguments as
    :func:`prefix_batch`): its values on the deterministic lists highest category first (top)
    and lowest first (bot; one populated category: the one list's value)."""
    cdef Py_ssize_t B
    cdef Py_ssize_t J
    cdef Py_ssize_t L
    cdef Py_ssize_t N
    cdef double c0
    cdef double e_bot
    cdef double e_top
    cdef Py_ssize_t i
    cdef Py_ssize_t n_len
    cdef int64_t[::1] pop
    cdef double[::1] Kp
    cdef double[::1] kap
    cdef double[:, ::1] Pf
    cdef double[:, ::1] G
    cdef double[:, ::1] Q
    B = K.shape[0]
    L = K.shape[1]
    N = f.shape[0]
    pop = np.empty(L, dtype=np.int64)
    Kp = np.empty(L)
    kap = np.zeros(L)
    Pf = np.zeros((L, N))
    G = np.empty((L, N))        # scratch of _prefix_E_G, rows 0..J-1
    Q = np.empty((L, N))
    with nogil:
        for i in range(B):
            n_len = lengths[i]
            J = _prefix_slots(js, kappa[i], f, K[i], n_len, pop, Kp, kap, &c0)
            if J < 1:
                top[i] = c0      # one populated category: no slot, E = c0
                bot[i] = c0
                continue
            _extreme_list(Pf, J, n_len, Kp, True)
            e_top = _prefix_E_G(Pf, J, n_len, kap, f, c0, G, Q, False)
            _extreme_list(Pf, J, n_len, Kp, False)
            e_bot = _prefix_E_G(Pf, J, n_len, kap, f, c0, G, Q, False)
            top[i] = e_top
            bot[i] = e_bot


def prefix_batch(int64_t[::1] js, double[:, ::1] kappa, double[::1] f, Problems pr, Results out):
    """Solve every problem of a batch of a prefix metric (AP family, GAP).

    js (J0,) category thresholds, kappa (B, J0), f (N,) (``metric.prefix_hessian``); the
    problems and settings in ``pr`` (lo and hi: :func:`prefix_range`; tol, kkt_tol, newton,
    steps). Writes ``out`` as :func:`linear_batch`, plus the stationarity; theta (B, L+1)
    holds a_z (0 for empty categories) and b.
    code: 0 optimal, 3 optimal by the second run (``steps`` linearisation steps),
    1 skipped, 2 not certified. ``newton`` 0: the linearisation alone.
    """
    cdef double[::1] v = pr.v
    cdef double[:, ::1] K = pr.K
    cdef int64_t[::1] lengths = pr.lengths
    cdef unsigned char[::1] solve_me = pr.solve_me
    cdef double[::1] lo = pr.lo
    cdef double[::1] hi = pr.hi
    cdef double tol = pr.tol
    cdef double kkt_tol = pr.kkt_tol
    cdef Py_ssize_t max_newton = pr.newton
    cdef Py_ssize_t fallback = pr.steps
    cdef double[:, :, ::1] P_out = out.P
    cdef Py_ssize_t col0 = out.col0
    cdef double[:, ::1] theta_out = out.theta
    cdef int64_t[::1] code = out.code
    cdef int64_t[::1] nit_out = out.nit
    cdef double[::1] resid_out = out.resid
    cdef double[::1] ent_out = out.ent
    cdef double[::1] att_out = out.att
    cdef double[::1] stat_out = out.stat
    cdef Py_ssize_t B
    cdef double E
    cdef Py_ssize_t J
    cdef double[::1] Kp
    cdef Py_ssize_t L
    cdef Py_ssize_t Lp
    cdef Py_ssize_t N
    cdef double[:, ::1] Pf
    cdef double c0
    cdef Py_ssize_t cd
    cdef Py_ssize_t i
    cdef Py_ssize_t it
    cdef double[::1] kap
    cdef Py_ssize_t n
    cdef Py_ssize_t n_len
    cdef bint near
    cdef int64_t[::1] pop
    cdef double res
    cdef double st
    cdef double[::1] th
    cdef double[::1] w
    cdef PrefixWorkspace ws
    cdef Py_ssize_t ws_J
    cdef list wcache
    with nogil:
        B = K.shape[0]
        L = K.shape[1]
        N = f.shape[0]
        with gil:
            pop = np.empty(L, dtype=np.int64)
            Kp = np.empty(L)
            kap = np.zeros(L)
            w = np.zeros(N)
            Pf = np.zeros((L, N))
            th = np.zeros(L + 1)
            ws = PrefixWorkspace(1, N)      # scratch of _prefix_one, for the J of the last problem
            wcache = [None] * (L + 1)       # one per J met in the batch: consecutive lists often differ
            wcache[1] = ws
        ws_J = 1
        for i in range(B):
            if not solve_me[i]:
                code[i] = 1
                continue
            n_len = lengths[i]
            J = _prefix_slots(js, kappa[i], f, K[i], n_len, pop, Kp, kap, &c0)
            Lp = J + 1
            for n in range(n_len):
                w[n] = f[n] - f[n + 1] if n + 1 < n_len else f[n]
            if J != ws_J:
                with gil:
                    if wcache[J] is None:
                        wcache[J] = PrefixWorkspace(J, N)
                    ws = wcache[J]
                ws_J = J
            near = min(v[i] - lo[i], hi[i] - v[i]) < _NEAR * (hi[i] - lo[i])
            cd, it, st, E, res = _prefix_one(Pf, J, n_len, Kp, kap, f, w, c0, v[i], tol, kkt_tol,
                                             max_newton, fallback, th, near, ws)
            nit_out[i] = it
            code[i] = cd
            _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                               stat_out, ent_out, att_out)


def cascade_batch(double[::1] s_all, double[::1] c, Problems pr, Results out):
    """Solve every problem of a batch of a cascade metric (RR, ERR; ``metric.cascade_form``):
    successive linearisation (:func:`_linearize_run`, at most ``steps`` subproblems) until the
    stationarity is <= ``switch``, then Newton-KKT (:func:`_cascade_newton`, at most
    ``newton`` steps); if Newton fails, linearisation from the start to the end.
    ``newton`` 0: that last linearisation alone (``method="linearize"``, the second run).

    s_all (L,) satisfaction per category (non-decreasing), c (N,) rank weights; the problems
    and settings in ``pr`` (tol, kkt_tol, newton, steps, switch). Writes ``out`` as
    :func:`prefix_batch`. code: 0 optimal, 1 skipped, 2 not certified.
    """
    cdef double[::1] v = pr.v
    cdef double[:, ::1] K = pr.K
    cdef int64_t[::1] lengths = pr.lengths
    cdef unsigned char[::1] solve_me = pr.solve_me
    cdef double tol = pr.tol
    cdef double kkt_tol = pr.kkt_tol
    cdef Py_ssize_t max_newton = pr.newton
    cdef Py_ssize_t steps = pr.steps
    cdef double switch = pr.switch
    cdef double[:, :, ::1] P_out = out.P
    cdef Py_ssize_t col0 = out.col0
    cdef double[:, ::1] theta_out = out.theta
    cdef int64_t[::1] code = out.code
    cdef int64_t[::1] nit_out = out.nit
    cdef double[::1] resid_out = out.resid
    cdef double[::1] ent_out = out.ent
    cdef double[::1] att_out = out.att
    cdef double[::1] stat_out = out.stat
    cdef Py_ssize_t B
    cdef double E
    cdef double[:, ::1] G
    cdef double[:, ::1] Gt
    cdef Py_ssize_t J
    cdef double[::1] Kp
    cdef Py_ssize_t L
    cdef Py_ssize_t Lp
    cdef Py_ssize_t N
    cdef double[:, ::1] P
    cdef double[:, ::1] Pf
    cdef double[:, ::1] Q
    cdef double[:, ::1] Sc
    cdef double[:, ::1] W0
    cdef double[:, ::1] W1
    cdef CascadeWorkspace cws
    cdef LinScratch ls
    cdef Py_ssize_t cws_J
    cdef list wcache
    cdef Py_ssize_t i
    cdef Py_ssize_t it
    cdef Py_ssize_t itl
    cdef Py_ssize_t itn
    cdef Py_ssize_t k
    cdef Py_ssize_t n_len
    cdef bint ok_
    cdef int64_t[::1] pop
    cdef double res
    cdef double[::1] sp
    cdef double st
    cdef double[::1] th
    with nogil:
        B = K.shape[0]
        L = K.shape[1]
        N = c.shape[0]
        with gil:
            pop = np.empty(L, dtype=np.int64)
            Kp = np.empty(L)
            sp = np.zeros(L)
            Pf = np.zeros((L, N))
            P = np.zeros((L, N))
            W0 = np.zeros((L, N))
            W1 = np.zeros((L, N))
            G = np.zeros((1, N))
            Gt = np.zeros((1, N))
            Q = np.zeros((1, N))
            Sc = np.empty((5, N))
            th = np.zeros(L + 1)
        cws_J = 1       # a workspace for J = 1, another for each J met in the batch
        with gil:
            cws = CascadeWorkspace(cws_J, N)
            ls = LinScratch(L, N)
            wcache = [None] * (L + 1)
            wcache[1] = cws
        for i in range(B):
            if not solve_me[i]:
                code[i] = 1
                continue
            n_len = lengths[i]
            Lp = _populated(K[i], pop, Kp)
            for k in range(Lp):
                sp[k] = s_all[pop[k]]
            J = Lp - 1
            if max_newton == 0:
                # successive linearisation alone, exact subproblems (the numpy solver's method)
                ok_, it, st, E, res = _linearize_run(ls, J, n_len, Kp, sp, c, 0.0, v[i], tol, kkt_tol, steps,
                                                     _FAR_TOL, P, Pf, th, W0, W1, G, Gt, Q, _INNER_ITER, 1)
                nit_out[i] = it
                code[i] = 0 if ok_ else 2
                _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                                   stat_out, ent_out, att_out)
                continue
            # successive linearisation until the stationarity is <= ``switch``, then Newton-KKT
            ok_, it, st, E, res = _linearize_run(ls, J, n_len, Kp, sp, c, 0.0, v[i], tol, kkt_tol, steps,
                                                 _CASCADE_FAR_TOL, P, Pf, th, W0, W1, G, Gt, Q, _INNER_ITER, 1,
                                                 switch, _COARSE)
            if not ok_ and st <= switch:
                if J != cws_J:
                    with gil:
                        if wcache[J] is None:
                            wcache[J] = CascadeWorkspace(J, N)
                        cws = wcache[J]
                    cws_J = J
                ok_, itn, st, E, res = _cascade_newton(Pf, J, n_len, Kp, sp, c, v[i], tol, kkt_tol,
                                                       max_newton, th, W0, cws)
                it += itn
                if not ok_:
                    # Newton failed: successive linearisation to the end (the numpy method)
                    ok_, itl, st, E, res = _linearize_run(ls, J, n_len, Kp, sp, c, 0.0, v[i], tol, kkt_tol, steps,
                                                          _FAR_TOL, P, Pf, th, W0, W1, G, Gt, Q, _INNER_ITER, 1)
                    it += itl
            nit_out[i] = it
            code[i] = 0 if ok_ else 2
            _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                               stat_out, ent_out, att_out)
