# exp and log without libm calls, in loops the C compiler vectorises.

cdef inline (double, double) _exp_poly(double x) noexcept nogil:
    """(exp(r), k) with x = k ln2 + r, k = rint(x log2 e) (|r| <= ln2/2), exp(r) by its Taylor
    polynomial of degree 13 by Horner's rule (truncation < 1e-17): :func:`_fexp`'s core."""
    cdef double kd = (x * _LOG2E + _ROUND_MAGIC) - _ROUND_MAGIC
    cdef double r = x - kd * _LN2_HI - kd * _LN2_LO
    cdef double q = 1.0 / 6227020800.0
    q = q * r + 1.0 / 479001600.0
    q = q * r + 1.0 / 39916800.0
    q = q * r + 1.0 / 3628800.0
    q = q * r + 1.0 / 362880.0
    q = q * r + 1.0 / 40320.0
    q = q * r + 1.0 / 5040.0
    q = q * r + 1.0 / 720.0
    q = q * r + 1.0 / 120.0
    q = q * r + 1.0 / 24.0
    q = q * r + 1.0 / 6.0
    q = q * r + 0.5
    q = q * r + 1.0
    q = q * r + 1.0
    return q, kd


cdef inline double _fexp(double x) noexcept nogil:
    """exp(x) for -745 < x < 709 within 2 ulp (checked against numpy in the tests):
    :func:`_exp_poly`'s exp(r) times 2^k built from its bits as the product of two normal
    powers of two, 2^floor(k/2) 2^(k - floor(k/2)) (exact; one rounding where the result
    is subnormal). Only double and 64-bit integer additions, multiplications and shifts: no
    table, no libm call, no conversion instruction, so loops over it vectorise with SSE2."""
    cdef double q, kd
    q, kd = _exp_poly(x)
    # floor(k / 2) + magic (k / 2 - 1/4 is never a tie) and k - floor(k / 2) + magic, exactly
    cdef double k1 = kd * 0.5 - 0.25 + _ROUND_MAGIC
    cdef double k2 = (kd + _ROUND_MAGIC) - (k1 - _ROUND_MAGIC)
    cdef int64_t b1, b2
    memcpy(&b1, &k1, 8)
    memcpy(&b2, &k2, 8)
    b1 = (b1 - _ROUND_MAGIC_BITS + 1023) << 52
    b2 = (b2 - _ROUND_MAGIC_BITS + 1023) << 52
    cdef double p1, p2
    memcpy(&p1, &b1, 8)
    memcpy(&p2, &b2, 8)
    return q * p1 * p2


cdef inline double _fexp_normal(double x) noexcept nogil:
    """:func:`_fexp` for -700 <= x <= 700 (the softmax's exponents, clamped at -700): 2^k is
    then a normal number and so is the result, and 2^k in one product gives the same value
    as :func:`_fexp`'s two (each scaling by a power of two is exact there)."""
    cdef double q, kd
    q, kd = _exp_poly(x)
    cdef double kb = kd + _ROUND_MAGIC
    cdef int64_t b
    memcpy(&b, &kb, 8)
    b = (b - _ROUND_MAGIC_BITS + 1023) << 52
    cdef double p
    memcpy(&p, &b, 8)
    return q * p


cdef inline void _log_rows(const double* x, Py_ssize_t n_len, double* out) noexcept nogil:
    """out[n] = ln x[n] (n < n_len) for positive normal finite x, within 2 ulp (checked against
    numpy in the tests): x = 2^k m with k and m in [1, 2) taken from the bits (the exponent
    through the double 2^52 + e, exact), m halved into [sqrt(1/2), sqrt(2)),
    ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.172, by its odd series to s^21
    (truncation < 1e-17 relative), plus k ln 2 in two parts. Other x (0, subnormal, inf, NaN)
    give finite nonsense: the callers take log there."""
    cdef Py_ssize_t n
    cdef int64_t bits, mb, eb
    cdef double k, m, s, s2, q, xv
    cdef bint big
    for n in range(n_len):
        xv = x[n]
        memcpy(&bits, &xv, 8)
        mb = (bits & _MANT_BITS) | _ONE_BITS
        eb = ((bits >> 52) & 0x7FF) | _MAGIC_BITS
        memcpy(&m, &mb, 8)
        memcpy(&k, &eb, 8)
        k = k - _MAGIC_SUB
        big = m > _SQRT2
        m = 0.5 * m if big else m
        k = k + 1.0 if big else k
        s = (m - 1.0) / (m + 1.0)
        s2 = s * s
        q = 1.0 / 21.0
        q = q * s2 + 1.0 / 19.0
        q = q * s2 + 1.0 / 17.0
        q = q * s2 + 1.0 / 15.0
        q = q * s2 + 1.0 / 13.0
        q = q * s2 + 1.0 / 11.0
        q = q * s2 + 1.0 / 9.0
        q = q * s2 + 1.0 / 7.0
        q = q * s2 + 1.0 / 5.0
        q = q * s2 + 1.0 / 3.0
        out[n] = k * _LN2_HI + ((2.0 * s + 2.0 * s * s2 * q) + k * _LN2_LO)


def fexp_array(double[::1] x, bint normal=False):
    """:func:`_fexp` (or, ``normal``, :func:`_fexp_normal`) over an array (for the tests)."""
    out = np.empty(x.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(x.shape[0]):
        o[i] = _fexp_normal(x[i]) if normal else _fexp(x[i])
    return out


def log_array(x):
    """:func:`_log_rows` over an array (for the tests)."""
    cdef double[::1] xc = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty(xc.shape[0])
    cdef double[::1] o = out
    if xc.shape[0]:
        _log_rows(&xc[0], xc.shape[0], &o[0])
    return out
