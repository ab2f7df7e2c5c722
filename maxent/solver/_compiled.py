r"""Compiled (numba) kernels: the whole solve of each problem of a batch in compiled code.

Why compiled. The numpy solvers (:mod:`~maxent.solver.dual`,
:mod:`~maxent.solver.newton_kkt`) vectorise over problems, but every step is tens of
whole-array passes and Python-level bookkeeping: about 0.4 ms per nDCG problem at N = 1000
and 2-3 ms per single call, while the arithmetic of a graded problem is a few Newton steps
over a few thousand numbers. Here one compiled loop runs over the problems of a batch and,
per problem, the whole solve: classification against the attainable range, the iterations,
the certificate and the outputs, with O(N L) scratch (the prefix kernel's allocated once
per batch and reused, :func:`_prefix_workspace`).

Three kernels, the same mathematics as the numpy path (same starts, tolerances, certificates):

- :func:`linear_batch`: metrics linear in p (P@k, R-prec, recall, DCG/nDCG, RBP). E = <W, p>
  with constant W = dE/dp; damped Newton with Armijo backtracking on the convex dual of
  :mod:`maxent.solver.dual`, from the count-only distribution. ``optimal`` when the
  constraint residual (counts and |<W, p> - v|) is <= tol.
- :func:`prefix_batch`: metrics with a prefix-structured Hessian (AP, AP@k, AP(rel=t),
  GAP; ``metric.prefix_hessian``),

  .. math:: E = c_0 + \sum_r \kappa'_r \sum_n f_n Q'_{n,r}\Big(1 + \sum_{m<n} Q'_{m,r}\Big)

  in the reduced coordinates of :mod:`maxent.solver.newton_kkt` (Q'_r = P(category >= the
  r-th populated one)). Start as ``newton_kkt``: two steps of successive linearisation
  (:mod:`maxent.solver.linearize`; the first is the linear relaxation, the convex problem
  with W = dE/dp at the count-only distribution), each subproblem's dual solved inexactly
  (at most 3 damped Newton steps: the start only has to be near the KKT point; measured
  13-16 % less GAP/AP time than solving them to 1e-8, same KKT points). Then Newton on the KKT system, whose
  (block-)tridiagonal matrix T (``newton_kkt``'s change of variables) is solved by a Thomas
  recurrence (scalar for one slot, closed-form two-sided 2 x 2 blocks for two, Gauss-Jordan
  blocks beyond), O(N (L-1)^3) per step, no LAPACK call; log-space steps, Armijo on the
  squared KKT residual, whose log-odds leave out the probabilities on the floor (their
  exponents underflowed near an end of the range); a stalled or last iterate, and one
  stationary whose count residual alone is above tol (_EARLY_RES), is polished by one exact
  linearised subproblem. Certificate as in ``newton_kkt``, on every entry: count
  and metric residual <= tol and log-odds stationarity
  max |ln p_n(z)/p_n(ref) - (a_z + b (W_n(z) - W_n(ref)))| <= kkt_tol, W = dE/dp(p) at the
  returned p (or the polish's linearised certificate). A problem Newton does not certify gets
  a second start (the numpy engine's exact one; near an end of the range, linearisation to
  stationarity _NEAR_SWITCH), then the second run of :func:`maxent.solver.solve` here too:
  successive linearisation from the count-only distribution with 10 x ``max_iter`` steps
  (code 3).

- :func:`cascade_batch`: cascade metrics (RR, ERR; ``metric.cascade_form``),
  E = sum_n c_n r_n prod_{m<n} (1 - r_m) with r_n = sum_z s_z p_n(z): successive
  linearisation as :mod:`maxent.solver.linearize` (the same subproblems, elastic targets,
  merit line search, damping and certificate), dE/dr by a division-free suffix recursion,
  until the stationarity is <= ``switch`` (1), then Newton-KKT in (a, y = b dE/dr, b),
  whose semi-separable Hessian makes each step an O(N) pentadiagonal solve
  (:func:`_cascade_newton`).

A problem the kernels do not certify, or that is not strictly inside the attainable range
(boundary, infeasible, undefined, degenerate range), is reported back with code != 0 and
solved by the numpy path (:func:`maxent.solver._solve_chunk`), which owns every other
status and the fallbacks. This module imports numba at import time: import it lazily
(:func:`maxent.solver._use_numba`).
"""
from __future__ import annotations

import numpy as np
from numba import njit as _numba_njit


def njit(*args, **kwargs):
    """numba's njit with numpy's error model: a float division by 0 gives inf or NaN (which
    every certificate rejects) instead of raising ZeroDivisionError. numba's default (the
    Python model) guards each division by a test and a raise, so no loop that divides is
    vectorised: numpy's model measured nDCG's batch 8-10 % and ERR's 5 % faster, and it is what
    lets :func:`_log_rows` vectorise at all (2 us per 3000 logarithms instead of 16).

    And ``fastmath={"contract"}`` by default: a * b + c may be one fused multiply-add (one
    rounding instead of two; no other relaxation of IEEE semantics, so the compensated sums
    stay exact; the reassociated sums below take both). Measured in one process against the
    same kernels without it: GAP -6 %, ERR -9 %, nDCG -3.5 % (the 2 x 2 Thomas 19.1 -> 16.6
    us); the benchmark's statuses and iteration counts unchanged, entropies within 3e-13
    relative (ERR near its maximum: 4e-9, |b| times the residual tolerance).

    ``noalloc=True``: a kernel that allocates no array, calls none that does and returns no
    array (scalars and tuples of them only) is compiled without numba's reference counting
    (its ``_nrt=False``). numba otherwise increments the count of every array argument on
    entry and decrements it on exit, two atomic operations per array per call that its pruning
    pass leaves wherever the kernel calls another: ~2500 per GAP problem. Measured in one
    process against the same kernels with them: GAP -2 %, ERR -2.7 %, nDCG unchanged (its
    calls are few). The arrays are the caller's, alive for the whole call. numba compiles a
    callee with its caller's flags, so an allocation reachable from such a kernel fails to
    compile; ``tests/test_compiled.py`` checks that none returns an array."""
    if kwargs.pop("noalloc", False):
        kwargs["_nrt"] = False
    kwargs.setdefault("error_model", "numpy")
    kwargs.setdefault("fastmath", {"contract"})
    return _numba_njit(*args, **kwargs)

_RTOL = 1e-11          # = maxent.solver._problem.BOUNDARY_RTOL
_ARMIJO = 1e-4
_EPS64 = 64.0 * np.finfo(np.float64).eps
_EPS = np.finfo(np.float64).eps
_W_ULPS = 16.0      # = maxent.solver.linearize._W_ULPS (rounding allowance of dE/dp in the certificate)
_MIN_STEP = 1.0 / 64   # = maxent.solver.linearize._MIN_STEP (first trial step of a damped problem)
_ROUNDING_STEPS = 8    # linearisation steps a run stationary only to rounding may take to certify
_P_FLOOR = 1e-250
_AT_FLOOR = 2.0 * _P_FLOOR   # a probability below this sits on the floor: its exponential-family
# value underflowed (near an end of the range, |b| ~ 1e4-1e5, exponents reach -3000), so its
# log-odds say nothing about stationarity (_kkt_residual's ``masked``)
_PINV_MAX = 1e12
_MAX_EXP = 300.0     # cap of a Newton-KKT log-space step per probability (30 before: near-boundary
# problems, |b| ~ 1e4, want moves of hundreds; the cap bent their directions into 1.28 line-search
# trials per step and 8.6 steps before stalling; now 1.08 and 3.0, GAP -8 %)
_ELASTIC = 0.99
_START_TOL = 1e-8
_COLD_RES = 10.0    # = maxent.solver.linearize._COLD_RES (a failed subproblem, not an inexact one)
_COLD_ITER = 200    # = maxent.solver.linearize._COLD_ITER
_START_STEPS = 2
_START_ITER = 3     # dual Newton steps per start subproblem: an inexact start, Newton-KKT converges from it
# (4 steps took the mean iterations on bench_solver's GAP lists 5.90 -> 5.81, its kernel -2 to -3 %,
# but moved two TREC-COVID AP lists near their minimum, non-convex there, to other KKT points:
# savantx_nist_run_2/20 from entropy 1.651 to 1.430, lower, and lda400s2000/5 from 2.746 to 2.928)
_COARSE = 16        # the inexact start's subproblems are solved over blocks of ranks (:func:`_rank_blocks`):
# the block starting at rank a (from 0) is max(1, a // _COARSE) long, so ranks 1..2 _COARSE
# are alone (93 columns at N = 1000), each with its ranks' mean features; p at every rank from
# the multipliers found.
# On bench_solver's 5000 GAP lists: the same statuses and Newton steps (mean iterations 5.90
# both ways; also at 4, 8 and 32), the kernel 16-20 % faster (one-process A/B)
_COARSE_STEPS = 2   # the subproblems of a run that takes blocks: the prefix start's two, the first two of
# cascade_batch's run (its later ones are solved to 1e-4 near the switch to Newton-KKT: blocks
# for them too doubled ERR's iterations on bench_solver's lists, mean 5.9 -> 11.3)
_FAR_TOL = 1e-8     # = maxent.solver.linearize's far_tol (the second run)
_CASCADE_FAR_TOL = 1e-4   # cascade_batch's linearisation before Newton-KKT: its subproblems
# only lead to Newton's start (~1 dual step fewer each; the same steps and Newton outcomes)
_LS_STEPS = 8
_INNER_ITER = 40
_EXP_MIN = -300.0   # exp(d) below this is taken as 0: products of two such p stay normal floats
# (subnormal arithmetic is ~100x slower; p < 5e-131 changes no residual, entropy or count)
_POLISH_ITER = 20
_EARLY_RES = 1e-6   # a Newton-KKT iterate stationary to kkt_tol whose residual is in (tol, this]
# is polished (one exact linearised subproblem) before another Newton step: the log-space step
# leaves the counts a second-order residual (~N |step|^2: 1e-9..1e-7 with stationarity 1e-11
# after the third step, for a third of trec_covid_r1's GAP lists); the polish certifies 11 of
# 12 such iterates (the last step's 3.4 -> 3.2 Thomas solves per problem, GAP kernel ~-1.5 %)
_NEAR = 0.01        # a target within this fraction of the range's width from an end is "near" it
_NEAR_NEWTON = 10   # Newton-KKT steps a near problem gets from each start (certified ones: <= 19
# steps, 95 % within 8; the others creep with steps of 1/16-1/64 towards a b 40x the start's)
_NEAR_SWITCH = 1e-3  # a near problem's second start: successive linearisation until its
# stationarity is <= this (then Newton-KKT). trec_covid_r1 GAP, the 39 of 5000 Newton left from the
# inexact start: 36 certified from here (1e-2: 31, and entropies 2.5e-5 lower: another KKT point)


# ----------------------------------------------------------------------------- exp
_POW2 = np.array([2.0 ** k for k in range(-1074, 1024)])   # 2^k, k = -1074..1023
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_EXP_TAYLOR = (1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
               1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
               1.0 / 6.0, 0.5, 1.0, 1.0)            # 1/13! .. 1/0!: exp's Taylor series, highest first
_ATANH_ODD = (1.0 / 21.0, 1.0 / 19.0, 1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0,
              1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0)       # atanh(s) / s - 1 = sum_k s^2k / (2k + 1), in s^2


@njit(cache=True, noalloc=True)
def _horner(coef, x):
    """sum_i coef[i] x^(len - 1 - i) by Horner's rule (coef: a tuple, highest power first;
    a constant trip count, unrolled where it is inlined), each step one fused multiply-add
    (:func:`njit`'s ``contract``: 3000 exps 4.5 -> 3.0 us)."""
    q = coef[0]
    for i in range(1, len(coef)):
        q = q * x + coef[i]
    return q


@njit(cache=True, noalloc=True)
def _fexp(x):
    """exp(x) for -745 < x < 709 within 2 ulp (checked against numpy in the tests), written
    without calls so that LLVM vectorises the loops that use it (numba's np.exp is a scalar
    libm call, ~3x slower): x = k ln2 + r, |r| <= ln2/2, exp(r) by its Taylor polynomial of
    degree 13 (truncation < 1e-17), times 2^k from a table."""
    k = np.floor(x * _LOG2E + 0.5)
    r = x - k * _LN2_HI - k * _LN2_LO
    return _horner(_EXP_TAYLOR, r) * _POW2[int(k) + 1074]


