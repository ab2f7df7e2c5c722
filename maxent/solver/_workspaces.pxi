cdef class PrefixWorkspace:
    """Scratch of :func:`_prefix_one` for J slots and N ranks, allocated once per batch (and again
    only when J changes). Uninitialised (each problem writes every entry it reads) but for R, the
    right-hand sides of the Newton-KKT solves, whose constant columns 1_{s = r} are set here
    (:func:`_newton_rhs` writes the others)."""
    cdef Py_ssize_t J
    cdef unsigned char[::1] ok
    cdef double[::1] ones, nopw, th, Zs, alpha, tV, c, ct, rs, alpha_t
    cdef double[:, ::1] G, Q, W0, W1, P, Pt, F, Gt, LR, LRt, tA, tB, S, dQ, ell, ell_x, Ft
    cdef double[:, :, ::1] R, X, Ep, Dinv, Gs
    cdef LinScratch ls

    def __init__(self, Py_ssize_t J, Py_ssize_t N):
        cdef Py_ssize_t Lc = J + 1, nr = J + 2, r
        self.J = J
        self.ok = np.ones(Lc, dtype=np.uint8)
        self.ones = np.ones(N)
        self.nopw = np.full(Lc + 3, -1.0)
        self.G = np.empty((J, N))
        self.Q = np.empty((J, N))
        self.W0 = np.empty((Lc, N))
        self.W1 = np.empty((Lc, N))
        self.P = np.empty((Lc, N))
        self.Pt = np.empty((Lc, N))
        self.F = np.empty((J, N))
        self.Gt = np.empty((J, N))
        self.th = np.empty(Lc + 1)
        self.Zs = np.empty(N)
        self.alpha = np.empty(J)
        self.LR = np.empty((J, N))
        self.LRt = np.empty((J, N))
        R = np.zeros((J, N, nr))
        for r in range(J):
            R[r, :, 1 + r] = 1.0
        self.R = R
        self.X = np.empty((J, N, nr))
        self.Ep = np.empty((N, J, J))
        self.Dinv = np.empty((N, J, J))
        self.Gs = np.empty((N, J, nr))
        self.tA = np.empty((J, J))
        self.tB = np.empty((J, J))
        self.tV = np.empty(J)
        self.c = np.empty(J)
        self.ct = np.empty(J)
        self.S = np.empty((J + 1, J + 1))
        self.rs = np.empty(J + 1)
        self.dQ = np.empty((J, N))
        self.ell = np.empty((Lc, N))
        self.ell_x = np.empty((Lc, N))
        self.Ft = np.empty((J, N))
        self.alpha_t = np.empty(J)
        self.ls = LinScratch(Lc, N)


cdef class SoftmaxScratch:
    """Scratch of :func:`_cascade_softmax`: W (Lc, N), ones (N), ok (Lc, all 1), th1 (Lc+1),
    S, Z (N), pw (Lc+3); the two ``ones`` are set here and only read."""
    cdef double[:, ::1] W
    cdef double[::1] ones, th1, S, Z, pw
    cdef unsigned char[::1] okb

    def __init__(self, Py_ssize_t Lc, Py_ssize_t N):
        self.W = np.empty((Lc, N))
        self.ones = np.ones(N)
        self.okb = np.ones(Lc, dtype=np.uint8)
        self.th1 = np.empty(Lc + 1)
        self.S = np.empty(N)
        self.Z = np.empty(N)
        self.pw = np.empty(Lc + 3)


cdef class CascadeWorkspace:
    """Scratch of :func:`_cascade_newton` for J + 1 populated categories and lists of length
    <= N: allocated once per batch (again only when J changes), not cleared. The iterate and
    the trial point live in the two slots of each state array."""
    cdef Py_ssize_t J
    cdef double[::1] sp, pm, rs, cv, dy
    cdef double[:, ::1] TH, Yv, FF2, AB, X, Sc, Z, HZ, S
    cdef double[:, :, ::1] PP, V, MM
    cdef SoftmaxScratch sws

    def __init__(self, Py_ssize_t J, Py_ssize_t N):
        cdef Py_ssize_t Lc = J + 1, nr = J + 2
        self.J = J
        self.sws = SoftmaxScratch(Lc, N)
        self.sp = np.empty(Lc)
        self.TH = np.empty((2, Lc))
        self.Yv = np.empty((2, N))
        self.PP = np.empty((2, Lc, N))
        self.V = np.empty((2, 7, N))
        self.MM = np.empty((2, Lc, N))
        self.pm = np.empty(Lc + 1)
        self.FF2 = np.empty((2, Lc))
        self.AB = np.empty((2 * N, 7))
        self.X = np.empty((2 * N, nr))
        self.Sc = np.empty((5, N))
        self.Z = np.empty((nr, N))
        self.HZ = np.empty((nr, N))
        self.S = np.empty((J + 1, J + 1))
        self.rs = np.empty(J + 1)
        self.cv = np.empty(J)
        self.dy = np.empty(N)


cdef class DualScratch:
    """Scratch of :func:`_dual_solve` for up to Lc categories and N columns: two states (p, mean
    features, gradient) that an accepted trial swaps, the Hessian and the Newton system."""
    cdef double[:, ::1] Pa, Pb, H, A
    cdef double[::1] wa, wb, g, g2, trial, step, S, Z

    def __init__(self, Py_ssize_t Lc, Py_ssize_t N):
        self.Pa = np.empty((Lc, N))
        self.Pb = np.empty((Lc, N))
        self.wa = np.empty(N)
        self.wb = np.empty(N)
        self.g = np.empty(Lc + 1)
        self.g2 = np.empty(Lc + 1)
        self.H = np.empty((Lc + 1, Lc + 1))
        self.trial = np.empty(Lc + 1)
        self.step = np.empty(Lc + 1)
        self.A = np.empty((Lc + 1, Lc + 1))
        self.S = np.empty(N)
        self.Z = np.empty(N)


cdef class LinScratch:
    """Scratch of :func:`_linearize_run` for up to Lc categories and N ranks (and its dual
    solves' :class:`DualScratch`). ``ok`` and ``ones`` are all 1 and ``nopw`` all -1, set here and
    only read; the run resets the power structures and the preference order it uses."""
    cdef unsigned char[::1] ok
    cdef double[::1] ones, th0, nopw, pw, pm, pwc, cc, wbar, gf, Sf, Zf
    cdef int64_t[::1] pref, bnd
    cdef double[:, ::1] Sc, Wc, Pc
    cdef DualScratch ds

    def __init__(self, Py_ssize_t Lc, Py_ssize_t N):
        self.ok = np.ones(Lc, dtype=np.uint8)
        self.ones = np.ones(N)
        self.th0 = np.empty(Lc + 1)
        self.nopw = np.full(Lc + 3, -1.0)
        self.pw = np.empty(Lc + 3)
        self.pm = np.empty(Lc + 1)
        self.pwc = np.empty(Lc + 3)
        self.Sc = np.empty((5, N))
        self.pref = np.empty(Lc, dtype=np.int64)
        self.bnd = np.empty(N + 1, dtype=np.int64)
        self.Wc = np.empty((Lc, max(N, 1)))
        self.cc = np.empty(max(N, 1))
        self.Pc = np.empty((Lc, max(N, 1)))
        self.wbar = np.empty(N)
        self.gf = np.empty(Lc + 1)
        self.Sf = np.empty(N)
        self.Zf = np.empty(N)
        self.ds = DualScratch(Lc, N)
