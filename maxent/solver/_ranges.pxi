cpdef double _extreme_value(double[:, ::1] W, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] K, int64_t[::1] pref, bint top) noexcept nogil:
    """<W, p> of the deterministic list that fills the categories in preference order
    (``pref``: categories by decreasing preference; reversed when not top)."""
    cdef Py_ssize_t _
    cdef Py_ssize_t cnt
    cdef double e
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t z
    e = 0.0
    n = 0
    for k in range(Lc):
        z = pref[k] if top else pref[Lc - 1 - k]
        cnt = <Py_ssize_t>(K[z] + 0.5)
        for _ in range(cnt):
            if n < n_len:
                e += W[z, n]
            n += 1
    return e


cpdef Py_ssize_t _rank_blocks(Py_ssize_t n_len, Py_ssize_t ratio, int64_t[::1] bnd) noexcept nogil:
    """Blocks of consecutive ranks for a coarse subproblem: the block starting at rank a (from
    0) runs to a + max(1, a // ratio) (exclusive; ranks below 2 ratio alone), so that
    features varying like 1/rank or log(rank) vary by ~1/ratio of their level within a block.
    bnd (>= n_len + 1) gets the boundaries; returns the number of blocks M (bnd[M] = n_len)."""
    cdef Py_ssize_t M
    cdef Py_ssize_t a
    M = 0
    a = 0
    while a < n_len:
        bnd[M] = a
        M += 1
        a = min(n_len, a + max(1, a // ratio))
    bnd[M] = n_len
    return M


cpdef void _block_means(double[:, ::1] W, Py_ssize_t Lc, int64_t[::1] bnd, Py_ssize_t M, double[::1] cc, double[:, ::1] Wc) noexcept nogil:
    """Wc[z, j] = mean of W[z, n] over block j of ``bnd``, cc[j] its number of ranks (the
    column weight of a coarse subproblem: :func:`_softmax`'s c_n)."""
    cdef double acc
    cdef Py_ssize_t j
    cdef Py_ssize_t n
    cdef Py_ssize_t z
    for j in range(M):
        cc[j] = bnd[j + 1] - bnd[j]
    for z in range(Lc):
        for j in range(M):
            acc = 0.0
            for n in range(bnd[j], bnd[j + 1]):
                acc += W[z, n]
            Wc[z, j] = acc / cc[j]


cpdef double _extreme_steer(double[:, ::1] W, Py_ssize_t Lc, Py_ssize_t n_len, double[::1] K, int64_t[::1] pref, bint top) noexcept nogil:
    """:func:`_extreme_value` with each category's run of ranks summed reassociated
    (:func:`_rsum`; it vectorises): for :func:`_linearize_run`, where the range only moves a
    subproblem's target into it. The attainable range that classifies a target
    (``*_range`` in ``_batches.pxi``) keeps the strict sums."""
    cdef Py_ssize_t cnt
    cdef double e
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t n1
    cdef Py_ssize_t z
    e = 0.0
    n = 0
    for k in range(Lc):
        z = pref[k] if top else pref[Lc - 1 - k]
        cnt = <Py_ssize_t>(K[z] + 0.5)
        n1 = min(n + cnt, n_len)
        if n1 > n:
            e += _rsum(W[z], n, n1)
        n += cnt
    return e


cdef void _preference(double[::1] W1, Py_ssize_t Lc, int64_t[::1] pref) noexcept nogil:
    """Categories by decreasing W1, ties by increasing index (numpy's stable argsort of -W1)."""
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cdef Py_ssize_t tmp
    cdef Py_ssize_t z
    for z in range(Lc):
        pref[z] = z
    for i in range(1, Lc):
        j = i
        while j > 0 and W1[pref[j - 1]] < W1[pref[j]]:
            tmp = pref[j - 1]
            pref[j - 1] = pref[j]
            pref[j] = tmp
            j -= 1


cdef void _extreme_list(double[:, ::1] Pf, Py_ssize_t J, Py_ssize_t n_len, double[::1] Kp, bint top) noexcept nogil:
    """Pf[:J+1, :n_len] = the deterministic list of slot-form counts Kp, highest category
    first (top) or lowest first."""
    cdef Py_ssize_t _
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef Py_ssize_t q
    for k in range(J + 1):
        for n in range(n_len):
            Pf[k, n] = 0.0
    n = 0
    for q in range(J + 1):
        k = J - q if top else q
        for _ in range(<Py_ssize_t>(Kp[k] + 0.5)):
            if n < n_len:
                Pf[k, n] = 1.0
            n += 1


cdef Py_ssize_t _populated(double[::1] Ki, int64_t[::1] pop, double[::1] Kp) noexcept nogil:
    """The populated categories of one problem (counts Ki (L,)): their indices into pop and
    counts into Kp, in order; returns their number (the slot form's Lc)."""
    cdef Py_ssize_t Lp
    cdef Py_ssize_t z
    Lp = 0
    for z in range(Ki.shape[0]):
        if Ki[z] > 0:
            pop[Lp] = z
            Kp[Lp] = Ki[z]
            Lp += 1
    return Lp