@njit(cache=True)
def fexp_array(x):
    """:func:`_fexp` over an array (for the tests)."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _fexp(x[i])
    return out


_MANT_BITS = np.int64((1 << 52) - 1)
_ONE_BITS = np.int64(1023 << 52)
_MAGIC_BITS = np.int64(0x4330000000000000)    # 2^52 as a double; | e gives 2^52 + e exactly
_MAGIC_SUB = 4503599627370496.0 + 1023.0
_SQRT2 = 1.4142135623730951
_MIN_NORMAL = np.finfo(np.float64).tiny
_MAX_FINITE = np.finfo(np.float64).max


@njit(cache=True, noalloc=True)
def _log_rows(x, n_len, out, Mi):
    """out[n] = ln x[n] (n < n_len) for positive normal finite x, within 2 ulp (checked against
    numpy in the tests), in loops that LLVM vectorises (numba's np.log is a scalar libm call,
    ~4x slower): x = 2^k m with k and m in [1, 2) taken from the bits (int64 views; the
    exponent through the double 2^52 + e, as AVX2 has no int64 -> double conversion), m halved
    into [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.172, by
    its odd series to s^21 (truncation < 1e-17 relative), plus k ln 2 in two parts. Other x
    (0, subnormal, inf, NaN) give finite nonsense: the callers take np.log there.
    out (>= n_len, float64) and Mi (>= n_len, int64): out also holds the exponents on the way."""
    xi = x.view(np.int64)
    Ei = out.view(np.int64)
    Mf = Mi.view(np.float64)
    for n in range(n_len):
        bits = xi[n]
        Mi[n] = (bits & _MANT_BITS) | _ONE_BITS
        Ei[n] = ((bits >> 52) & 0x7FF) | _MAGIC_BITS
    for n in range(n_len):
        k = out[n] - _MAGIC_SUB
        m = Mf[n]
        big = m > _SQRT2
        m = 0.5 * m if big else m
        k = k + 1.0 if big else k
        s = (m - 1.0) / (m + 1.0)
        s2 = s * s
        q = _horner(_ATANH_ODD, s2)
        out[n] = k * _LN2_HI + ((2.0 * s + 2.0 * s * s2 * q) + k * _LN2_LO)


@njit(cache=True)
def log_array(x):
    """:func:`_log_rows` over an array (for the tests)."""
    out = np.empty_like(x)
    _log_rows(np.ascontiguousarray(x), x.shape[0], out, np.empty(x.shape[0], dtype=np.int64))
    return out


# ----------------------------------------------------------------------------- small algebra
@njit(cache=True, noalloc=True)
def _nsum(s, c, x):
    """One step of Neumaier's compensated summation: returns (s + x, new compensation);
    the sum is s + c. (Naive sums over 1000 ranks lose ~1e-11 on counts of ~1000, above the
    1e-10 certificate's margin; numpy's pairwise sums do not.)"""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


@njit(cache=True, noalloc=True)
def _pivot_row(A, k, n):
    """Partial pivoting: the row i >= k of largest |A[i, k]| (first on ties) is swapped into
    row k of A[:n,:n]; returns it (the caller swaps its right-hand side the same way), or -1
    when that pivot is 0 or not finite."""
    piv = k
    best = abs(A[k, k])
    for i in range(k + 1, n):
        if abs(A[i, k]) > best:
            best = abs(A[i, k])
            piv = i
    if not (best > 0.0) or not np.isfinite(best):
        return -1
    if piv != k:
        for j in range(n):
            tmp = A[k, j]
            A[k, j] = A[piv, j]
            A[piv, j] = tmp
    return piv


@njit(cache=True, noalloc=True)
def _solve_small(A, x, n):
    """Solve A[:n,:n] y = x[:n] in place (Gaussian elimination, partial pivoting); A is
    overwritten. Returns False when a pivot is 0 or not finite."""
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
        if not np.isfinite(x[k]):
            return False
    return True


@njit(cache=True, noalloc=True)
def _invert_small(A, out, n):
    """out[:n,:n] = inverse of A[:n,:n] (Gauss-Jordan, partial pivoting); A is overwritten.
    Returns False when singular or not finite."""
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


# ----------------------------------------------------------------------------- convex dual
# Sums that only steer the iterations (Hessian entries, the dual's value for the line
# search, the Newton-KKT merit) are taken with reassociation allowed (fastmath "reassoc":
# LLVM vectorises them, several partial sums); the dual gradient, whose size decides
# convergence, and the certificates' sums over ranks use blocks of _BLOCK such terms joined
# by compensated summation (:func:`_nsum`): error <= _BLOCK eps sum|x| (7e-12 for counts of
# 1000 in the worst case, ~1e-14 typically), below the dual tolerance 64 eps (sum K + |v| + 1)
# and the certificate's 1e-10.
_BLOCK = 64


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rsum_cx(c, x, n0, n1):
    """sum_{n0 <= n < n1} c_n x_n (reassociated). Over views indexed from 0: a loop over
    range(n0, n1) stays scalar wherever n0 is not a constant (numba's wraparound of a possibly
    negative index blocks LLVM's vectoriser; _csum's blocks of 64 took 0.6 us per 1000 terms,
    0.1 us this way), and so do the other reassociated sums below."""
    cs = c[n0:n1]
    xs = x[n0:n1]
    s = 0.0
    for n in range(n1 - n0):
        s += cs[n] * xs[n]
    return s


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rsum_cxy(c, x, y, n0, n1):
    """sum_{n0 <= n < n1} c_n x_n y_n (reassociated, over views: :func:`_rsum_cx`)."""
    cs = c[n0:n1]
    xs = x[n0:n1]
    ys = y[n0:n1]
    s = 0.0
    for n in range(n1 - n0):
        s += cs[n] * xs[n] * ys[n]
    return s


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rsum_dev(c, p, w, wbar, n_len):
    """(sum_n c_n p_n (w_n - wbar_n), sum_n c_n p_n (w_n - wbar_n)^2) (reassociated)."""
    h1 = 0.0
    h2 = 0.0
    for n in range(n_len):
        pd = c[n] * p[n] * (w[n] - wbar[n])
        h1 += pd
        h2 += pd * (w[n] - wbar[n])
    return h1, h2


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rsum_cabs(c, x, n_len):
    """sum_{n < n_len} c_n |x_n| (reassociated)."""
    s = 0.0
    for n in range(n_len):
        s += c[n] * abs(x[n])
    return s


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rprod(x, c, n0, n1):
    """prod_{n0 <= n < n1} x_n over the columns of weight c_n = 1 (reassociated, over views:
    :func:`_rsum_cx`)."""
    xs = x[n0:n1]
    cs = c[n0:n1]
    q = 1.0
    for n in range(n1 - n0):
        q *= xs[n] if cs[n] == 1.0 else 1.0
    return q


@njit(cache=True, noalloc=True)
def _csum(c, x, n_len):
    """sum_n c_n x_n: blocks of _BLOCK terms (reassociated), compensated across blocks.
    (_csum1 and _csum2, the same for one and three factors, are separate kernels: one
    generic version would need numba first-class functions.)"""
    s = 0.0
    sc = 0.0
    for n0 in range(0, n_len, _BLOCK):
        s, sc = _nsum(s, sc, _rsum_cx(c, x, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


@njit(cache=True, noalloc=True)
def _csum2(c, x, y, n_len):
    """sum_n c_n x_n y_n: blocks of _BLOCK terms (reassociated), compensated across blocks."""
    s = 0.0
    sc = 0.0
    for n0 in range(0, n_len, _BLOCK):
        s, sc = _nsum(s, sc, _rsum_cxy(c, x, y, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _rsum(x, n0, n1):
    """sum_{n0 <= n < n1} x_n (reassociated, over a view: :func:`_rsum_cx`)."""
    xs = x[n0:n1]
    s = 0.0
    for n in range(n1 - n0):
        s += xs[n]
    return s


@njit(cache=True, noalloc=True)
def _csum1(x, n_len):
    """sum_n x_n: blocks of _BLOCK terms (reassociated), compensated across blocks."""
    s = 0.0
    sc = 0.0
    for n0 in range(0, n_len, _BLOCK):
        s, sc = _nsum(s, sc, _rsum(x, n0, min(n0 + _BLOCK, n_len)))
    return s + sc


@njit(cache=True, noalloc=True)
def _absmax_of(x, y, n_len, diff):
    """max_n |x_n - y_n| (diff) or max_n |x_n| (four independent running maxima; NaN ignored
    as by ``if |x| > m``)."""
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


@njit(cache=True, noalloc=True)
def _absmax(x, n_len):
    """max_n |x_n| (:func:`_absmax_of`)."""
    return _absmax_of(x, x, n_len, False)


@njit(cache=True, noalloc=True)
def _absmax_diff(x, y, n_len):
    """(max_n |x_n - y_n|, max_n |x_n|) (:func:`_absmax_of`)."""
    return _absmax_of(x, y, n_len, True), _absmax_of(x, x, n_len, False)


@njit(cache=True, noalloc=True)
def _minmax(x, n_len):
    """(min_n x_n, max_n x_n) in four independent chains each (n_len >= 1)."""
    lo0 = lo1 = lo2 = lo3 = np.inf
    hi0 = hi1 = hi2 = hi3 = -np.inf
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


@njit(cache=True, noalloc=True)
def _scan4(x, y, n_len, out, prod):
    """out[n] = sum_{m < n} t_m, t = x y (prod) or x: four segments scanned in one loop (four
    independent add chains instead of one of n_len latencies), then each shifted by the sums
    before it. Over views indexed from 0 (the segments; a reversed view for a suffix): with
    offsets like M + j or last - j numba's wraparound of a possibly negative index cost a
    compare and select per access (in-place suffix 1.08 -> 0.63 us, prefix 0.50 -> 0.39 us
    at N = 1000). out may be y (each y_n is read before out[n] is written)."""
    if n_len < 16:
        s = 0.0
        for n in range(n_len):
            t = x[n] * y[n] if prod else x[n]
            out[n] = s
            s += t
        return
    M = (n_len + 3) // 4
    M3 = n_len - 3 * M          # the last segment's length (1 <= M3 <= M for n_len >= 16)
    x0 = x[0:M]
    x1 = x[M:2 * M]
    x2 = x[2 * M:3 * M]
    x3 = x[3 * M:n_len]
    y0 = y[0:M]
    y1 = y[M:2 * M]
    y2 = y[2 * M:3 * M]
    y3 = y[3 * M:n_len]
    o0 = out[0:M]
    o1 = out[M:2 * M]
    o2 = out[2 * M:3 * M]
    o3 = out[3 * M:n_len]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(M):
        t0 = x0[j] * y0[j] if prod else x0[j]
        t1 = x1[j] * y1[j] if prod else x1[j]
        t2 = x2[j] * y2[j] if prod else x2[j]
        o0[j] = s0
        o1[j] = s1
        o2[j] = s2
        s0 += t0
        s1 += t1
        s2 += t2
        if j < M3:                      # the last segment is the shortest
            t3 = x3[j] * y3[j] if prod else x3[j]
            o3[j] = s3
            s3 += t3
    h1 = s0
    h2 = h1 + s1
    h3 = h2 + s2
    for j in range(M):
        o1[j] += h1
        o2[j] += h2
    for j in range(M3):
        o3[j] += h3


@njit(cache=True, noalloc=True)
def _prefix_excl(x, n_len, out):
    """out[n] = sum_{m < n} x_m (:func:`_scan4`)."""
    _scan4(x, x, n_len, out, False)


@njit(cache=True, noalloc=True)
def _suffix_excl_xy(x, y, n_len, out):
    """out[n] = sum_{m > n} x_m y_m (out may be y): :func:`_scan4` over the reversed views."""
    _scan4(x[:n_len][::-1], y[:n_len][::-1], n_len, out[:n_len][::-1], True)


@njit(cache=True, noalloc=True)
def _sum_log(Z, c, n_len, blk):
    """sum_n c_n ln Z_n: the logarithm of products over blocks of ``blk`` ranks (whose
    product cannot overflow or underflow: one log per block instead of one per rank);
    columns with c_n != 1, c_n ln Z_n."""
    lz = 0.0
    for n0 in range(0, n_len, blk):
        lz += np.log(_rprod(Z, c, n0, min(n0 + blk, n_len)))
    for n in range(n_len):
        if c[n] != 1.0:
            lz += c[n] * np.log(Z[n])
    return lz


_POW_RANGE = 300.0   # the power path of _softmax when all exponents lie within this of the largest
_POW_MAX = 16        # largest integer feature multiple m_z it takes


@njit(cache=True, noalloc=True)
def _power_structure(W, Lc, n_len, pw):
    """Whether the feature rows are integer multiples of one row, W[z, n] = m_z w_n (DCG and
    nDCG: gains 0, 1, 3 = 2^z - 1; binary linear metrics: 0, 1), within 1e-14 relative (the
    metric's own rounding of m_z w_n). Fills pw (Lc + 3): [m_0 .. m_{Lc-1}, base row zb
    (m_zb = 1; -1: no such structure), min_n w_n, max_n w_n]."""
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
        m = np.floor(ratio + 0.5)
        if not (abs(ratio - m) <= 1e-12 and 0.0 <= m <= _POW_MAX):
            return
        pw[z] = m
    wmin = np.inf
    wmax = -np.inf
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


@njit(cache=True, noalloc=True)
def _power_products(S, U, Z, P, theta, ok, mult, Lc, n_len, b, wmid, xmax):
    """The products of the power path (:func:`_softmax_power`, :func:`_cascade_softmax`):
    from u_n in S, P[z, n] = A_z u_n^{m_z} by repeated products (U: scratch, u_n^k, given
    as 1), A_z = exp(a_z + m_z b w_mid - xmax), m_z = int(mult[z]), over the allowed
    categories (0 elsewhere), and their sums over z added into Z (given as 0): unnormalised.
    The callers set S, U and Z in one pass (in a pass of their own here, nDCG's kernel was
    3-5 % slower)."""
    mmax = 0
    for z in range(Lc):
        if ok[z]:
            mmax = max(mmax, int(mult[z]))
        else:
            for n in range(n_len):
                P[z, n] = 0.0
    for k in range(mmax + 1):
        if k > 0:
            for n in range(n_len):
                U[n] *= S[n]
        for z in range(Lc):
            if ok[z] and int(mult[z]) == k:
                A = np.exp(theta[z] + k * b * wmid - xmax)
                for n in range(n_len):
                    e = A * U[n]
                    P[z, n] = e
                    Z[n] += e


@njit(cache=True)
def _softmax_power(W, c, Lc, n_len, ok, theta, P, S, Z, pw, xmax, xr):
    """:func:`_softmax` when W[z, n] = m_z w_n (:func:`_power_structure`) and every exponent
    x_zn = a_z + b m_z w_n lies in [xmax - xr, xmax], xr <= _POW_RANGE: one exp per rank,
    u_n = exp(b (w_n - w_mid)), and p_n(z) ~ A_z u_n^{m_z} by repeated products, A_z =
    exp(a_z + m_z b w_mid - xmax) (each factor within e^{+-300}: no overflow, no subnormal).
    sum_n c_n ln Z_n from products over blocks of ranks short enough for Z_n in [e^-xr, Lc]."""
    b = theta[Lc]
    zb = int(pw[Lc])
    wmid = 0.5 * (pw[Lc + 1] + pw[Lc + 2])
    U = np.empty(n_len)
    for n in range(n_len):
        S[n] = _fexp(b * (W[zb, n] - wmid))
        U[n] = 1.0
        Z[n] = 0.0
    _power_products(S, U, Z, P, theta, ok, pw, Lc, n_len, b, wmid, xmax)
    nok = 0
    for z in range(Lc):
        if ok[z]:
            nok += 1
    span = max(xr, np.log(max(nok, 2)), 1.0)
    blk = max(1, int(600.0 / span))
    if blk < 32:
        # short blocks (|b| large: ERR's subproblems, 2.5 calls per problem with blocks of
        # 1-9 ranks): a vectorised logarithm per rank (:func:`_log_rows`, 0.7 us per 1000)
        # instead of a libm log per block (Z_n in [e^-xr, Lc]: positive normal numbers)
        _log_rows(Z, n_len, S, U.view(np.int64))
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
    return cs * xmax + lz, cs * (abs(xmax) + span)


@njit(cache=True)
def _softmax(W, c, Lc, n_len, ok, theta, P, S, Z, pw):
    """P[z, n] = softmax_z(a_z + b W[z, n]) over the allowed categories (0 elsewhere), in
    whole-row passes that LLVM vectorises; returns (sum_n c_n lse_n, an upper bound of
    sum_n c_n |lse_n|: the scale of its rounding) (c_n: the number of ranks that column n
    stands for). lse_n = S_n + ln Z_n with S_n the row maximum and Z_n in [1, Lc], so
    sum_n ln Z_n is taken as the logarithm of products over blocks that cannot overflow
    (one log per block instead of one per rank; columns with c_n != 1: c_n ln Z_n).
    S, Z: (>= n_len) scratch (row maxima, then 1/partition)."""
    b = theta[Lc]
    if b == 0.0:
        # the count-only start: the same softmax of the a_z at every rank, no exps per rank
        mx = -np.inf
        for z in range(Lc):
            if ok[z]:
                mx = max(mx, theta[z])
        zs = 0.0
        for z in range(Lc):
            if ok[z]:
                zs += np.exp(theta[z] - mx)
        lse = mx + np.log(zs)
        for z in range(Lc):
            pz = np.exp(theta[z] - lse) if ok[z] else 0.0
            for n in range(n_len):
                P[z, n] = pz
        cs = _rsum(c, 0, n_len)
        return cs * lse, cs * abs(lse)
    if pw[Lc] >= 0.0:
        # features m_z w_n: the exponents' range from w's two ends
        xmax = -np.inf
        xmin = np.inf
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
        # that write (a strict sum there keeps a loop scalar): GAP kernel -5 % (A/B)
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
            e0 = _fexp(max(d0, -700.0))
            e1 = _fexp(max(d1, -700.0))
            e2 = _fexp(max(d2, -700.0))
            e0 = e0 if d0 >= _EXP_MIN else 0.0
            e1 = e1 if d1 >= _EXP_MIN else 0.0
            e2 = e2 if d2 >= _EXP_MIN else 0.0
            zn = e0 + e1 + e2
            S[n] = sn
            Z[n] = zn
            P0[n] = e0
            P1[n] = e1
            P2[n] = e2
        lz = _sum_log(Z, c, n_len, max(1, int(600.0 / np.log(3.0))))
        slse = _rsum_cx(c, S, 0, n_len) + lz
        for n in range(n_len):
            iz = 1.0 / Z[n]
            P0[n] *= iz
            P1[n] *= iz
            P2[n] *= iz
        return slse, lz + _rsum_cabs(c, S, n_len)
    for n in range(n_len):
        S[n] = -np.inf
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
                e = _fexp(max(d, -700.0))
                e = e if d >= _EXP_MIN else 0.0
                P[z, n] = e
                Z[n] += e
        else:
            for n in range(n_len):
                P[z, n] = 0.0
    lz = _sum_log(Z, c, n_len, max(1, int(600.0 / np.log(max(nok, 2)))))     # nok^blk <= e^600
    slse = _rsum_cx(c, S, 0, n_len) + lz
    alse = lz + _rsum_cabs(c, S, n_len)
    for n in range(n_len):          # no reduction in this loop: it vectorises
        Z[n] = 1.0 / Z[n]
    for z in range(Lc):
        if ok[z]:
            for n in range(n_len):
                P[z, n] *= Z[n]
    return slse, alse


@njit(cache=True)
def _dual_state(W, c, Lc, n_len, ok, K, theta, v, P, wbar, g, S, Z, pw):
    """p = softmax(a + b W) into P (Lc, >= n_len), the mean feature per rank into wbar and
    the gradient g (Lc+1) of the dual; returns (D, rounding scale of D, entropy of P
    computed without logarithms). Whole-row passes (softmax, then sums per category);
    column n counts c_n times. The Hessian: :func:`_dual_hessian`, only where a step needs it."""
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


@njit(cache=True, noalloc=True)
def _dual_hessian(W, c, Lc, n_len, ok, P, wbar, H):
    """Hessian H (Lc+1, Lc+1) of the dual at the p (P) and mean features (wbar) of
    :func:`_dual_state`: H_zy = sum_n c_n (p_z [z = y] - p_z p_y), H_zb = sum_n c_n p_z
    (W_z - wbar), H_bb = sum_n c_n sum_z p_z (W_z - wbar)^2 (reassociated sums). The
    reference category's row and column stay 0: _dual_solve replaces them (a_ref = 0)."""
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


@njit(cache=True)
def _dual_solve(W, c, Lc, n_len, ok, K, v, theta, P, tol, max_iter, rel_ridge, pw, alt, D_alt):
    """Damped Newton on the dual (as :func:`maxent.solver.dual.newton_dual`, one problem):
    full step first, Armijo backtracking on D; every trial point's state (p, gradient) is
    computed once and kept when accepted, the Hessian only before a step.

    theta (Lc+1) is the start and is overwritten by the result; P (Lc, >= n_len) gets p.
    ``alt`` (Lc+1), ``D_alt``: another start and its dual value (np.inf: none), taken instead
    when the dual value at theta is above it (:func:`_linearize_run`'s second subproblem: the
    count-only multipliers, whose value has a closed form; the comparison uses the first
    state, which a separate evaluation of D at theta cost again: one softmax per GAP problem).
    Returns (nit, residual max|g|, entropy); a line search that finds no decrease ends it."""
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
    Pa = np.empty((Lc, N))
    Pb = np.empty((Lc, N))
    wa = np.empty(N)
    wb = np.empty(N)
    g = np.empty(Lc + 1)
    g2 = np.empty(Lc + 1)
    H = np.empty((Lc + 1, Lc + 1))
    trial = np.empty(Lc + 1)
    step = np.empty(Lc + 1)
    A = np.empty((Lc + 1, Lc + 1))
    S = np.empty(N)
    Z = np.empty(N)
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
            if np.isfinite(Dt) and Dt <= D + _ARMIJO * t * slope + slack:
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


# ----------------------------------------------------------------------------- linear metrics
@njit(cache=True, noalloc=True)
def _extreme_value(W, Lc, n_len, K, pref, top):
    """<W, p> of the deterministic list that fills the categories in preference order
    (``pref``: categories by decreasing preference; reversed when not top)."""
    e = 0.0
    n = 0
    for k in range(Lc):
        z = pref[k] if top else pref[Lc - 1 - k]
        cnt = int(K[z] + 0.5)
        for _ in range(cnt):
            if n < n_len:
                e += W[z, n]
            n += 1
    return e


@njit(cache=True, noalloc=True)
def _rank_blocks(n_len, ratio, bnd):
    """Blocks of consecutive ranks for a coarse subproblem: the block starting at rank a (from
    0) runs to a + max(1, a // ratio) (exclusive; ranks below 2 ratio alone), so that
    features varying like 1/rank or log(rank) vary by ~1/ratio of their level within a block.
    bnd (>= n_len + 1) gets the boundaries; returns the number of blocks M (bnd[M] = n_len)."""
    M = 0
    a = 0
    while a < n_len:
        bnd[M] = a
        M += 1
        a = min(n_len, a + max(1, a // ratio))
    bnd[M] = n_len
    return M


@njit(cache=True, noalloc=True)
def _block_means(W, Lc, bnd, M, cc, Wc):
    """Wc[z, j] = mean of W[z, n] over block j of ``bnd``, cc[j] its number of ranks (the
    column weight of a coarse subproblem: :func:`_softmax`'s c_n)."""
    for j in range(M):
        cc[j] = bnd[j + 1] - bnd[j]
    for z in range(Lc):
        for j in range(M):
            acc = 0.0
            for n in range(bnd[j], bnd[j + 1]):
                acc += W[z, n]
            Wc[z, j] = acc / cc[j]


@njit(cache=True, noalloc=True)
def _extreme_steer(W, Lc, n_len, K, pref, top):
    """:func:`_extreme_value` with each category's run of ranks summed reassociated
    (:func:`_rsum`; it vectorises): for :func:`_linearize_run`, where the range only moves a
    subproblem's target into it (0.5 us per call at N = 1000 with the strict sum of the N
    ranks, 0.06 us so; four to seven calls per problem of GAP or ERR). The classification of a target (the ends of the
    range, ``_classify``) keeps the strict sums."""
    e = 0.0
    n = 0
    for k in range(Lc):
        z = pref[k] if top else pref[Lc - 1 - k]
        cnt = int(K[z] + 0.5)
        n1 = min(n + cnt, n_len)
        if n1 > n:
            e += _rsum(W[z], n, n1)
        n += cnt
    return e


@njit(cache=True, noalloc=True)
def _preference(W1, Lc, pref):
    """Categories by decreasing W1, ties by increasing index (numpy's stable argsort of -W1)."""
    for z in range(Lc):
        pref[z] = z
    for i in range(1, Lc):
        j = i
        while j > 0 and W1[pref[j - 1]] < W1[pref[j]]:
            tmp = pref[j - 1]
            pref[j - 1] = pref[j]
            pref[j] = tmp
            j -= 1


@njit(cache=True, noalloc=True)
def _classify(e_top, e_bot, v, undefined):
    """True when v is strictly inside the attainable range (the numpy classification of
    :func:`maxent.solver._solve_chunk`: not undefined, not at/beyond an end)."""
    hi = max(e_top, e_bot)
    lo = min(e_top, e_bot)
    if undefined:
        return False
    at_hi = abs(v - hi) <= _RTOL * max(1.0, abs(hi))
    at_lo = abs(v - lo) <= _RTOL * max(1.0, abs(lo))
    if at_hi or at_lo or v > hi or v < lo:
        return False
    return True


@njit(cache=True, nogil=True)
def linear_batch(WT, v, K, lengths, undefined, tol, max_iter, P_out, col0, theta_out,
                 code, nit_out, resid_out, ent_out, att_out):
    """Solve every problem of a batch of a metric linear in p (E = <W, p>).

    WT (B, L, N) constant features dE/dp (0 beyond lengths), v (B,), K (B, L) counts,
    lengths (B,), undefined (B,) bool. Writes, for each problem with code 0 (interior and
    certified): P_out[b, n, z - col0] = p_n(z) for z >= col0 (binary: col0 = 1, graded 0),
    theta_out[b] = [a_0..a_{L-1}, b] (a_ref = 0), nit, residual, entropy and E = <W, p>.
    code: 0 optimal, 1 not interior (left to the numpy path), 2 not certified.
    """
    B, L, N = WT.shape
    ok = np.empty(L, dtype=np.bool_)
    pref = np.empty(L, dtype=np.int64)
    W1 = np.empty(L)
    Pc = np.empty((L, N))
    Wc = np.empty((L, N))
    cnt = np.empty(N)
    run = np.empty(N, dtype=np.int64)
    th = np.empty(L + 1)
    pw = np.empty(L + 3)
    for i in range(B):
        W = WT[i]
        n_len = lengths[i]
        for z in range(L):
            ok[z] = K[i, z] > 0
            W1[z] = W[z, 0] if n_len > 0 else 0.0
        _preference(W1, L, pref)
        e_top = _extreme_value(W, L, n_len, K[i], pref, True)
        e_bot = _extreme_value(W, L, n_len, K[i], pref, False)
        if not _classify(e_top, e_bot, v[i], undefined[i]):
            code[i] = 1
            continue
        # count-only start: a_z = log(K_z / K_ref), b = 0
        ref = 0
        while not ok[ref]:
            ref += 1
        for z in range(L):
            th[z] = np.log(K[i, z] / K[i, ref]) if ok[z] else 0.0
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
        it, _, ent = _dual_solve(Wc, cnt, L, R, ok, K[i], v[i], th, Pc, 0.01 * tol,
                                          max_iter, True, pw, th, np.inf)
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
        if not (res <= tol):
            code[i] = 2
            continue
        code[i] = 0
        for n in range(n_len):
            q = run[n]
            for z in range(col0, L):
                P_out[i, n, z - col0] = Pc[z, q]
        for z in range(L + 1):
            theta_out[i, z] = th[z]
        resid_out[i] = res
        ent_out[i] = ent        # the dual's entropy of p (no logarithms; _dual_state)
        att_out[i] = E


@njit(cache=True)
def _entropy(P, Lc, n_len):
    """-sum p ln p over P[:Lc, :n_len] (p = 0 counts 0; :func:`_log_rows`, whose nonsense
    for 0 and subnormal p is multiplied by p <= 2.3e-308)."""
    N = P.shape[1]
    lg = np.empty(N)
    Mi = np.empty(N, dtype=np.int64)
    h = 0.0
    for z in range(Lc):
        _log_rows(P[z], n_len, lg, Mi)
        for n in range(n_len):
            h -= P[z, n] * lg[n]
    return h


# ----------------------------------------------------------------------------- prefix metrics
@njit(cache=True, noalloc=True)
def _prefix_E_G(P, J, n_len, kap, f, c0, G, Q, want_G):
    """E (and, if want_G, G'_{r,n} = dE/dQ'_{r,n} = kappa'_r [f_n (1 + S_{n-1,r}) +
    sum_{m>n} f_m Q'_{m,r}]) of slot-form p: P (J+1, N) over the populated categories in
    increasing order. Q (J, N) and, without want_G, G are scratch. Row passes: Q'_r = p_{r+1}
    + Q'_{r+1}, the prefix sums S and suffix sums in four interleaved chains, E's sum in
    compensated blocks."""
    for n in range(n_len):
        Q[J - 1, n] = P[J, n]
    for r in range(J - 2, -1, -1):
        for n in range(n_len):
            Q[r, n] = P[r + 1, n] + Q[r + 1, n]
    E = c0
    for r in range(J):
        Gr = G[r]
        Qr = Q[r]
        _prefix_excl(Qr, n_len, Gr)
        for n in range(n_len):
            Gr[n] = f[n] * (1.0 + Gr[n])
        k = kap[r]
        E += k * _csum(Qr, Gr, n_len)
        if want_G:
            _suffix_excl_xy(f, Qr, n_len, Qr)      # Qr <- sum_{m>n} f_m Q'_m (Q' not needed again)
            for n in range(n_len):
                Gr[n] = k * (Gr[n] + Qr[n])
    return E


@njit(cache=True, noalloc=True)
def _features(G, J, n_len, Wc):
    """Category-form features of the slot form: W'(0) = 0, W'(i) = sum_{r < i} G'_r."""
    for n in range(n_len):
        Wc[0, n] = 0.0
    for i in range(1, J + 1):
        for n in range(n_len):
            Wc[i, n] = Wc[i - 1, n] + G[i - 1, n]


@njit(cache=True)
def _log_ratios(P, J, n_len, LR):
    """LR_{r,n} = ln p_r - ln p_{r+1} (J, N). A p that underflowed to 0 after a trial's
    renormalisation gives +-inf (numpy's rule, not an exception): the trial's merit is then
    not finite and the line search rejects it, as in the numpy engine."""
    N = P.shape[1]
    x = np.empty(N)
    Mi = np.empty(N, dtype=np.int64)
    for r in range(J):
        bad = 0
        for n in range(n_len):
            q = P[r, n] / P[r + 1, n]
            x[n] = q
            bad += not (_MIN_NORMAL <= q <= _MAX_FINITE)
        _log_rows(x, n_len, LR[r], Mi)
        if bad:
            for n in range(n_len):
                if not (_MIN_NORMAL <= x[n] <= _MAX_FINITE):
                    LR[r, n] = np.log(x[n])     # 0, subnormal, inf, NaN: numpy's values


@njit(cache=True, noalloc=True)
def _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, cum, c, masked=False):
    """F_{r,n} = ln p_r - ln p_{r+1} + alpha_r + b G'_{r,n} into F (J, N), the log-ratios
    given in LR (:func:`_log_ratios`, or carried along by the log-space steps), and the tail
    count residuals c_r = sum_{i > r} (sum_n p_i - K_i) into c (J) (compensated sums: the
    Newton step's count rows); returns (merit = |F|^2 + |c|^2 + e^2, stationarity =
    max |cumsum_r F|, count/metric residual). cum: (N) scratch. Row passes; the merit (it only steers the line search) reassociated,
    the counts in compensated blocks.

    ``masked`` (the Newton iterations, never a certificate): F_{r,n} = 0 where p_r or p_{r+1}
    sits on the floor (< _AT_FLOOR). Its exponential-family value underflowed, and the floor's
    log-odds are no stationarity residual: Newton cannot lower them (a trial is floored again),
    so its line search stalled on them (trec_covid_r1 GAP near the minimum: 90 of the 129 lists
    Newton left to the second run, e.g. F = 7.6 at one entry, 6e-5 elsewhere)."""
    merit = 0.0
    st = 0.0
    for r in range(J):
        a = alpha[r]
        for n in range(n_len):
            F[r, n] = LR[r, n] + a + b * G[r, n]
        if masked:
            for n in range(n_len):
                at_floor = (P[r, n] < _AT_FLOOR) | (P[r + 1, n] < _AT_FLOOR)
                F[r, n] = 0.0 if at_floor else F[r, n]
        merit += _rsum_cx(F[r], F[r], 0, n_len)
        if r == 0:
            for n in range(n_len):
                cum[n] = F[0, n]
        else:
            for n in range(n_len):
                cum[n] += F[r, n]
        st = max(st, _absmax(cum, n_len))
    # counts of the categories (as Batch.residuals) and of the tails (the Newton rows):
    # the tail residual sum_{i>r} (sum_n p_i - K_i) from the category residuals d_i
    cres = 0.0
    tail = 0.0
    for i in range(J, -1, -1):
        d = _csum1(P[i], n_len) - Kp[i]
        cres = max(cres, abs(d))
        if i > 0:
            tail += d
            c[i - 1] = tail
            merit += tail * tail
    e = E - v
    merit += e * e
    return merit, st, max(cres, abs(e))


@njit(cache=True, noalloc=True)
def _thomas_scalar(P, n_len, b, k, f, w, R, X, nr, Gs):
    """:func:`_block_thomas` for one slot (binary metrics): scalar recurrences.
    E'_n = 1/p_0 + 1/p_1 + b k f_n, T_nn = E'_n + E'_{n+1} - b k w_n, T_{n,n+1} = -E'_{n+1}."""
    bk = b * k
    # Gs[n, 0, 0] holds 1/D_n and Gs[n, 0, 1] E'_{n+1} for the backward pass (g_n goes to X,
    # then y overwrites it); Gs[n, 0, 2:] is unused here
    e_next = 0.0
    if n_len > 0:
        e_next = 1.0 / max(P[1, 0], 1.0 / _PINV_MAX) + 1.0 / max(P[0, 0], 1.0 / _PINV_MAX) + bk * f[0]
    dinv_prev = 0.0
    for n in range(n_len):
        e_n = e_next
        if n + 1 < n_len:
            e_next = (1.0 / max(P[1, n + 1], 1.0 / _PINV_MAX) + 1.0 / max(P[0, n + 1], 1.0 / _PINV_MAX)
                      + bk * f[n + 1])
        else:
            e_next = 0.0
        d = e_n + e_next - bk * w[n]
        if n > 0:
            d -= e_n * e_n * dinv_prev
        if not (d != 0.0) or not np.isfinite(d):
            return False
        dinv = 1.0 / d
        fac = e_n * dinv_prev
        for q in range(nr):
            rt = R[0, n, q] - (R[0, n + 1, q] if n + 1 < n_len else 0.0)
            if n > 0:
                rt += fac * X[0, n - 1, q]
            X[0, n, q] = rt
        Gs[n, 0, 0] = dinv
        Gs[n, 0, 1] = e_next
        dinv_prev = dinv
    for n in range(n_len - 1, -1, -1):
        dinv = Gs[n, 0, 0]
        en1 = Gs[n, 0, 1]
        for q in range(nr):
            acc = X[0, n, q]
            if n + 1 < n_len:
                acc += en1 * X[0, n + 1, q]
            y = dinv * acc
            if not np.isfinite(y):
                return False
            X[0, n, q] = y
    for n in range(n_len - 1, 0, -1):
        for q in range(nr):
            X[0, n, q] -= X[0, n - 1, q]
    return True


@njit(cache=True, noalloc=True)
def _sym_sandwich(ta, tc, td, pa, pc, pd, ea, ec, ed):
    """(ta, tc, td) - E D E for symmetric 2 x 2 blocks held as (a, c, d) = [[a, c], [c, d]]:
    D = (pa, pc, pd), E = (ea, ec, ed) (:func:`_thomas_2x2`'s Schur complement), expanded so
    that D enters last, (E D E)_aa = ea^2 pa + 2 ea ec pc + ec^2 pd and likewise: from D, a
    chain of three fused multiply-adds per entry (the elimination's latency chain runs through
    D; the product E (D E) took five)."""
    return (ta - (ea * ea) * pa - (2.0 * ea * ec) * pc - (ec * ec) * pd,
            tc - (ea * ec) * pa - (ea * ed + ec * ec) * pc - (ec * ed) * pd,
            td - (ec * ec) * pa - (2.0 * ec * ed) * pc - (ed * ed) * pd)


@njit(cache=True, noalloc=True)
def _sym_inverse(ta, tc, td):
    """(ok, inverse) of the symmetric 2 x 2 block (ta, tc, td) by its adjugate; ok is False
    when its determinant is 0 or not finite."""
    det = ta * td - tc * tc
    if not (det != 0.0) or not np.isfinite(det):
        return False, 0.0, 0.0, 0.0
    idet = 1.0 / det
    return True, td * idet, -tc * idet, ta * idet


@njit(cache=True, noalloc=True, inline="always")
def _thomas_2x2_coef(P, f, k0, k1, fl, E3, n):
    """E'_n, the p-part of rank n's block in :func:`_thomas_2x2` (a symmetric tridiagonal
    2 x 2 block of 1/p over the three grades, plus b kappa' f_n on its diagonal), into E3[:, n]."""
    i0 = 1.0 / max(P[0, n], fl)
    i1 = 1.0 / max(P[1, n], fl)
    i2 = 1.0 / max(P[2, n], fl)
    E3[0, n] = i1 + i0 + k0 * f[n]
    E3[1, n] = -i1
    E3[2, n] = i2 + i1 + k1 * f[n]


@njit(cache=True, noalloc=True, inline="always")
def _thomas_2x2_rank(E3, R, X, Dinv, w, k0, k1, n, has_next, coupled, ie, prev, im, pa, pc, pd, zero12):
    """One rank n of an elimination of :func:`_thomas_2x2` (top or bottom): the block
    T_nn = E'_n (+ E'_{n+1} if has_next) - b w_n diag(kappa'), minus E'_ie D E'_ie if coupled
    (D = (pa, pc, pd), the inverse of the previous rank's block, ``prev``), and its inverse
    D_n^-1; then h_n = D_n^-1 (R_n (- R_{n+1} if has_next) (+ E'_ie h_prev if coupled)) into
    X[:, n] (columns 1 and 2 set to 0 if zero12: :func:`_thomas_2x2`'s ``unit``) and the
    back-substitution's matrix D_n^-1 E'_im into Dinv[n]. Returns (ok, D_n^-1)."""
    ta = E3[0, n] - k0 * w[n]
    tc = E3[1, n]
    td = E3[2, n] - k1 * w[n]
    if has_next:
        ta += E3[0, n + 1]
        tc += E3[1, n + 1]
        td += E3[2, n + 1]
    ea = E3[0, ie]
    ec = E3[1, ie]
    ed = E3[2, ie]
    if coupled:
        ta, tc, td = _sym_sandwich(ta, tc, td, pa, pc, pd, ea, ec, ed)
    ok, na, nc, nd = _sym_inverse(ta, tc, td)
    if not ok:
        return False, 0.0, 0.0, 0.0
    for q in range(4):
        if zero12 and (q == 1 or q == 2):
            X[0, n, q] = 0.0
            X[1, n, q] = 0.0
            continue
        r0 = R[0, n, q]
        r1 = R[1, n, q]
        if has_next:
            r0 -= R[0, n + 1, q]
            r1 -= R[1, n + 1, q]
        if coupled:
            h0 = X[0, prev, q]
            h1 = X[1, prev, q]
            r0 += ea * h0 + ec * h1
            r1 += ec * h0 + ed * h1
        X[0, n, q] = na * r0 + nc * r1
        X[1, n, q] = nc * r0 + nd * r1
    fa = E3[0, im]
    fc = E3[1, im]
    fd = E3[2, im]
    Dinv[n, 0, 0] = na * fa + nc * fc
    Dinv[n, 0, 1] = na * fc + nc * fd
    Dinv[n, 1, 0] = nc * fa + nd * fc
    Dinv[n, 1, 1] = nc * fc + nd * fd
    return True, na, nc, nd


@njit(cache=True, noalloc=True, inline="always")
def _thomas_2x2_back(X, Dinv, n, nb):
    """One rank n of a back-substitution of :func:`_thomas_2x2`: y_n = h_n + M_n y_nb (h_n in
    X[:, n], M_n in Dinv[n]: :func:`_thomas_2x2_rank`) with the neighbour nb already solved,
    in place in X[:, n]: two multiply-adds from y_nb (the chain once ran through D_n^-1 too)."""
    m00 = Dinv[n, 0, 0]
    m01 = Dinv[n, 0, 1]
    m10 = Dinv[n, 1, 0]
    m11 = Dinv[n, 1, 1]
    for q in range(4):
        y0 = X[0, nb, q]
        y1 = X[1, nb, q]
        X[0, n, q] += m00 * y0 + m01 * y1
        X[1, n, q] += m10 * y0 + m11 * y1


@njit(cache=True, noalloc=True)
def _thomas_2x2(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, unit=False):
    """:func:`_block_thomas` for two slots (three populated grades) with closed-form 2 x 2
    blocks: symmetric blocks held as (a, c, d) = [[a, c], [c, d]]; E'_n in three contiguous
    rows of Ep's memory.

    Two-sided ("burn at both ends"): one recurrence eliminates from the top (D_n =
    T_nn - E'_n D_{n-1}^-1 E'_n, g_n = Rt_n + E'_n h_{n-1}, n < m), another from the bottom
    (U_n = T_nn - E'_{n+1} U_{n+1}^-1 E'_{n+1}, g_n likewise, n > m), in one loop so that their
    latency chains (a division per rank) overlap; each rank keeps h_n = D_n^-1 g_n and
    M_n = D_n^-1 E'_{n+1} (U_n^-1 E'_n below m). They meet at m = n_len // 2, where
    S_m = T_mm - E'_m D_{m-1}^-1 E'_m - E'_{m+1} U_{m+1}^-1 E'_{m+1} gives y_m, and two
    interleaved back-substitutions give y_n = h_n + M_n y_{n+1} above m and
    y_n = h_n + M_n y_{n-1} below it. E'_n in a pass of its own (it vectorises: computed in
    the eliminations, its three divisions per rank made them 30 % slower). Measured in a loop
    on trec_covid_r1 GAP states (N = 1000): 18.1 us per solve with the chains through E (D E)
    and y_n = D_n^-1 (g_n + E' y), 16.2 us now; 22 us one-sided (another machine: 14-15 us
    two-sided then).

    Always nr = J + 2 = 4 right-hand sides, looped over as a constant (against a runtime nr:
    15.1 instead of 17.3 us). The back-substitutions do not check finiteness per entry
    (branches there cost ~6 %): every entry of X enters the sums of :func:`_schur`, whose
    solve (:func:`_solve_small`) fails on a non-finite system.

    ``unit``: columns 1 and 2 of R are 1_{s = r} at every rank (the Newton-KKT solve's), so
    R_n - R_{n+1} is 0 there above the last rank and the top elimination's g_n is 0 in them:
    written, not computed (GAP kernel -1 to -2 %, the same X)."""
    E3 = Ep.reshape((4, Ep.shape[0]))
    k0 = b * kap[0]
    k1 = b * kap[1]
    fl = 1.0 / _PINV_MAX
    for n in range(n_len):
        _thomas_2x2_coef(P, f, k0, k1, fl, E3, n)
    if n_len == 0:
        return True
    m = n_len // 2
    nbot = n_len - 1 - m
    pa = 0.0    # D_{n-1}^-1 of the top recurrence
    pc = 0.0
    pd = 0.0
    qa = 0.0    # U_{n+1}^-1 of the bottom recurrence
    qc = 0.0
    qd = 0.0
    # both eliminations in one loop body (so that their division chains overlap): the helper
    # per rank is inlined at numba's IR level (inline="always"; as a call it was 4x slower)
    for k in range(m):
        # top: rank k (its next rank k + 1 <= m: always there), coupled to k - 1
        ok, pa, pc, pd = _thomas_2x2_rank(E3, R, X, Dinv, w, k0, k1, k, True, k > 0, k, k - 1, k + 1,
                                          pa, pc, pd, unit)
        if not ok:
            return False
        if k < nbot:
            # bottom: rank n_len - 1 - k (> m), coupled to the rank after it
            n = n_len - 1 - k
            ok, qa, qc, qd = _thomas_2x2_rank(E3, R, X, Dinv, w, k0, k1, n, k > 0, k > 0, n + 1,
                                              n + 1, n, qa, qc, qd, False)
            if not ok:
                return False
    # ---- the meeting rank m: both Schur complements (T_mm assembled as in _thomas_2x2_rank:
    # a helper shared by the two, inlined or not, made this solve 2.5-3x slower, measured)
    ta = E3[0, m] - k0 * w[m]
    tc = E3[1, m]
    td = E3[2, m] - k1 * w[m]
    if m + 1 < n_len:
        ta += E3[0, m + 1]
        tc += E3[1, m + 1]
        td += E3[2, m + 1]
    ea = E3[0, m]
    ec = E3[1, m]
    ed = E3[2, m]
    fa = 0.0
    fc = 0.0
    fd = 0.0
    if m > 0:
        ta, tc, td = _sym_sandwich(ta, tc, td, pa, pc, pd, ea, ec, ed)
    if m + 1 < n_len:
        fa = E3[0, m + 1]
        fc = E3[1, m + 1]
        fd = E3[2, m + 1]
        ta, tc, td = _sym_sandwich(ta, tc, td, qa, qc, qd, fa, fc, fd)
    ok, na, nc, nd = _sym_inverse(ta, tc, td)
    if not ok:
        return False
    for q in range(4):
        r0 = R[0, m, q]
        r1 = R[1, m, q]
        if m + 1 < n_len:
            r0 -= R[0, m + 1, q]
            r1 -= R[1, m + 1, q]
            h0 = X[0, m + 1, q]
            h1 = X[1, m + 1, q]
            r0 += fa * h0 + fc * h1
            r1 += fc * h0 + fd * h1
        if m > 0:
            h0 = X[0, m - 1, q]
            h1 = X[1, m - 1, q]
            r0 += ea * h0 + ec * h1
            r1 += ec * h0 + ed * h1
        y0 = na * r0 + nc * r1
        y1 = nc * r0 + nd * r1
        if not (np.isfinite(y0) and np.isfinite(y1)):
            return False
        X[0, m, q] = y0
        X[1, m, q] = y1
    # ---- back-substitution from m, upwards and downwards (interleaved)
    for k in range(1, m + 1):
        _thomas_2x2_back(X, Dinv, m - k, m - k + 1)
        if k <= nbot:
            _thomas_2x2_back(X, Dinv, m + k, m + k - 1)
    # ---- the differences y_n - y_{n-1} (each slot's previous y carried in registers: a
    # pass over X[s, n - 1] from the end left scalar, 2.8 us; this one 2)
    for s in range(2):
        Xs = X[s]
        p0 = Xs[0, 0]
        p1 = Xs[0, 1]
        p2 = Xs[0, 2]
        p3 = Xs[0, 3]
        for n in range(1, n_len):
            c0 = Xs[n, 0]
            c1 = Xs[n, 1]
            c2 = Xs[n, 2]
            c3 = Xs[n, 3]
            Xs[n, 0] = c0 - p0
            Xs[n, 1] = c1 - p1
            Xs[n, 2] = c2 - p2
            Xs[n, 3] = c3 - p3
            p0 = c0
            p1 = c1
            p2 = c2
            p3 = c3
    return True


@njit(cache=True, noalloc=True)
def _block_thomas(P, J, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, Gs, tmpA, tmpB, tmpV, unit=False):
    """Solve (E_H - b Hess) X = R for nr right-hand sides (R, X: (J, N, nr)) through the
    block-tridiagonal T of :mod:`maxent.solver.newton_kkt` (y = prefix sums of X):
    T_{n,n} = E'_n + E'_{n+1} - b w_n diag(kappa'), T_{n,n+1} = -E'_{n+1},
    E'_n = E_{H,n} + b f_n diag(kappa'); right-hand side R_n - R_{n+1}. Block Thomas
    (LDL^T without pivoting across blocks, Gauss-Jordan within a J x J block). ``unit``:
    R's columns 1..J are the unit right-hand sides 1_{s = r} (:func:`_thomas_2x2` uses it).
    Returns False on a singular or non-finite block."""
    if J == 1:
        return _thomas_scalar(P, n_len, b, kap[0], f, w, R, X, nr, Gs)
    if J == 2:
        return _thomas_2x2(P, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, unit)
    # E'_n for every rank: Ep (N, J, J)
    for n in range(n_len):
        for r in range(J):
            for s in range(J):
                Ep[n, r, s] = 0.0
        for r in range(J):
            ih = 1.0 / max(P[r + 1, n], 1.0 / _PINV_MAX)
            il = 1.0 / max(P[r, n], 1.0 / _PINV_MAX)
            Ep[n, r, r] = ih + il + b * f[n] * kap[r]
            if r + 1 < J:
                Ep[n, r, r + 1] = -ih
                Ep[n, r + 1, r] = -ih
    # forward: D_n = T_nn - E'_n Dinv_{n-1} E'_n ; g_n = Rt_n + E'_n Dinv_{n-1} g_{n-1}
    for n in range(n_len):
        for r in range(J):
            for s in range(J):
                v = Ep[n, r, s]
                if n + 1 < n_len:
                    v += Ep[n + 1, r, s]
                tmpA[r, s] = v
            tmpA[r, r] -= b * w[n] * kap[r]
            for k in range(nr):
                Gs[n, r, k] = R[r, n, k] - (R[r, n + 1, k] if n + 1 < n_len else 0.0)
        if n > 0:
            # tmpB = Dinv_{n-1} E'_n
            for r in range(J):
                for s in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Dinv[n - 1, r, q] * Ep[n, q, s]
                    tmpB[r, s] = acc
            for r in range(J):
                for s in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Ep[n, r, q] * tmpB[q, s]
                    tmpA[r, s] -= acc
            # g_n += E'_n (Dinv_{n-1} g_{n-1})
            for k in range(nr):
                for q in range(J):
                    acc = 0.0
                    for s in range(J):
                        acc += Dinv[n - 1, q, s] * Gs[n - 1, s, k]
                    tmpV[q] = acc
                for r in range(J):
                    acc = 0.0
                    for q in range(J):
                        acc += Ep[n, r, q] * tmpV[q]
                    Gs[n, r, k] += acc
        if not _invert_small(tmpA, Dinv[n], J):      # J >= 3 here (1, 2: returned above)
            return False
    # backward: y_n = Dinv_n (g_n + E'_{n+1} y_{n+1}); X holds y, then differences
    for n in range(n_len - 1, -1, -1):
        for k in range(nr):
            for r in range(J):
                acc = Gs[n, r, k]
                if n + 1 < n_len:
                    for q in range(J):
                        acc += Ep[n + 1, r, q] * X[q, n + 1, k]
                tmpV[r] = acc
            for r in range(J):
                acc = 0.0
                for q in range(J):
                    acc += Dinv[n, r, q] * tmpV[q]
                if not np.isfinite(acc):
                    return False
                X[r, n, k] = acc
    for n in range(n_len - 1, 0, -1):
        for r in range(J):
            for k in range(nr):
                X[r, n, k] -= X[r, n - 1, k]
    return True


# ----------------------------------------------------------------------------- cascade metrics
@njit(cache=True, noalloc=True)
def _chain_fix(c, A, e, g, x):
    """One segment of :func:`_cascade_chain`: T_n = Tloc_n + B_n x (Tloc in e, B in g, x: T at
    the segment's last rank), then e_n = c_n - T_n and g_n = A_n e_n, in place."""
    for j in range(c.shape[0]):
        T = e[j] + g[j] * x
        e[j] = c[j] - T
        g[j] = A[j] * e[j]


@njit(cache=True, noalloc=True)
def _cascade_chain(R, OM, c, n_len, A, e, g, want_g):
    """The cascade recursions from r (R) and 1 - r (OM): A_n = prod_{m<n} (1 - r_m) into A,
    E = sum_n c_n r_n A_n (compensated sum, returned) and, if want_g, e_n = c_n - T_n and
    g_n = dE/dr_n = A_n e_n with the suffix recursion T_n = c_{n+1} r_{n+1} + (1 - r_{n+1})
    T_{n+1}, T_{N-1} = 0: no division, so no vanishing product is divided by (the numpy
    gradients divide by 1 - r or use log-space sums), every g_n accurate to ulps of itself.

    Both recursions run on four segments at once (four independent multiply or multiply-add
    chains instead of one of n_len latencies; views indexed from 0, reversed for T): A within
    each segment, then scaled by the products of the segments before it; T within each
    segment from its end (Tloc_n, with B_n = prod_{n<l<=end} (1 - r_l)), then T_n = Tloc_n +
    B_n T_end with T_end, the T at the segment's last rank, from the segments after it. Sums
    and products of non-negative terms only, as the sequential recursions (which lists of
    fewer than 16 ranks take): 3.2 -> 1.7 us at N = 1000."""
    if n_len < 16:
        E = 0.0
        Ec = 0.0
        a = 1.0
        for n in range(n_len):
            A[n] = a
            E, Ec = _nsum(E, Ec, c[n] * R[n] * a)
            a *= OM[n]
        if want_g:
            t = 0.0
            for n in range(n_len - 1, -1, -1):
                e[n] = c[n] - t
                g[n] = A[n] * e[n]
                t = c[n] * R[n] + OM[n] * t
        return E + Ec
    M = (n_len + 3) // 4
    M3 = n_len - 3 * M
    # the segments as views, set up inline as in _scan4 (a helper returning the four views
    # as a tuple made GAP and ERR 4-5 % slower, measured)
    O0 = OM[0:M]
    O1 = OM[M:2 * M]
    O2 = OM[2 * M:3 * M]
    O3 = OM[3 * M:n_len]
    A0 = A[0:M]
    A1 = A[M:2 * M]
    A2 = A[2 * M:3 * M]
    A3 = A[3 * M:n_len]
    a0 = 1.0
    a1 = 1.0
    a2 = 1.0
    a3 = 1.0
    for j in range(M):
        A0[j] = a0
        A1[j] = a1
        A2[j] = a2
        a0 *= O0[j]
        a1 *= O1[j]
        a2 *= O2[j]
        if j < M3:
            A3[j] = a3
            a3 *= O3[j]
    h1 = a0
    h2 = h1 * a1
    h3 = h2 * a2
    for j in range(M):
        A1[j] *= h1
        A2[j] *= h2
    for j in range(M3):
        A3[j] *= h3
    E = _csum2(c, R, A, n_len)
    if want_g:
        # T by segments from their ends (reversed views: i = distance from the segment's
        # end): the local sums into e, the products B_n = prod_{n<l<=end} OM_l into g
        cv0 = c[0:M][::-1]
        cv1 = c[M:2 * M][::-1]
        cv2 = c[2 * M:3 * M][::-1]
        cv3 = c[3 * M:n_len][::-1]
        Rv0 = R[0:M][::-1]
        Rv1 = R[M:2 * M][::-1]
        Rv2 = R[2 * M:3 * M][::-1]
        Rv3 = R[3 * M:n_len][::-1]
        Ov0 = O0[::-1]
        Ov1 = O1[::-1]
        Ov2 = O2[::-1]
        Ov3 = O3[::-1]
        Tv0 = e[0:M][::-1]
        Tv1 = e[M:2 * M][::-1]
        Tv2 = e[2 * M:3 * M][::-1]
        Tv3 = e[3 * M:n_len][::-1]
        Bv0 = g[0:M][::-1]
        Bv1 = g[M:2 * M][::-1]
        Bv2 = g[2 * M:3 * M][::-1]
        Bv3 = g[3 * M:n_len][::-1]
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        b0 = 1.0
        b1 = 1.0
        b2 = 1.0
        b3 = 1.0
        for i in range(M):
            Tv0[i] = t0
            Bv0[i] = b0
            Tv1[i] = t1
            Bv1[i] = b1
            Tv2[i] = t2
            Bv2[i] = b2
            t0 = cv0[i] * Rv0[i] + Ov0[i] * t0
            t1 = cv1[i] * Rv1[i] + Ov1[i] * t1
            t2 = cv2[i] * Rv2[i] + Ov2[i] * t2
            b0 *= Ov0[i]
            b1 *= Ov1[i]
            b2 *= Ov2[i]
            if i < M3:                  # the last segment is the shortest
                Tv3[i] = t3
                Bv3[i] = b3
                t3 = cv3[i] * Rv3[i] + Ov3[i] * t3
                b3 *= Ov3[i]
        x2 = t3
        x1 = t2 + b2 * x2
        x0 = t1 + b1 * x1
        _chain_fix(c[0:M], A0, e[0:M], g[0:M], x0)
        _chain_fix(c[M:2 * M], A1, e[M:2 * M], g[M:2 * M], x1)
        _chain_fix(c[2 * M:3 * M], A2, e[2 * M:3 * M], g[2 * M:3 * M], x2)
        _chain_fix(c[3 * M:n_len], A3, e[3 * M:n_len], g[3 * M:n_len], 0.0)
    return E


@njit(cache=True, noalloc=True)
def _cascade_E_W(P, Lc, n_len, s, c, W, want_W, Sc):
    """E = sum_n c_n r_n prod_{m<n} (1 - r_m) of slot-form p (P (Lc, N)), r_n = sum_k s_k
    p_n(k) (RR, ERR; ``metric.cascade_form``) and, if want_W, the category-form features
    W[k, n] = (s_k - s_0) dE/dr_n (:func:`_cascade_chain`). 1 - r_n is summed as
    sum_k (1 - s_k) p_n(k), exact where r_n is near 1. Sc (5, N): scratch."""
    R, OM, A, e, g = Sc[0], Sc[1], Sc[2], Sc[3], Sc[4]
    # whole-row passes (LLVM vectorises them; a loop over k inside one over n it did not)
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


@njit(cache=True, noalloc=True)
def _metric_E(kind, P, J, n_len, kap, f, c0, G, Q, want_G, Sc):
    """E of slot-form p: kind 0 a prefix metric (:func:`_prefix_E_G`, G' into G if want_G),
    kind 1 a cascade metric (:func:`_cascade_E_W`, kap = s, f = c; G unused)."""
    if kind == 0:
        return _prefix_E_G(P, J, n_len, kap, f, c0, G, Q, want_G)
    return _cascade_E_W(P, J + 1, n_len, kap, f, Q, False, Sc)


@njit(cache=True, noalloc=True)
def _metric_W(kind, P, J, n_len, kap, f, G, Wc, Sc):
    """Category-form features dE/dp at P (slot 0's features 0): kind 0 from the G' that
    :func:`_metric_E` left in G at the same P, kind 1 computed from P."""
    if kind == 0:
        _features(G, J, n_len, Wc)
    else:
        _cascade_E_W(P, J + 1, n_len, kap, f, Wc, True, Sc)


@njit(cache=True, noalloc=True)
def _cascade_power(sp, Lc, pw):
    """Whether s'_k = m_k u with integers 0 <= m_k <= _POW_MAX (within 4 ulps; ERR's
    exponential gains: s' = (0, 1, 3) / 4, linear ones (0, 1, 2) / 3; RR (0, 1)): pw (Lc + 1)
    gets [m_0 .. m_{Lc-1}, u] (u = -1: no such structure), for :func:`_cascade_power_rows`."""
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
        m = np.floor(ratio + 0.5)
        # within 4 ulps: m_k u y_n is then s'_k y_n to 4 ulps of it (the certificate allows 16)
        if not (abs(ratio - m) <= 4.0 * _EPS * m and 0.0 <= m <= _POW_MAX):
            return
        pw[k] = m
    pw[Lc] = u


@njit(cache=True, noalloc=True)
def _cascade_power_rows(W, pm, Lc, n_len, pw):
    """:func:`_power_structure` of cascade features W[k, n] = s'_k g_n when s'_k = m_k u
    (pm of :func:`_cascade_power`): the multiples are known, so only the base row's range
    is scanned (no per-element check: m_k W[zb, n] is W[k, n] to 4 ulps)."""
    zb = 0
    for k in range(Lc):
        pw[k] = pm[k]
        if pm[k] == 1.0 and zb == 0:
            zb = k
    wmin, wmax = _minmax(W[zb], n_len)
    pw[Lc] = zb
    pw[Lc + 1] = wmin
    pw[Lc + 2] = wmax


@njit(cache=True)
def _cascade_softmax(theta, y, sp, Lc, n_len, P, pm, sws):
    """P[k, n] = softmax_k(theta_k + s'_k y_n): :func:`_softmax` with the features
    W[k, n] = s'_k y_n and b = 1. When s'_k = m_k u (pm of :func:`_cascade_power`) and every
    exponent lies within _POW_RANGE of the largest, its power path (one exp per rank) runs
    here on y itself: the operations of :func:`_softmax_power` on W[zb] = u y (u y_n - w_mid
    may now be one fused multiply-add), without writing W or summing the log-partitions
    (Newton-KKT needs neither). ``sws``: its scratch (W (Lc, N), ones (N),
    ones (Lc, bool), th1 (Lc+1), S, Z (N), pw (Lc+3)) from :func:`_cascade_workspace`; the
    two ``ones`` are only read."""
    W, ones, okb, th1, S, Z, pw = sws
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
        xmax = -np.inf
        xmin = np.inf
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
            _power_products(S, U, Z, P, theta, okb, pm, Lc, n_len, 1.0, wmid, xmax)
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


@njit(cache=True, noalloc=True)
def _cascade_moments3(sp, s, n_len, P, R, D, M, OM):
    """R, OM, M, D of :func:`_cascade_state` for three categories in one pass over the ranks
    (the row passes' operations in their order: the same values)."""
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


@njit(cache=True)
def _cascade_state(theta, y, sp, s, Lc, n_len, c, P, R, A, e, g, D, M, OM, pm, sws):
    """State of the cascade Newton-KKT iterate (theta (Lc), y (N)): p_n(k) =
    softmax_k(theta_k + s'_k y_n) into P (s' = s - s_0; :func:`_cascade_softmax` with the
    multiples pm of :func:`_cascade_power`), r_n =
    sum_k s_k p_n(k) into R, A_n = prod_{m<n} (1 - r_m), e_n = c_n - T_n, g_n = dE/dr_n =
    A_n e_n, D_n = Var_n(s), M[k, n] = dr_n/dtheta_k = p_n(k) (s_k - r_n) (M (Lc, N)),
    1 - r_n = sum_k (1 - s_k) p_n(k) into OM (:func:`_cascade_chain`). Returns E
    (compensated sum). ``sws``: :func:`_cascade_softmax`'s scratch."""
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


@njit(cache=True, noalloc=True)
def _band_solve(AB, n, kl, ku, X, nr):
    """Solve a band system by Gaussian elimination with partial pivoting. AB (n, 2 kl + ku + 1):
    row i holds columns i - kl .. i + kl + ku at AB[i, col - i + kl] (the last kl: room for
    the fill-in of row swaps); X (n, nr) right-hand sides, overwritten by the solutions.
    Returns False on a zero or non-finite pivot."""
    for i in range(n):
        piv = i
        best = abs(AB[i, kl])
        for p in range(i + 1, min(n, i + kl + 1)):
            a = abs(AB[p, i - p + kl])
            if a > best:
                best = a
                piv = p
        if not (best > 0.0) or not np.isfinite(best):
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


@njit(cache=True, noalloc=True)
def _cascade_coef(b, A, e, D, OM, j):
    """Coefficients of rank j in the system of :func:`_cascade_system`: (m_j, a_j, d_j) =
    (b D_j A_j e_j - (1 - r_j), b D_j A_j^2, b D_j e_j^2)."""
    bd = b * D[j]
    return bd * A[j] * e[j] - OM[j], bd * A[j] * A[j], bd * e[j] * e[j]


@njit(cache=True, noalloc=True)
def _cascade_system(b, A, e, D, OM, n_len, AB):
    """Band matrix (kl = ku = 2) of S z = w, S = I - b D H (H = d^2E/dr^2), in the unknowns
    x_{2j} = V_j = sum_{k<j} A_k P(k, j) z_k and x_{2j+1} = U_j = sum_{k>j} P(j, k) e_k z_k
    (P(j, k) = prod_{j<l<k} (1 - r_l)), where (H z)_j = -(A_j U_j + e_j V_j) and
    z_j = w_j - b D_j (A_j U_j + e_j V_j): with (m_j, a_j, d_j) of :func:`_cascade_coef`,
    V_{j+1} + m_j V_j + a_j U_j = A_j w_j, U_{j-1} + m_j U_j + d_j V_j = e_j w_j,
    V_0 = U_{N-1} = 0."""
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


@njit(cache=True, noalloc=True, inline="always")
def _cascade_thomas_body(b, A, e, D, OM, n_len, W, nr, X, Sc):
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
            if not (abs(pi) >= 1e-8) or not np.isfinite(pi):
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
            if not (abs(sg) >= 1e-8) or not np.isfinite(sg):
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
    if not (abs(det) >= 1e-8 * abs(sg_h)) or not np.isfinite(det):
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


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _thomas_check(A, e, W, X, mm, aa, dd, h, n_len, nr):
    """The rows of :func:`_cascade_thomas_body` not solved by construction: the V rows
    1..h (V_{j+1} + m_j V_j + a_j U_j = A_j w_j, j < h) and the U rows h..N-2
    (U_{j-1} + m_j U_j + d_j V_j = e_j w_j, j > h), which take in every unknown: True when
    each residual is <= 1e-12 of its terms' size (+ 1e-300) and every residual is finite (a
    non-finite unknown or right-hand side fails). A pass of its own, whose two sums only count
    (the excesses over the tolerance, >= 0, and the residuals: reassociated, so it vectorises);
    in the back-substitution the same checks took 6 of a solve's 16.5 us at N = 1000."""
    over = 0.0
    fin = 0.0
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
            fin += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            over += ex if ex > 0.0 else 0.0
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
            fin += r
            ex = abs(r) - 1e-12 * (abs(t1) + abs(t2) + abs(t3) + abs(t4)) - 1e-300
            over += ex if ex > 0.0 else 0.0
    return over == 0.0 and np.isfinite(fin)


@njit(cache=True, noalloc=True)
def _cascade_thomas(b, A, e, D, OM, n_len, W, nr, X, Sc):
    """S z = w for the columns w = W[q] (W (nr, N)) by :func:`_cascade_thomas_body`, its
    solution (V_j, U_j) into X (2N, nr) and accepted by :func:`_thomas_check`; False: X holds
    no solution. The right-hand sides' count is a constant when it is 4 (ERR's three grades:
    its loops over them unrolled). Measured in a loop over trec_covid_r1 ERR states (N = 1000,
    4 columns): 20.7 us per solve when it copied the right-hand sides and checked the rows in
    its back-substitution (the loop also restored the right-hand sides it overwrote, ~1 us),
    14.8 us now."""
    if nr == 4:
        ok = _cascade_thomas_body(b, A, e, D, OM, n_len, W, 4, X, Sc)
        return ok and _thomas_check(A, e, W, X, Sc[2], Sc[3], Sc[4], n_len // 2, n_len, 4)
    ok = _cascade_thomas_body(b, A, e, D, OM, n_len, W, nr, X, Sc)
    return ok and _thomas_check(A, e, W, X, Sc[2], Sc[3], Sc[4], n_len // 2, n_len, nr)


@njit(cache=True, noalloc=True)
def _cascade_rhs(A, e, n_len, W, nr, X):
    """The right-hand sides of :func:`_cascade_system` for the columns w = W[q] (W (nr, N)):
    X[2 (j+1), q] = A_j w_j (V rows), X[2j - 1, q] = e_j w_j (U rows), rows 0 and 2N - 1 zero."""
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


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _cascade_f1(y, b, g, n_len, F1):
    """F1 = y - b g into F1, (|F1|^2, max_n (|F1_n| - _W_ULPS ulp(|y_n| + |b g_n|)), >= 0) of
    :func:`_cascade_residual`: reassociated (the sum only steers the line search; a maximum
    is exact in any order), so the pass vectorises."""
    merit = 0.0
    f1 = 0.0
    for n in range(n_len):
        bg = b * g[n]
        x = y[n] - bg
        F1[n] = x
        merit += x * x
        t = abs(x) - _W_ULPS * _EPS * (abs(y[n]) + abs(bg))
        f1 = t if t > f1 else f1
    return merit, f1


@njit(cache=True, noalloc=True)
def _cascade_residual(P, y, b, g, Lc, n_len, Kp, E, v, sp, F1, F2):
    """F1 = y - b g (N), F2_k = sum_n p_n(k) - K_k (k = 1..J, compensated sums); returns
    (merit |F1|^2 + |F2|^2 + (E - v)^2, stationarity max|s'| max_n (|F1_n| - _W_ULPS ulp(|y_n|
    + |b g_n|))^+ (the log-odds residual ln p_n(k)/p_n(0) - (a_k + b W_n(k)) = s'_k F1_n of
    p in exponential form, beyond the rounding of its own exponent: the allowance of
    :func:`maxent.solver.linearize.stationarity`, per rank instead of at the largest |b W|),
    count and metric residual)."""
    merit, f1 = _cascade_f1(y, b, g, n_len, F1)
    res = 0.0
    for k in range(Lc):
        d = _csum1(P[k], n_len) - Kp[k]
        res = max(res, abs(d))
        if k > 0:
            F2[k] = d
            merit += d * d
    smax = 0.0
    for k in range(Lc):
        smax = max(smax, abs(sp[k]))
    ev = E - v
    return merit + ev * ev, smax * f1, max(res, abs(ev))


@njit(cache=True, noalloc=True)
def _cascade_step(b, A, e, g, D, OM, M, P, F1, F2, ev, J, n_len, AB, X, Z, HZ, S, rs, dy, Sc):
    """The Newton-KKT step of :func:`_cascade_newton` at its iterate: rs[:J] = dtheta_1..J,
    rs[J] = db, dy (N). Returns False when a solve fails."""
    Lc = J + 1
    nr = J + 2
    # ---- the band solves: columns w = -D F1, M_k (k = 1..J), D g (block Thomas, checked;
    # else Gaussian elimination with partial pivoting)
    for j in range(n_len):
        Z[0, j] = -D[j] * F1[j]
        Z[nr - 1, j] = D[j] * g[j]
    for q in range(1, nr - 1):
        for j in range(n_len):
            Z[q, j] = M[q, j]
    if not _cascade_thomas(b, A, e, D, OM, n_len, Z, nr, X, Sc):
        _cascade_rhs(A, e, n_len, Z, nr, X)
        _cascade_system(b, A, e, D, OM, n_len, AB)
        if not _band_solve(AB, 2 * n_len, 2, 2, X, nr):
            return False
    if nr == 4:
        # the four columns at once (rows 2j, 2j + 1 of X read once: 1.9 us less per step
        # at N = 1000 than column by column, the same operations)
        for j in range(n_len):
            a = A[j]
            ej = e[j]
            bd = b * D[j]
            h0 = -(a * X[2 * j + 1, 0] + ej * X[2 * j, 0])
            h1 = -(a * X[2 * j + 1, 1] + ej * X[2 * j, 1])
            h2 = -(a * X[2 * j + 1, 2] + ej * X[2 * j, 2])
            h3 = -(a * X[2 * j + 1, 3] + ej * X[2 * j, 3])
            HZ[0, j] = h0
            HZ[1, j] = h1
            HZ[2, j] = h2
            HZ[3, j] = h3
            Z[0, j] += bd * h0
            Z[1, j] += bd * h1
            Z[2, j] += bd * h2
            Z[3, j] += bd * h3
    else:
        for q in range(nr):
            # column by column: HZ and Z rows written contiguously
            for j in range(n_len):
                hz = -(A[j] * X[2 * j + 1, q] + e[j] * X[2 * j, q])
                HZ[q, j] = hz
                Z[q, j] = Z[q, j] + (b * D[j]) * hz
    # ---- the multiplier steps (dtheta_1..J, db):
    # dy = -F1 + b H dr + g db, dr = Z_0 + sum_k Z_k dtheta_k + Z_{J+1} db;
    # counts: sum_n M_k dy + sum_j C_kj dtheta_j = -F2_k; metric: g . dr = -(E - v)
    # (sums that only steer the step: reassociated, as the other Newton-KKT Schur complements)
    if J == 2:
        _cascade_schur2(b, g, M, P, F1, F2, ev, HZ, Z, n_len, S, rs)
    else:
        _cascade_schur(b, g, M, P, F1, F2, ev, HZ, Z, J, n_len, S, rs)
    if not _solve_small(S, rs, J + 1):
        return False
    db = rs[J]
    if J == 2:
        r0 = rs[0]
        r1 = rs[1]
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[3, n] * db + HZ[1, n] * r0 + HZ[2, n] * r1
            dy[n] = -F1[n] + b * hdr + g[n] * db
    else:
        for n in range(n_len):
            hdr = HZ[0, n] + HZ[J + 1, n] * db
            for k in range(1, Lc):
                hdr += HZ[k, n] * rs[k - 1]
            dy[n] = -F1[n] + b * hdr + g[n] * db
    return True


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _cascade_schur2(b, g, M, P, F1, F2, ev, HZ, Z, n_len, S, rs):
    """:func:`_cascade_schur` for J = 2 (ERR's three grades): its 21 sums in one pass over
    the ranks (reassociated; at N = 1000 the 22 passes and the small solve took 2.1 us per
    step, the one pass ~0.6 us less)."""
    s1f = s1h0 = s1h1 = s1h2 = s1h3 = s1g = p11 = p12 = p1 = 0.0
    s2f = s2h0 = s2h1 = s2h2 = s2h3 = s2g = p22 = p2 = 0.0
    gz0 = gz1 = gz2 = gz3 = 0.0
    M1 = M[1]
    M2 = M[2]
    P1 = P[1]
    P2 = P[2]
    H0 = HZ[0]
    H1 = HZ[1]
    H2 = HZ[2]
    H3 = HZ[3]
    Z0 = Z[0]
    Z1 = Z[1]
    Z2 = Z[2]
    Z3 = Z[3]
    for n in range(n_len):
        m1 = M1[n]
        m2 = M2[n]
        q1 = P1[n]
        q2 = P2[n]
        gn = g[n]
        f = F1[n]
        h0 = H0[n]
        h1 = H1[n]
        h2 = H2[n]
        h3 = H3[n]
        s1f += m1 * f
        s1h0 += m1 * h0
        s1h1 += m1 * h1
        s1h2 += m1 * h2
        s1h3 += m1 * h3
        s1g += m1 * gn
        s2f += m2 * f
        s2h0 += m2 * h0
        s2h1 += m2 * h1
        s2h2 += m2 * h2
        s2h3 += m2 * h3
        s2g += m2 * gn
        p11 += q1 * q1
        p12 += q1 * q2
        p22 += q2 * q2
        p1 += q1
        p2 += q2
        gz0 += gn * Z0[n]
        gz1 += gn * Z1[n]
        gz2 += gn * Z2[n]
        gz3 += gn * Z3[n]
    rs[0] = -F2[1] + s1f - b * s1h0
    rs[1] = -F2[2] + s2f - b * s2h0
    S[0, 0] = b * s1h1 + (p1 - p11)
    S[0, 1] = b * s1h2 - p12
    S[0, 2] = b * s1h3 + s1g
    S[1, 0] = b * s2h1 - p12
    S[1, 1] = b * s2h2 + (p2 - p22)
    S[1, 2] = b * s2h3 + s2g
    rs[2] = -ev - gz0
    S[2, 0] = gz1
    S[2, 1] = gz2
    S[2, 2] = gz3


@njit(cache=True, noalloc=True)
def _cascade_schur(b, g, M, P, F1, F2, ev, HZ, Z, J, n_len, S, rs):
    """The (J+1) x (J+1) system of the multiplier steps of :func:`_cascade_step` into S, rs:
    count rows k = 1..J, rs = -F2_k + M_k . F1 - b M_k . HZ_0 and S[k-1, q-1] = b M_k . HZ_q
    (+ M_k . g for q = J+1, + C_kq = [k = q] sum_n p_n(k) - sum_n p_n(k) p_n(q) for q <= J);
    the metric row, rs = -(E - v) - g . Z_0 and S[J, q-1] = g . Z_q."""
    Lc = J + 1
    nr = J + 2
    for k in range(1, Lc):
        Mk = M[k]
        rs[k - 1] = -F2[k] + _rsum_cx(Mk, F1, 0, n_len) - b * _rsum_cx(Mk, HZ[0], 0, n_len)
        for q in range(1, nr):
            S[k - 1, q - 1] = b * _rsum_cx(Mk, HZ[q], 0, n_len)
        S[k - 1, J] += _rsum_cx(Mk, g, 0, n_len)
        for jj in range(1, Lc):
            cc = -_rsum_cx(P[k], P[jj], 0, n_len)
            if jj == k:
                cc += _rsum(P[k], 0, n_len)
            S[k - 1, jj - 1] += cc
    rs[J] = -ev - _rsum_cx(g, Z[0], 0, n_len)
    for q in range(1, nr):
        S[J, q - 1] = _rsum_cx(g, Z[q], 0, n_len)


@njit(cache=True)
def _cascade_eval(TH, Yv, b, k, sp, s, Lc, n_len, c, PP, V, MM, FF2, Kp, v, pm, sws):
    """State (:func:`_cascade_state`) and residual (:func:`_cascade_residual`) of the
    iterate in slot k of the two-slot arrays of :func:`_cascade_newton` (V[k] rows: r, A,
    e, g, D, 1 - r, F1). Returns (E, merit, stationarity, residual)."""
    Vk = V[k]
    E = _cascade_state(TH[k], Yv[k], sp, s, Lc, n_len, c, PP[k], Vk[0], Vk[1], Vk[2], Vk[3], Vk[4],
                       MM[k], Vk[5], pm, sws)
    merit, st, res = _cascade_residual(PP[k], Yv[k], b, Vk[3], Lc, n_len, Kp, E, v, sp, Vk[6], FF2[k])
    return E, merit, st, res


@njit(cache=True, noalloc=True)
def _newton_accepts(mt, merit, t, st, res, kkt_tol, tol):
    """Whether a Newton-KKT trial at step t is taken (cascade and prefix kernels): Armijo on the
    squared residual, mt <= (1 - 2e-4 t) merit, or the trial meets the certificate (st, res)
    even though its merit rose. Near the maximum of ERR (|b| ~ 4e10) the merit's y-equation
    terms are rounding noise of 1e-11 to 1e-17 between nearby t while the certified
    quantities converge (trec_covid_r1 BITEM_df/10: stationarity 1.9e-9 -> 4e-19, merit 3e-17
    -> 1.5e-11; refused, the list went to the numpy engine for 2200 steps)."""
    return np.isfinite(mt) and (mt <= (1.0 - 2e-4 * t) * merit + 1e-28 or (st <= kkt_tol and res <= tol))


@njit(cache=True)
def _cascade_workspace(J, N):
    """The scratch of :func:`_cascade_newton` (and of :func:`_cascade_softmax`, ``sws``) for
    J + 1 populated categories and lists of length <= N: allocated once per batch (again only
    when J changes), not cleared (as :func:`_prefix_workspace`). The two ``ones`` of ``sws``
    are set here and only read. Allocating them per problem (17 arrays, two zero-filled) and
    per softmax (7) cost ERR ~1 % (one-process A/B)."""
    Lc = J + 1
    nr = J + 2
    sws = (np.empty((Lc, N)), np.ones(N), np.ones(Lc, dtype=np.bool_), np.empty(Lc + 1), np.empty(N),
           np.empty(N), np.empty(Lc + 3))
    return (np.empty(Lc), np.empty((2, Lc)), np.empty((2, N)), np.empty((2, Lc, N)), np.empty((2, 7, N)),
            np.empty((2, Lc, N)), np.empty(Lc + 1), np.empty((2, Lc)), np.empty((2 * N, 7)),
            np.empty((2 * N, nr)), np.empty((5, N)), np.empty((nr, N)),
            np.empty((nr, N)), np.empty((J + 1, J + 1)), np.empty(J + 1), np.empty(N), sws)


@njit(cache=True)
def _cascade_newton(Pf, J, n_len, Kp, s, c, v, tol, kkt_tol, max_newton, th, W0, cws):
    """Newton on the KKT system of a cascade metric (RR, ERR) in the variables (theta, y, b):
    p_n = softmax(theta + s' y_n), y = b dE/dr(p) at the solution, counts, E = v. From the
    start th (Lc+1: [theta, b]) with the last linearised subproblem's features W0
    (y_n = b W0[J, n] / s'_J). Each step solves the band system of :func:`_cascade_system`
    for J + 2 right-hand sides, then the (J+1) x (J+1) system of the multiplier steps; Armijo
    on the squared residual. The iterate and the trial point live in the two slots of each
    state array (an accepted trial flips the slot). Pf (Lc, N) gets p; th the multipliers.
    ``cws``: the scratch of :func:`_cascade_workspace` for these J (every entry is written
    before it is read, except FF2's, cleared here).
    Returns (certified, nit, stationarity, E, residual)."""
    Lc = J + 1
    nr = J + 2
    (sp, TH, Yv, PP, V, MM, pm, FF2, AB, X, Sc, Z, HZ, S, rs, dy, sws) = cws
    for k in range(Lc):
        sp[k] = s[k] - s[0]
    _cascade_power(sp, Lc, pm)
    for k in range(Lc):
        FF2[0, k] = 0.0
        FF2[1, k] = 0.0
    cur = 0
    for k in range(Lc):
        TH[cur, k] = th[k]
    b = th[Lc]
    for n in range(n_len):
        Yv[cur, n] = b * W0[J, n] / sp[J]
    E, merit, st, res = _cascade_eval(TH, Yv, b, cur, sp, s, Lc, n_len, c, PP, V, MM, FF2, Kp, v, pm, sws)
    nit = 0
    while True:
        if st <= kkt_tol and res <= tol and np.isfinite(merit):
            for k in range(Lc):
                th[k] = TH[cur, k]
            th[Lc] = b
            _copy(PP[cur], Pf, Lc, n_len)
            return True, nit, st, E, res
        if nit == max_newton:
            break
        nit += 1
        Vc = V[cur]
        if not _cascade_step(b, Vc[1], Vc[2], Vc[3], Vc[4], Vc[5], MM[cur], PP[cur], Vc[6], FF2[cur], E - v,
                             J, n_len, AB, X, Z, HZ, S, rs, dy, Sc):
            break
        db = rs[J]
        # ---- Armijo on the squared residual, the trial in the other slot
        nxt = 1 - cur
        t = 1.0
        acc_ = False
        for ls in range(_LS_STEPS):
            TH[nxt, 0] = TH[cur, 0]
            for k in range(1, Lc):
                TH[nxt, k] = TH[cur, k] + t * rs[k - 1]
            for n in range(n_len):
                Yv[nxt, n] = Yv[cur, n] + t * dy[n]
            bt = b + t * db
            Et, mt, stt, rest = _cascade_eval(TH, Yv, bt, nxt, sp, s, Lc, n_len, c, PP, V, MM, FF2, Kp, v, pm, sws)
            if _newton_accepts(mt, merit, t, stt, rest, kkt_tol, tol):
                acc_ = True
                cur = nxt
                b = bt
                E, merit, st, res = Et, mt, stt, rest
                break
            t *= 0.5
        if not acc_:
            break
    return False, nit, st, E, res


@njit(cache=True, noalloc=True)
def _linearised_certificate(Pt, W_lin, W_new, Lc, n_len, Kp, b, E, v):
    """Certificate of a linearised subproblem's solution Pt (features W_lin, metric
    multiplier b): stationarity |b| max|W_new - W_lin| (W_new: the features at Pt, slot 0's
    zero), the constraint residual max(|sum_n Pt[i, n] - Kp[i]| (compensated sums), |E - v|)
    and the stationarity with the rounding allowance of
    :func:`maxent.solver.linearize.stationarity`, |b| max(0, max|dW| - _W_ULPS ulp(max|W_new|))."""
    dmax = 0.0
    wmax = 0.0
    for i in range(Lc):
        d, a = _absmax_diff(W_new[i], W_lin[i], n_len)
        dmax = d if d > dmax else dmax
        wmax = a if a > wmax else wmax
    res = 0.0
    for i in range(Lc):
        res = max(res, abs(_csum1(Pt[i], n_len) - Kp[i]))
    return abs(b) * dmax, max(res, abs(E - v)), abs(b) * max(dmax - _W_ULPS * _EPS * wmax, 0.0)


@njit(cache=True)
def _linearize_run(J, n_len, Kp, kap, f, c0, v, tol, kkt_tol, steps, far_tol, P, Pt, th, W0, W1, G, Gt, Q,
                   inner_iter=_INNER_ITER, kind=0, switch=0.0, coarse=0):
    """Successive linearisation (:func:`maxent.solver.linearize.linearize`, one problem in
    slot form) from the count-only distribution, at most ``steps`` subproblems: each the
    convex dual with W = dE/dp at the iterate (inexact, dual residual ``far_tol``, while the
    stationarity is > 1e-5), its target moved 99 % of the way to the range of <W, p> when
    out of it; the step by Armijo on the exact penalty -H(p) + mu |E(p) - v| (cascade runs:
    its first trial damped, halved down to _MIN_STEP, after a reversal of b larger than half
    the last change, as the numpy code). Certified (count and metric residual <= tol,
    stationarity |b| max|W(p_l) - W_k| <= kkt_tol) on the subproblem's solution p_l, left
    in Pt with its multipliers in th (a cascade run stationary only to the rounding of W
    for more than _ROUNDING_STEPS steps ends uncertified, for Newton-KKT, whose certificate
    allows each rank's own rounding; prefix runs go on, as before: handing theirs over cost
    the robust03 GAP sweep 20 %). Each
    subproblem starts from the
    previous one's multipliers (as the numpy code), except the second, which starts from
    the count-only multipliers when their dual value is lower (the relaxation's target is
    often moved to the edge of its range, |b| ~ 1e3-1e4, far from the next one's).

    ``inner_iter`` caps the dual Newton steps per subproblem (the start: an inexact one).
    ``switch`` > 0: return (uncertified) as soon as the stationarity is <= switch with the
    residual <= 1e-3, to start Newton-KKT there (Pt = softmax(th, W0), W0 the last
    subproblem's features).
    ``coarse`` > 0 (_COARSE: the prefix kernels' inexact start, cascade_batch's run before
    Newton-KKT): a subproblem's dual is solved over the blocks of :func:`_rank_blocks`
    (``coarse`` the ratio), features averaged per block, and its solution Pt, dual residual
    and entropy are then those of the multipliers found at every rank (one softmax at full
    resolution). The first _COARSE_STEPS subproblems only (on bench_solver's ERR lists the
    mean iterations are 5.94 with and without blocks there, and ERR's kernel ~15 % faster,
    one-process A/B).
    ``kind``: 0 a prefix metric (kap, f, c0 of ``prefix_hessian``), 1 a cascade metric
    (kap = s, f = c of ``cascade_form``; :func:`_metric_E`), whose subproblems take the ridge
    relative to each multiplier's own curvature (as ``newton_dual``): near the maximum of ERR
    (|b| ~ 1e7-1e9, |W| ~ 1e-8) the largest diagonal's ridge dwarfs b's curvature and cut its
    steps to a few per cent (b crept for 200 steps where the numpy engine needs 20).

    Returns (certified, nit, stationarity, E(p_l), residual)."""
    Lc = J + 1
    N = P.shape[1]
    ok = np.ones(Lc, dtype=np.bool_)
    ones = np.ones(N)
    th0 = np.empty(Lc + 1)
    nopw = np.full(Lc + 3, -1.0)      # general features: no power path in the softmax
    pw = np.full(Lc + 3, -1.0)        # cascade features (s'_k g_n): the power path when s' are integer multiples
    pm = np.full(Lc + 1, -1.0)        # ... their multiples m_k (:func:`_cascade_power`)
    if kind == 1:
        for i in range(Lc):
            th0[i] = kap[i] - kap[0]
        _cascade_power(th0, Lc, pm)
    Sc = np.empty((5, N))
    pref = np.arange(Lc - 1, -1, -1)   # the extreme lists: highest category first / lowest first
    bnd = np.empty(N + 1, dtype=np.int64)
    M = _rank_blocks(n_len, coarse, bnd) if coarse > 0 else 0
    Mc = max(M, 1)
    Wc = np.empty((Lc, Mc))             # the coarse subproblem: features, column weights, p
    cc = np.empty(Mc)
    Pc = np.empty((Lc, Mc))
    wbar = np.empty(N)                  # ... and the full-resolution state of its multipliers
    gf = np.empty(Lc + 1)
    pwc = np.full(Lc + 3, -1.0)         # the blocks' power structure (cascade features)
    Sf = np.empty(N)
    Zf = np.empty(N)
    Ksum = 0.0
    for i in range(Lc):
        Ksum += Kp[i]
    El = 0.0
    resl = np.inf
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] = Kp[i] / Ksum
        th[i] = np.log(Kp[i] / Kp[0])
    th[Lc] = 0.0
    E = _metric_E(kind, P, J, n_len, kap, f, c0, G, Q, True, Sc)
    _metric_W(kind, P, J, n_len, kap, f, G, W0, Sc)
    Hc = 0.0                    # entropy of the count-only p (constant per category)
    for i in range(Lc):
        q = Kp[i] / Ksum
        Hc -= n_len * q * np.log(q)
    mu = 1.0
    stat = np.inf
    nit = 0
    t_first = 1.0
    b_last = 0.0
    db_last = 0.0
    rounding = 0
    for k in range(steps):
        cur = 0.0
        for i in range(Lc):
            cur += _csum(W0[i], P[i], n_len)
        top = _extreme_steer(W0, Lc, n_len, Kp, pref, True)
        bot = _extreme_steer(W0, Lc, n_len, Kp, pref, False)
        lo = min(top, bot)
        hi = max(top, bot)
        vk = v - E + cur
        if vk > hi:
            vk = cur + _ELASTIC * (hi - cur)
        if vk < lo:
            vk = cur + _ELASTIC * (lo - cur)
        inner = far_tol if stat > 1e-5 else 0.1 * tol
        if kind == 1 and pm[Lc] > 0.0:
            _cascade_power_rows(W0, pm, Lc, n_len, pw)
        D0 = np.inf                     # no other start (only the second subproblem has one)
        if k == 1:
            # the relaxation's multipliers can be far from the second subproblem's (its
            # target moved to the edge of the range gives |b| ~ 1e3-1e4 where the next needs
            # ~1e2): warm start only if its dual value is below the count-only start's
            # D at the count-only multipliers (b = 0: every rank has lse = ln(sum K / K_0))
            D0 = n_len * np.log(Ksum / Kp[0])
            for i in range(Lc):
                th0[i] = np.log(Kp[i] / Kp[0])
                D0 -= th0[i] * Kp[i]
            th0[Lc] = 0.0
        if M > 0 and k < _COARSE_STEPS:
            # the dual over the blocks (column weights: their sizes), then p at every rank
            _block_means(W0, Lc, bnd, M, cc, Wc)
            if kind == 1 and pm[Lc] > 0.0:
                _cascade_power_rows(Wc, pm, Lc, M, pwc)
            _dual_solve(Wc, cc, Lc, M, ok, Kp, vk, th, Pc, inner, inner_iter, kind == 1,
                        pwc if kind == 1 else nopw, th0, D0)
            _, _, Hl = _dual_state(W0, ones, Lc, n_len, ok, Kp, th, vk, Pt, wbar, gf, Sf, Zf,
                                   pw if kind == 1 else nopw)
            dres = 0.0
            for i in range(Lc + 1):
                dres = max(dres, abs(gf[i]))
        else:
            _, dres, Hl = _dual_solve(W0, ones, Lc, n_len, ok, Kp, vk, th, Pt, inner, inner_iter, kind == 1,
                                      pw if kind == 1 else nopw, th0, D0)
        # cascade runs: E and the features W1 at Pt in one pass (W1 is then left as it is)
        w1_fresh = kind == 1
        if w1_fresh:
            El = _cascade_E_W(Pt, Lc, n_len, kap, f, W1, True, Sc)
        else:
            El = _metric_E(kind, Pt, J, n_len, kap, f, c0, Gt, Q, True, Sc)
        mu_t = max(mu, 2.0 * abs(th[Lc]) + 1.0)
        if dres > _COLD_RES and -Hl + mu_t * abs(El - v) > -Hc + mu_t * abs(E - v):
            # a warm start far from this subproblem's multipliers left its dual unsolved (p
            # off the counts, worse than the iterate): solve it again from the count-only
            # multipliers (as maxent.solver.linearize); kept if its dual residual is lower
            for i in range(Lc + 1):
                th0[i] = th[i]
            for i in range(Lc):
                th[i] = np.log(Kp[i] / Kp[0])
            th[Lc] = 0.0
            w1_fresh = False                          # W1: scratch of the cold solve
            _, dres2, Hl2 = _dual_solve(W0, ones, Lc, n_len, ok, Kp, vk, th, W1, inner,
                                           max(inner_iter, _COLD_ITER), kind == 1, pw if kind == 1 else nopw, th, np.inf)
            if dres2 < dres:
                Hl = Hl2
                for i in range(Lc):
                    for n in range(n_len):
                        Pt[i, n] = W1[i, n]
                El = _metric_E(kind, Pt, J, n_len, kap, f, c0, Gt, Q, True, Sc)
            else:
                for i in range(Lc + 1):
                    th[i] = th0[i]
        if not w1_fresh:
            _metric_W(kind, Pt, J, n_len, kap, f, Gt, W1, Sc)
        bl = th[Lc]
        stat, resl, stat_r = _linearised_certificate(Pt, W0, W1, Lc, n_len, Kp, bl, El, v)
        nit += 1
        if resl <= tol and stat <= kkt_tol:
            return True, nit, stat, El, resl
        if stat <= switch and resl <= 1e-3:
            break
        if kind == 1 and resl <= tol and stat_r <= kkt_tol:
            # stationary to the rounding of dE/dp only (|b| ~ 1e6-1e9): a few more steps often
            # certify it strictly (the division-free dE/dr is accurate per element, not only
            # to ulps of its largest entry; trec_covid_r1 ERR lists at |b| ~ 3e6: 4 steps
            # more); else Newton-KKT takes it (cascade_batch), whose certificate allows the
            # rounding of each rank's own exponent
            rounding += 1
            if rounding > _ROUNDING_STEPS:
                break
        if k == steps - 1:
            break
        # damping (maxent.solver.linearize): a reversal of b larger than half its last change
        # halves the first trial step, which grows back by 1.25 per step that does not reverse.
        # Cascade runs only: in the prefix kernels' second run it changed no status and cost
        # time (TREC-COVID analysis ~+10 %: damped steps evaluate a trial point); the few
        # oscillating prefix problems go on to the numpy engine, which damps
        db = bl - b_last
        if kind == 1 and db * db_last < 0.0 and abs(db) > 0.5 * abs(db_last):
            t_first = max(0.5 * t_first, _MIN_STEP)
        else:
            t_first = min(1.25 * t_first, 1.0)
        b_last = bl
        db_last = db
        mu = max(mu, 2.0 * abs(bl) + 1.0)
        phi0 = -Hc + mu * abs(E - v)
        slope = (abs(bl) - mu) * abs(E - v)
        slack = 1e-12 * (abs(phi0) + 1.0) + 2.0 * mu * tol
        t = 1.0
        phit = -Hl + mu * abs(El - v)
        if t_first >= 1.0 and phit <= phi0 + _ARMIJO * slope + slack:
            for i in range(Lc):
                for n in range(n_len):
                    P[i, n] = Pt[i, n]
            E, Hc = El, Hl
            for i in range(Lc):
                for n in range(n_len):
                    W0[i, n] = W1[i, n]
        else:
            t = 2.0 * t_first if t_first < 1.0 else 1.0
            Ht = Hc
            for ls in range(30):
                t *= 0.5
                for i in range(Lc):
                    for n in range(n_len):
                        W1[i, n] = P[i, n] + t * (Pt[i, n] - P[i, n])   # W1: scratch trial p
                Et = _metric_E(kind, W1, J, n_len, kap, f, c0, Gt, Q, False, Sc)
                Ht = _entropy(W1, Lc, n_len)
                if -Ht + mu * abs(Et - v) <= phi0 + _ARMIJO * t * slope + slack or ls == 29:
                    break
            for i in range(Lc):
                for n in range(n_len):
                    P[i, n] = W1[i, n]
            Hc = Ht                                     # P is the accepted trial point W1
            if kind == 1:
                E = _cascade_E_W(P, Lc, n_len, kap, f, W0, True, Sc)
            else:
                E = _metric_E(kind, P, J, n_len, kap, f, c0, G, Q, True, Sc)
                _metric_W(kind, P, J, n_len, kap, f, G, W0, Sc)
    return False, nit, stat, El, resl


@njit(cache=True)
def _prefix_workspace(J, N):
    """Scratch of :func:`_prefix_one` for J slots and N ranks, allocated once per batch (and
    again only when J changes): per problem, its ~35 zero-filled arrays (0.5 MB) measured
    3.5-6 % of the GAP batch (malloc, memset, reference counts). Uninitialised (each problem
    writes every entry it reads) but for R, the right-hand sides of the Newton-KKT solves,
    whose constant columns 1_{s = r} are set here (_newton_rhs writes the others)."""
    Lc = J + 1
    nr = J + 2
    ok = np.ones(Lc, dtype=np.bool_)
    ones = np.ones(N)
    nopw = np.full(Lc + 3, -1.0)
    G = np.empty((J, N))
    Q = np.empty((J, N))
    W0 = np.empty((Lc, N))
    W1 = np.empty((Lc, N))
    P = np.empty((Lc, N))
    Pt = np.empty((Lc, N))
    F = np.empty((J, N))
    Gt = np.empty((J, N))
    th = np.empty(Lc + 1)
    Zs = np.empty(N)
    alpha = np.empty(J)
    LR = np.empty((J, N))
    LRt = np.empty((J, N))
    R = np.zeros((J, N, nr))
    for r in range(J):
        for n in range(N):
            R[r, n, 1 + r] = 1.0
    X = np.empty((J, N, nr))
    Ep = np.empty((N, J, J))
    Dinv = np.empty((N, J, J))
    Gs = np.empty((N, J, nr))
    tA = np.empty((J, J))
    tB = np.empty((J, J))
    tV = np.empty(J)
    c = np.empty(J)
    ct = np.empty(J)
    S = np.empty((J + 1, J + 1))
    rs = np.empty(J + 1)
    dQ = np.empty((J, N))
    ell = np.empty((Lc, N))
    ell_x = np.empty((Lc, N))
    Ft = np.empty((J, N))
    alpha_t = np.empty(J)
    return (ok, ones, nopw, G, Q, W0, W1, P, Pt, F, Gt, th, Zs, alpha, LR, LRt, R, X, Ep, Dinv, Gs, tA, tB, tV, c, ct, S, rs, dQ, ell, ell_x, Ft, alpha_t)


@njit(cache=True)
def _prefix_one(Pf, J, n_len, Kp, kap, f, w, c0, v, tol, kkt_tol, max_newton, fallback, th_out, near, ws):
    """One interior problem of a prefix metric in slot form. Pf (J+1, N) gets p. ``near``:
    the target is within _NEAR of the range's width from an end of it. ``ws``: the scratch
    arrays of :func:`_prefix_workspace` for these J (every entry is written before it is read).

    Returns (code, nit, stationarity, E, residual): code 0 certified by Newton, 3 certified
    by successive linearisation from the start (the second run, at most ``fallback`` steps, as
    :func:`maxent.solver.solve` does for the problems Newton-KKT leaves; for a near problem
    also its second start), 2 not certified; th_out (J+2) gets [a_0 = 0, a_1, .., a_J, b] over
    the populated categories."""
    Lc = J + 1
    N = Pf.shape[1]
    (ok, ones, nopw, G, Q, W0, W1, P, Pt, F, Gt, th, Zs, alpha, LR, LRt, R, X, Ep, Dinv, Gs, tA, tB, tV, c, ct, S, rs, dQ, ell, ell_x, Ft, alpha_t) = ws
    nr = J + 2
    nit = 0
    n_newton = min(max_newton, _NEAR_NEWTON) if near else max_newton
    # Newton-KKT from the inexact start, then (if not certified) from a second start: away
    # from the ends, the exact start of the numpy engine (each start subproblem solved to
    # _START_TOL within _INNER_ITER steps, a failed warm start re-solved cold). The inexact
    # start's subproblems are unsolved by design, so the cold re-solve (dual residual >
    # _COLD_RES) cannot tell a failed one, and one can leave Newton too far from the KKT
    # point: trec_covid_r1 run2/16 under GAP(g=0.2,0.8) (count residual 2.2 after 3 dual
    # steps, Newton stalls, and the second run's linearisation oscillates around b = 452.22
    # for 2000 steps; from the exact start Newton certifies it in 5 steps). Near an end
    # (|b| ~ 1e4-1e5, where b can have to grow 40x from the inexact start's) Newton fails from
    # both of these; its second start there is successive linearisation until the
    # stationarity is <= _NEAR_SWITCH.
    for attempt in range(2):
        if attempt == 1 and near:
            ok_, nit_s, stat, El, resl = _linearize_run(J, n_len, Kp, kap, f, c0, v, tol, kkt_tol,
                                                        fallback, _FAR_TOL, P, Pt, th, W0, W1, G, Gt, Q,
                                                        _INNER_ITER, 0, _NEAR_SWITCH)
            nit += nit_s
            if not ok_ and not stat <= _NEAR_SWITCH:
                # all ``fallback`` steps taken: the second run would repeat them
                for i in range(Lc + 1):
                    th_out[i] = th[i]
                _copy(Pt, Pf, Lc, n_len)
                return 2, nit, stat, El, resl
        else:
            # ---- start (as maxent.solver.newton_kkt): two steps of successive linearisation
            # from the count-only distribution, the first being the linear relaxation; each
            # subproblem is the convex dual with W = dE/dp at the iterate, its target moved 99 %
            # of the way to the range of <W, p> when out of it, the step taken with an Armijo
            # line search on the exact penalty -H(p) + mu |E(p) - v| (maxent.solver.linearize)
            ok_, nit_s, stat, El, resl = _linearize_run(J, n_len, Kp, kap, f, c0, v, tol, kkt_tol,
                                                        _START_STEPS, _START_TOL, P, Pt, th, W0, W1, G, Gt,
                                                        Q, _START_ITER if attempt == 0 else _INNER_ITER, 0, 0.0,
                                                        _COARSE if attempt == 0 else 0)
            nit += nit_s
        if ok_:
            for i in range(Lc + 1):
                th_out[i] = th[i]
            _copy(Pt, Pf, Lc, n_len)
            return (3 if attempt == 1 and near else 0), nit, stat, El, resl
        # the last subproblem's solution (exact exponential form) starts Newton
        # ---- Newton on the KKT system (p floored and renormalised, row passes; the residual
        # masked on the floor, the certificate not)
        _floor_normalise(Pt, Lc, n_len, P, Zs)
        for r in range(J):
            alpha[r] = th[r + 1] - th[r]
        b = th[Lc]
        E = _prefix_E_G(P, J, n_len, kap, f, c0, G, Q, True)
        # the log-ratios of Pt = softmax(th, W0) from its exponents (no logarithms; exact also
        # where a p underflowed), ln p_r - ln p_{r+1} = -(alpha_r + b (W0_{r+1} - W0_r))
        for r in range(J):
            a = alpha[r]
            for n in range(n_len):
                LR[r, n] = -(a + b * (W0[r + 1, n] - W0[r, n]))
        merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c, True)
        stalled = False
        polished = False
        for it in range(n_newton):
            if st <= kkt_tol and res <= tol:
                # certify on exact logarithms of the returned p (the steps carry them along),
                # every entry counted; a p on the floor fails it: polish (below)
                _log_ratios(P, J, n_len, LR)
                merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c)
                if st <= kkt_tol and res <= tol and np.isfinite(merit):
                    _to_th(alpha, b, J, th_out)
                    _copy(P, Pf, Lc, n_len)
                    return 0, nit, st, E, res
                stalled = True
            early = (not stalled and not polished and st <= kkt_tol and res > tol and res <= _EARLY_RES)
            if stalled or it == n_newton - 1 or early:
                # polish: one exact linearised subproblem with W = dE/dp(p) (then certify):
                # a stalled or last iterate, or one early (_EARLY_RES)
                polished = True
                _features(G, J, n_len, W1)
                cur = 0.0
                for i in range(Lc):
                    cur += _csum(W1[i], P[i], n_len)
                _to_th(alpha, b, J, th)
                _dual_solve(W1, ones, Lc, n_len, ok, Kp, v - E + cur, th, Pt, 0.1 * tol, _POLISH_ITER, False, nopw, th, np.inf)
                El = _prefix_E_G(Pt, J, n_len, kap, f, c0, Gt, Q, True)
                _features(Gt, J, n_len, W0)
                stl, resl, _ = _linearised_certificate(Pt, W1, W0, Lc, n_len, Kp, th[Lc], El, v)
                nit += 1
                if resl <= tol and stl <= kkt_tol:
                    for i in range(Lc + 1):
                        th_out[i] = th[i]
                    _copy(Pt, Pf, Lc, n_len)
                    return 0, nit, stl, El, resl
                if not early or it == n_newton - 1:
                    break
                # an early polish that did not certify: Newton goes on from its iterate (the
                # polish wrote only scratch: Pt, th, W0, W1, Gt, Q)
            nit += 1
            # ---- Newton direction: X = A^{-1} [F, 1_s (s < J), G']
            _newton_rhs(F, G, J, n_len, R)
            if not _block_thomas(P, J, n_len, b, kap, f, w, R, X, nr, Ep, Dinv, Gs, tA, tB, tV, True):
                stalled = True
                continue
            _schur(X, G, J, n_len, c, E - v, S, rs)
            if not _solve_small(S, rs, J + 1):
                stalled = True
                continue
            db = rs[J]
            _newton_log_step(X, F, G, P, J, n_len, rs, db, b, kap, f, dQ, Ft, ell, Zs)
            # ---- Armijo on the squared KKT residual
            t = 1.0
            acc_ = False
            for ls in range(_LS_STEPS):
                floored = _trial_p(P, ell, t, Lc, n_len, ell_x, Pt, Zs)
                # log-ratios of the trial without logarithms: ln(p'_r / p'_{r+1}) =
                # ln(p_r / p_{r+1}) + x_r - x_{r+1} (the normalisation cancels); exact logs
                # when a probability hit the floor (and before certifying, below)
                if floored > 0:
                    _log_ratios(Pt, J, n_len, LRt)
                else:
                    for r in range(J):
                        for n in range(n_len):
                            LRt[r, n] = LR[r, n] + (ell_x[r, n] - ell_x[r + 1, n])
                for r in range(J):
                    alpha_t[r] = alpha[r] + t * rs[r]
                bt = b + t * db
                Et = _prefix_E_G(Pt, J, n_len, kap, f, c0, Gt, Q, True)
                mt, stt, rest = _kkt_residual(Pt, J, n_len, alpha_t, bt, Gt, Kp, Et, v, Ft, LRt, Zs, ct, True)
                if _newton_accepts(mt, merit, t, stt, rest, kkt_tol, tol):
                    acc_ = True
                    # the trial becomes the iterate (swap buffers)
                    P, Pt = Pt, P
                    G, Gt = Gt, G
                    F, Ft = Ft, F
                    LR, LRt = LRt, LR
                    c, ct = ct, c
                    for r in range(J):
                        alpha[r] = alpha_t[r]
                    b = bt
                    E, merit, st, res = Et, mt, stt, rest
                    break
                t *= 0.5
            stalled = not acc_
            if not acc_:
                # F was overwritten by the trials: recompute it at the iterate
                merit, st, res = _kkt_residual(P, J, n_len, alpha, b, G, Kp, E, v, F, LR, Zs, c, True)
    # second run: successive linearisation from the count-only distribution, for what Newton
    # left from both starts (trec_covid_r1 GAP and AP: no list of the benchmark's 5000)
    ok_, nl, stl, El, resl = _linearize_run(J, n_len, Kp, kap, f, c0, v, tol, kkt_tol, fallback,
                                            _FAR_TOL, P, Pt, th, W0, W1, G, Gt, Q)
    for i in range(Lc + 1):
        th_out[i] = th[i]
    _copy(Pt, Pf, Lc, n_len)
    return (3 if ok_ else 2), nit + nl, stl, El, resl


@njit(cache=True, noalloc=True)
def _newton_rhs(F, G, J, n_len, R):
    """Right-hand sides of the Newton-KKT solve, R[r, n] = [F_rn, 1_{s = r} (s < J), G'_rn]:
    the columns of F and G' (the constant ones, 1_{s = r}, are set once by the caller)."""
    for r in range(J):
        for n in range(n_len):
            R[r, n, 0] = F[r, n]
            R[r, n, J + 1] = G[r, n]


@njit(cache=True, noalloc=True, fastmath={"reassoc", "contract"})
def _schur(X, G, J, n_len, c, e, S, rs):
    """The (J+1) x (J+1) system of the multiplier steps from the solves X (sums over ranks,
    reassociated: they steer the step, the certificate is taken on the iterate): S[r, s] =
    sum_n X_s, S[J, s] = sum G' X_s, right-hand side rs = -(sum_n X_F + c_r, sum G' X_F + e)."""
    for i in range(J + 1):
        rs[i] = 0.0
        for j in range(J + 1):
            S[i, j] = 0.0
    for r in range(J):
        if J == 2:
            # four right-hand sides: one pass over the ranks with the four columns together
            # (contiguous in X; one strided pass per column took 4.0 us per call at N = 1000)
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            t0 = 0.0
            t1 = 0.0
            t2 = 0.0
            t3 = 0.0
            for n in range(n_len):
                gn = G[r, n]
                x0 = X[r, n, 0]
                x1 = X[r, n, 1]
                x2 = X[r, n, 2]
                x3 = X[r, n, 3]
                s0 += x0
                s1 += x1
                s2 += x2
                s3 += x3
                t0 += gn * x0
                t1 += gn * x1
                t2 += gn * x2
                t3 += gn * x3
            rs[r] -= s0
            rs[J] -= t0
            S[r, 0] += s1
            S[J, 0] += t1
            S[r, 1] += s2
            S[J, 1] += t2
            S[r, 2] += s3
            S[J, 2] += t3
        else:
            for q in range(J + 2):
                a0 = 0.0
                a1 = 0.0
                for n in range(n_len):
                    x = X[r, n, q]
                    a0 += x
                    a1 += G[r, n] * x
                if q == 0:
                    rs[r] -= a0
                    rs[J] -= a1
                else:
                    S[r, q - 1] += a0
                    S[J, q - 1] += a1
        rs[r] -= c[r]
    rs[J] -= e


@njit(cache=True, noalloc=True)
def _newton_log_step(X, F, G, P, J, n_len, rs, db, b, kap, f, dQ, Ft, ell, Zs):
    """Newton-KKT step in log space from the solves X and the multiplier steps (rs[:J],
    db): dQ' = X_F + sum_s X_s dalpha_s + X_G db, Ft = F + dalpha + db G' + b (Hess dQ')_r
    (the predicted log-ratio change), ell_i = sum_{r < i} Ft_r centred by p (ell (J+1, N);
    the columns of P sum to 1: every iterate is normalised)."""
    Lc = J + 1
    for r in range(J):
        if J == 2:
            # the four columns of X in one pass (no inner loop over them: it vectorises)
            r0 = rs[0]
            r1 = rs[1]
            for n in range(n_len):
                dQ[r, n] = X[r, n, 0] + X[r, n, 3] * db + X[r, n, 1] * r0 + X[r, n, 2] * r1
        else:
            for n in range(n_len):
                acc = X[r, n, 0] + X[r, n, J + 1] * db
                for s in range(J):
                    acc += X[r, n, 1 + s] * rs[s]
                dQ[r, n] = acc
    # l_{r+1} - l_r = F + dalpha + db G' + b (Hess dQ')_r, sum_i p_i l_i = 0, with
    # (Hess dQ')_{r,n} = kappa'_r (f_n sum_{m<n} dQ'_m + sum_{m>n} f_m dQ'_m) (ell: scratch)
    pre = ell[0]
    post = ell[1]
    for r in range(J):
        k = kap[r]
        _prefix_excl(dQ[r], n_len, pre)
        _suffix_excl_xy(f, dQ[r], n_len, post)
        a = rs[r]
        for n in range(n_len):
            hv = k * (f[n] * pre[n] + post[n])
            Ft[r, n] = F[r, n] + a + db * G[r, n] + b * hv
    for n in range(n_len):
        ell[0, n] = 0.0
        Zs[n] = 0.0
    for i in range(1, Lc):
        for n in range(n_len):
            ell[i, n] = ell[i - 1, n] + Ft[i - 1, n]
            Zs[n] += P[i, n] * ell[i, n]
    for i in range(Lc):
        for n in range(n_len):
            ell[i, n] -= Zs[n]


@njit(cache=True, noalloc=True)
def _floor_normalise(Pin, Lc, n_len, P, Zs):
    """P = max(Pin, _P_FLOOR) renormalised over the categories of each rank (Zs: scratch)."""
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] = max(Pin[i, n], _P_FLOOR)
    _normalise(P, Lc, n_len, Zs)


@njit(cache=True, noalloc=True)
def _normalise(P, Lc, n_len, Zs):
    """The columns of P divided by their sums (Zs: scratch), whole-row passes."""
    for n in range(n_len):
        Zs[n] = P[0, n]
    for i in range(1, Lc):
        for n in range(n_len):
            Zs[n] += P[i, n]
    for n in range(n_len):
        Zs[n] = 1.0 / max(Zs[n], 1e-300)
    for i in range(Lc):
        for n in range(n_len):
            P[i, n] *= Zs[n]


@njit(cache=True, noalloc=True)
def _trial_p(P, ell, t, Lc, n_len, ell_x, Pt, Zs):
    """Newton-KKT trial point p'_i = p_i exp(x_i) / sum_j p_j exp(x_j), x = clip(t ell, +-_MAX_EXP)
    (into ell_x), floored at _P_FLOOR; returns how many were floored. Whole-row passes
    (category-major) that LLVM vectorises."""
    floored = 0
    for i in range(Lc):
        for n in range(n_len):
            x = min(max(t * ell[i, n], -_MAX_EXP), _MAX_EXP)
            ell_x[i, n] = x
            val = P[i, n] * _fexp(x)
            low = not (val > _P_FLOOR)
            floored += low
            Pt[i, n] = _P_FLOOR if low else val
    _normalise(Pt, Lc, n_len, Zs)
    return floored


@njit(cache=True, noalloc=True)
def _to_th(alpha, b, J, th):
    th[0] = 0.0
    for r in range(J):
        th[r + 1] = th[r] + alpha[r]
    th[J + 1] = b


@njit(cache=True, noalloc=True)
def _copy(src, dst, Lc, n_len):
    for i in range(Lc):
        for n in range(n_len):
            dst[i, n] = src[i, n]


@njit(cache=True, noalloc=True)
def _extreme_list(Pf, J, n_len, Kp, top):
    """Pf[:J+1, :n_len] = the deterministic list of slot-form counts Kp, highest category
    first (top) or lowest first."""
    for k in range(J + 1):
        for n in range(n_len):
            Pf[k, n] = 0.0
    n = 0
    for q in range(J + 1):
        k = J - q if top else q
        for _ in range(int(Kp[k] + 0.5)):
            if n < n_len:
                Pf[k, n] = 1.0
            n += 1


@njit(cache=True, noalloc=True)
def _populated(Ki, pop, Kp):
    """The populated categories of one problem (counts Ki (L,)): their indices into pop and
    counts into Kp, in order; returns their number (the slot form's Lc)."""
    Lp = 0
    for z in range(Ki.shape[0]):
        if Ki[z] > 0:
            pop[Lp] = z
            Kp[Lp] = Ki[z]
            Lp += 1
    return Lp


@njit(cache=True)
def _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                       stat_out, ent_out, att_out):
    """Outputs of problem i from its slot form (Lp populated categories pop, p in Pf,
    multipliers th = [a over the slots, b]): P_out[i, n, z - col0] for z >= col0, theta_out[i]
    (a_z at the populated z, b last), residual, stationarity, entropy and E."""
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


@njit(cache=True, nogil=True)
def prefix_batch(js, kappa, f, v, K, lengths, undefined, tol, kkt_tol, max_newton, fallback,
                 P_out, col0, theta_out, code, nit_out, resid_out, ent_out, att_out, stat_out):
    """Solve every problem of a batch of a prefix metric (AP family, GAP).

    js (J0,) category thresholds, kappa (B, J0), f (N,) (``metric.prefix_hessian``); v (B,),
    K (B, L) counts, lengths (B,), undefined (B,). Outputs as :func:`linear_batch`, plus the
    stationarity; theta_out (B, L+1) holds a_z (0 for empty categories) and b.
    code: 0 optimal, 3 optimal by the second run (``fallback`` linearisation steps),
    1 not interior (left to numpy), 2 not certified (left to numpy).
    """
    B, L = K.shape
    N = f.shape[0]
    J0 = js.shape[0]
    pop = np.empty(L, dtype=np.int64)
    Kp = np.empty(L)
    kap = np.zeros(L)
    w = np.zeros(N)
    Pf = np.zeros((L, N))
    th = np.zeros(L + 1)
    ws = _prefix_workspace(1, N)      # scratch of _prefix_one, for the J of the last problem
    ws_J = 1
    for i in range(B):
        n_len = lengths[i]
        Lp = _populated(K[i], pop, Kp)
        J = Lp - 1
        if undefined[i] or J < 1:
            code[i] = 1
            continue
        # thresholds -> slots: r = number of populated categories below j
        c0 = 0.0
        fn = -1.0                       # sum_n f_n (n + 1), once per problem when needed
        for r in range(J):
            kap[r] = 0.0
        for q in range(J0):
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
                c0 += kappa[i, q] * fn
            elif r <= J:
                kap[r - 1] += kappa[i, q]
        for n in range(n_len):
            w[n] = f[n] - f[n + 1] if n + 1 < n_len else f[n]
        # attainable range: highest category first / lowest first
        if J != ws_J:
            ws = _prefix_workspace(J, N)
            ws_J = J
        G = ws[3]
        Q = ws[4]
        _extreme_list(Pf, J, n_len, Kp, True)
        e_top = _prefix_E_G(Pf, J, n_len, kap, f, c0, G, Q, False)
        _extreme_list(Pf, J, n_len, Kp, False)
        e_bot = _prefix_E_G(Pf, J, n_len, kap, f, c0, G, Q, False)
        if not _classify(e_top, e_bot, v[i], False):
            code[i] = 1
            continue
        near = min(v[i] - min(e_top, e_bot), max(e_top, e_bot) - v[i]) < _NEAR * abs(e_top - e_bot)
        cd, it, st, E, res = _prefix_one(Pf, J, n_len, Kp, kap, f, w, c0, v[i], tol, kkt_tol,
                                         max_newton, fallback, th, near, ws)
        nit_out[i] = it
        code[i] = cd
        if cd != 0 and cd != 3:
            continue
        _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                           stat_out, ent_out, att_out)


@njit(cache=True, noalloc=True)
def _face(Pd, W, Lc, n_len, F):
    """Maximum-entropy distribution on the face of the deterministic slot-form list Pd
    (:meth:`maxent.solver._problem.Batch.face`) into F: consecutive ranks whose feature rows
    W[:, n] - W[0, n] differ by at most 1e-12 max|W - W_0| form a class, and every rank of a
    class gets the class-average composition (RR = 1: rank 1 and ranks 2..N)."""
    scale = 0.0
    for k in range(1, Lc):
        for n in range(n_len):
            scale = max(scale, abs(W[k, n] - W[0, n]))
    scale += 1e-300
    start = 0
    for n in range(1, n_len + 1):
        if n < n_len:
            d = 0.0
            for k in range(1, Lc):
                d = max(d, abs((W[k, n] - W[0, n]) - (W[k, n - 1] - W[0, n - 1])))
            if not d > 1e-12 * scale:
                continue
        for k in range(Lc):
            tot = 0.0
            for m in range(start, n):
                tot += Pd[k, m]
            avg = tot / (n - start)
            for m in range(start, n):
                F[k, m] = avg
        start = n


@njit(cache=True, nogil=True)
def cascade_batch(s_all, c, v, K, lengths, undefined, tol, kkt_tol, max_newton, steps, switch, cert_hi,
                  P_out, col0, theta_out, code, nit_out, resid_out, ent_out, att_out, stat_out):
    """Solve every problem of a batch of a cascade metric (RR, ERR; ``metric.cascade_form``):
    successive linearisation (:func:`_linearize_run`, at most ``steps`` subproblems) until the
    stationarity is <= ``switch``, then Newton-KKT (:func:`_cascade_newton`, at most
    ``max_newton`` steps); if Newton fails, linearisation from the start to the end.

    s_all (L,) satisfaction per category (non-decreasing), c (N,) rank weights; v (B,),
    K (B, L) counts, lengths (B,), undefined (B,). Outputs as :func:`prefix_batch`.
    code: 0 optimal, 1 not interior (left to numpy), 2 not certified (left to numpy), 4 (5
    where the range is degenerate) a target at the maximum, a boundary when ``cert_hi`` (the
    metric's certified maximum, :func:`maxent.solver._problem.certified_ends`) or the range
    is degenerate, as :func:`maxent.solver._solve_chunk` classifies it: p is the face of the
    extreme list (:func:`_face`) if it attains the target to max(_RTOL max(1, |v|), tol / 10),
    else the extreme list itself (RR: half of trec_covid_r1's lists have RR = 1; their numpy
    path took 0.6 of the 1.2 s of bench_solver's RR batch).
    """
    B, L = K.shape
    N = c.shape[0]
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
    cws_J = 1       # numba types cws before the loop: a workspace for J = 1, replaced when J differs
    cws = _cascade_workspace(cws_J, N)
    for i in range(B):
        n_len = lengths[i]
        Lp = _populated(K[i], pop, Kp)
        for k in range(Lp):
            sp[k] = s_all[pop[k]]
        J = Lp - 1
        if undefined[i] or J < 1:
            code[i] = 1
            continue
        # attainable range: highest category first / lowest first
        _extreme_list(Pf, J, n_len, Kp, True)
        e_top = _cascade_E_W(Pf, Lp, n_len, sp, c, W0, False, Sc)
        _extreme_list(Pf, J, n_len, Kp, False)
        e_bot = _cascade_E_W(Pf, Lp, n_len, sp, c, W0, False, Sc)
        if not _classify(e_top, e_bot, v[i], False):
            code[i] = 1
            hi = max(e_top, e_bot)
            degenerate = hi - min(e_top, e_bot) <= _RTOL * max(1.0, abs(hi))
            if abs(v[i] - hi) <= _RTOL * max(1.0, abs(hi)) and (cert_hi or degenerate):
                # the maximum: p on the face of the extreme list attaining it (P)
                _extreme_list(P, J, n_len, Kp, e_top >= e_bot)
                _cascade_E_W(P, Lp, n_len, sp, c, W0, True, Sc)
                _face(P, W0, Lp, n_len, Pf)
                E = _cascade_E_W(Pf, Lp, n_len, sp, c, W0, False, Sc)
                if not abs(E - v[i]) <= max(_RTOL * max(1.0, abs(v[i])), 0.1 * tol):
                    _copy(P, Pf, Lp, n_len)
                    E = hi
                res = abs(E - v[i])
                for k in range(Lp):
                    res = max(res, abs(_csum1(Pf[k], n_len) - Kp[k]))
                for k in range(Lp + 1):
                    th[k] = 0.0
                code[i] = 5 if degenerate else 4
                _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, 0.0, E, P_out, theta_out,
                                   resid_out, stat_out, ent_out, att_out)
            continue
        # successive linearisation until the stationarity is <= _CASCADE_SWITCH, then Newton-KKT
        ok_, it, st, E, res = _linearize_run(J, n_len, Kp, sp, c, 0.0, v[i], tol, kkt_tol, steps,
                                             _CASCADE_FAR_TOL, P, Pf, th, W0, W1, G, Gt, Q, _INNER_ITER, 1,
                                             switch, _COARSE)
        if not ok_ and st <= switch:
            if J != cws_J:
                cws = _cascade_workspace(J, N)
                cws_J = J
            ok_, itn, st, E, res = _cascade_newton(Pf, J, n_len, Kp, sp, c, v[i], tol, kkt_tol,
                                                   max_newton, th, W0, cws)
            it += itn
            if not ok_:
                # Newton failed: successive linearisation to the end (the numpy method)
                ok_, itl, st, E, res = _linearize_run(J, n_len, Kp, sp, c, 0.0, v[i], tol, kkt_tol, steps,
                                                      _FAR_TOL, P, Pf, th, W0, W1, G, Gt, Q, _INNER_ITER, 1)
                it += itl
        nit_out[i] = it
        if not ok_:
            code[i] = 2
            continue
        code[i] = 0
        _write_slot_result(i, Pf, Lp, n_len, pop, col0, th, res, st, E, P_out, theta_out, resid_out,
                           stat_out, ent_out, att_out)
