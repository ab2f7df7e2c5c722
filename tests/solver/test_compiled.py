"""The compiled engine of the maximum-entropy solver (maxent.solver._engine) against the numpy solver.

Oracles: the numpy solver of the tests (:func:`tests.numpy_solver.solve_numpy`, itself tested
against cvxpy, SLSQP and its own linearisation in test_solver.py / test_newton_kkt.py) on real lists of the shared
collections; numpy's exp; and, for every ``optimal`` problem of the compiled engine, its
certificate recomputed in numpy on the returned p (constraint residual from
``metric.expectation``, log-odds stationarity from ``metric.gradient`` and the returned
multipliers).
"""
from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.metrics import METRICS, parse_measure
from maxent.ranked import RankedLists
from maxent.solver import count_constraints, solve
from tests._realdata import BINARY_THRESHOLD, COLLECTIONS, ranked
from tests._projection import project_onto_constraints
from tests.numpy_solver import solve_numpy

def test_fast_exp_matches_numpy():
    """Oracle: numpy's exp. The call-free exp of the kernels is within 2 ulp over the range
    the solver uses ([-700, 30], plus the whole range of normal results)."""
    from maxent.solver._engine import fexp_array

    rng = np.random.default_rng(0)
    x = np.concatenate((rng.uniform(-700, 30, 200_000), rng.uniform(-708, 709, 20_000),
                        [0.0, -1e-300, 1e-17, np.log(2), -np.log(2)]))
    np.testing.assert_allclose(fexp_array(x), np.exp(x), rtol=4.5e-16, atol=0)


def test_fast_exp_normal_is_fast_exp():
    """The softmax's exp (2^k in one product, for exponents clamped to [-700, 0]) gives the
    same bits as the general one wherever 2^k is normal: both scalings are exact."""
    from maxent.solver._engine import fexp_array

    rng = np.random.default_rng(1)
    x = np.concatenate((rng.uniform(-700, 0, 200_000), rng.uniform(-700, 700, 20_000),
                        [-700.0, 0.0, -1e-300, 1e-17, np.log(2), -np.log(2), 700.0]))
    np.testing.assert_array_equal(fexp_array(x, True), fexp_array(x))


def test_fast_log_matches_numpy():
    """Oracle: numpy's log. The vectorised logarithm of the kernels is within 2 ulp over the
    positive normal doubles (every power of 2, the mantissa's halving point sqrt(2) and its
    neighbours, 1 +- ulp); where it does not apply (0, subnormal, inf, NaN) the log-ratios
    and the entropy still give numpy's values."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(1)
    r2 = np.sqrt(2.0)
    x = np.concatenate((10.0 ** rng.uniform(-307, 308, 200_000), rng.uniform(0.0, 1.0, 100_000),
                        rng.uniform(0.7, 1.5, 100_000), 2.0 ** np.arange(-1022, 1024),
                        [1.0, r2, np.nextafter(r2, 3.0), np.nextafter(r2, 0.0), 1.0 - 2 ** -53, 1.0 + 2 ** -52,
                         np.finfo(float).tiny, np.finfo(float).max]))
    x = x[x > 0]
    got, want = C.log_array(x), np.log(x)
    ulp = np.abs(got - want) / np.spacing(np.abs(want))
    assert ulp[want != 0].max() <= 2.0 and np.all(got[want == 0] == 0.0)
    P = np.array([[0.5, 1.0, 1e-320, 0.2], [0.0, 0.0, 0.3, 0.1], [0.5, 0.0, 0.7, 0.7]])
    LR = np.zeros((2, 4))
    C._log_ratios(P, 2, 4, LR)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(LR, np.log(P[:-1] / P[1:]))
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.nansum(P * np.log(P))
    assert abs(C._entropy(P, 3, 4) - h) <= 1e-15 * abs(h)


def _numpy_certificate(m, res, lists, v):
    """Residual and log-odds stationarity of the returned p recomputed in numpy, (B,) each.

    Residual: counts (exactly rounded sums) and |E[M](p) - v| from ``metric.expectation``.
    Stationarity: max over ranks inside the list and populated grades z (p_n(z), p_n(ref) >
    1e-100, below which the kernels flush p to 0 or floor it) of
    |ln p_n(z)/p_n(ref) - (a_z + b (W_n(z) - W_n(ref)))| minus the rounding of this
    recomputation (a binary 1 - p near 1 has relative error eps / (1 - p):
    1e-15 (1/p_n(z) + 1/p_n(ref)), and 1e-13 |b| max|W| for b W), W = dE/dp at the returned p."""
    p = res.p
    K = res.K
    B = len(res)
    N = lists.grades.shape[1]
    active = np.arange(N)[None, :] < lists.lengths[:, None]
    if p.ndim == 2:
        cats = np.stack([(1.0 - p) * active, p], axis=2)
        Wq = m.gradient(p, lists)
        W = np.stack([np.zeros_like(Wq), Wq], axis=2)
    else:
        cats = p
        W = m.gradient(p, lists)
    # exactly rounded sums (a strided numpy sum over 1000 ranks errs by ~2e-11)
    sums = np.array([[math.fsum(cats[i, :, z]) for z in range(cats.shape[2])] for i in range(B)])
    counts = np.abs(sums - K).max(axis=1)
    resid = np.maximum(counts, np.abs(m.expectation(p, lists) - v))
    L = cats.shape[2]
    ok = K > 0
    ref = np.argmax(ok, axis=1)
    mult = res.multipliers
    a = np.zeros((B, L))
    a[:, 1:] = mult[:, :-1]
    a = a - np.take_along_axis(a, ref[:, None], axis=1)
    b = mult[:, -1]
    pr = np.take_along_axis(cats, ref[:, None, None], axis=2)
    Wr = np.take_along_axis(W, ref[:, None, None], axis=2)
    use = active[:, :, None] & ok[:, None, :] & (cats > 1e-100) & (pr > 1e-100)
    if p.ndim == 2:
        # a binary p within 1e-13 of 1: its complement 1 - p, recomputed here from the stored
        # p, keeps no digits (robust03 RBP, b W = 175: 1 - p = 1e-76 is stored as p = 1.0)
        use &= ((1.0 - p) > 1e-13)[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        F = np.log(cats / pr) - (a[:, None, :] + b[:, None, None] * (W - Wr))
        slack = 1e-15 * (1.0 / cats + 1.0 / pr) + 1e-13 * np.abs(b)[:, None, None] * np.abs(W).max()
        stat = np.where(use, np.abs(F) - slack, 0.0).max(axis=(1, 2))
    return resid, stat


def _strictly_interior(m, v, lists, count):
    """Targets strictly inside the attainable range (not within BOUNDARY_RTOL of an end; the
    numpy solver's classification): the problems the kernels solve."""
    from maxent.solver._problem import BOUNDARY_RTOL, Batch

    batch = Batch(m, v, lists, count_constraints(m, lists, count))
    e = np.stack([batch.expectation(batch.extreme(top)) for top in (True, False)])
    hi, lo = e.max(axis=0), e.min(axis=0)
    t = m.binary_threshold if not m.GRADED else 1
    return ((v - lo > BOUNDARY_RTOL * np.maximum(1.0, np.abs(lo)))
            & (hi - v > BOUNDARY_RTOL * np.maximum(1.0, np.abs(hi))) & (lists.n_rel(t) > 0))


def _rounding_only(m, res, lists, limit):
    """Problems whose log-odds stationarity the rounding allowance of
    ``linearize.stationarity`` alone could hide: |b| 16 ulp(max |dE/dp|) > limit."""
    from tests.numpy_solver.linearize import _W_ULPS

    W = np.abs(m.gradient(res.p, lists)).reshape(len(res), -1).max(axis=1)
    b = np.abs(res.multipliers[:, -1])
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(b), b * _W_ULPS * np.finfo(float).eps * W, 0.0) > limit


def _compare(collection, count, names, n, seed):
    lists = ranked(collection)
    lists = lists.take(np.sort(np.random.default_rng(seed).choice(len(lists), n, replace=False)))
    for name in names:
        m = parse_measure(name)
        v = m.value(lists)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ref = solve_numpy(m, v, lists, count=count)
            new = solve(m, v, lists, count=count)
        # the kernels solved the interior problems: no strictly interior target (the numpy
        # solver's classification) was classified before them
        inside = _strictly_interior(m, v, lists, count)
        before = ("target at the maximum attainable value", "target at the minimum attainable value",
                  "target above the attainable range; p is the nearest deterministic extreme list",
                  "target below the attainable range; p is the nearest deterministic extreme list")
        assert inside.any() and not np.isin(new.message[inside], before).any(), name
        assert new.method == ref.method or (name.startswith("GAP") and new.method == "newton-kkt") or (
            ref.method == "linearize" and new.method == "linearize+newton-kkt")
        # the same statuses, except where the numpy solver found no KKT point (not_converged,
        # or an extreme list within tol: "no interior solution found") and the kernels
        # certified one (checked below with every optimal problem): numpy-solver RBP lists
        # with |b| ~ 1e8, ERR lists with |b| ~ 1e10
        none = (ref.status == "not_converged") | np.array(["no interior solution" in x for x in ref.message])
        better = none & (new.status == "optimal")
        same = ~better
        np.testing.assert_array_equal(new.status[same], ref.status[same], err_msg=name)
        assert better.sum() <= max(1, len(new) // 100), (name, better.sum())
        tol_h = 1e-9 * np.maximum(1.0, np.abs(ref.entropy))
        # where the numpy solver's certificate is rounding-limited (ERR near its maximum,
        # |b| ~ 1e8-1e10) its point may miss the target inside the tolerance, which is worth
        # |b| |E - v| nats: there the oracle is its point moved onto the constraints exactly
        # (and p is not compared: the numpy solver stops on its rounding floor, at 1e-9 of
        # the entropy p may still move by ~1e-5)
        limited = same & (ref.status == "optimal") & _rounding_only(m, ref, lists, 1e-7)
        K = count_constraints(m, lists, count)
        for i in np.flatnonzero(limited):
            _, h = project_onto_constraints(m, lists.take([i]), ref.p[i], K[i], v[i], ref.multipliers[i, -1])
            # plus the worth of E's own rounding, |b| x 4 ulps of v: trec_dl19_passage ERR
            # list 139 (|b| = 1.5e9) ends with E one ulp above v, 3.4e-7 nats (1.1e-9 of H)
            ulps = abs(new.multipliers[i, -1]) * 4.0 * np.spacing(abs(v[i]))
            assert new.entropy[i] >= h - tol_h[i] - ulps, (name, i, new.entropy[i], h, ref.entropy[i])
        same &= ~limited
        # a target on the deterministic minimum of RR or ERR (ERR@20 = 0) is solved, since a
        # fractional list could go below it; where it is the minimum after all, the numpy
        # solver's point (|b| ~ 1e9) buys ~1e-7 nats with the residual tolerance, and the
        # oracle is the exact maximum-entropy distribution on the face of the extreme list
        if m.SOLVER_FORM == "cascade":
            from maxent.solver._problem import Batch, entropy

            batch = Batch(m, v, lists, K)
            worst = batch.extreme(False)
            at_min = same & (np.abs(v - batch.expectation(worst)) <= 1e-11 * np.maximum(1.0, np.abs(v)))
            face = entropy(batch.face(worst))
            assert (new.entropy >= face - tol_h)[at_min].all(), name
            same &= ~at_min
        assert (new.entropy >= ref.entropy - tol_h)[same].all(), name
        np.testing.assert_allclose(new.p[same], ref.p[same], rtol=0, atol=1e-6, err_msg=name)
        opt = new.status == "optimal"
        assert (new.residual[opt] <= 1e-10).all() and (new.stationarity[opt] <= 1e-9).all(), name
        resid, stat = _numpy_certificate(m, new, lists, v)
        # the kernels certify counts summed in compensated blocks, whose error is at most
        # 64 eps K_z (1.4e-11 at K = 1000): recomputed exactly (math.fsum) a certified
        # residual may exceed 1e-10 by that much (trec_dl19_passage ERR, total counts: kernel
        # 9.993e-11, exact 1.0004e-10, since the prefix and cascade runs start from blocks of ranks)
        sum_err = 64 * np.finfo(float).eps * new.K.max(axis=1)
        assert (resid[opt] <= 1e-10 + sum_err[opt]).all(), (name, (resid - sum_err)[opt].max())
        assert (stat[opt] <= 1e-9).all(), (name, stat[opt].max())
        np.testing.assert_allclose(new.attained[opt], m.expectation(new.p, lists)[opt], rtol=0, atol=1e-12)


@pytest.mark.parametrize("collection", COLLECTIONS)
@pytest.mark.parametrize("count", ["retrieved", "total"])
def test_compiled_equals_numpy_on_real_lists(collection, count):
    """On 25 random real lists per collection (depth 1000; 12 of trec_dl19_passage, whose numpy
    solves take longest, and 400 of each in the slow variant), binary (AP at the collection's
    threshold, AP@10, P@10, R-prec, RR) and graded (nDCG, nDCG@10, GAP, ERR, ERR@20) metrics under both count
    constraints: the same statuses as the numpy solver, entropies never lower (1e-9
    relative), p within 1e-6, every optimal problem certified by numpy on the returned p."""
    t = BINARY_THRESHOLD[collection]
    binary = ["AP" if t == 1 else f"AP(rel={t})", f"AP@10(rel={t})", f"P@10(rel={t})", f"R-prec(rel={t})",
              f"RR(rel={t})"]
    n = 12 if collection == "trec_dl19_passage" else 25
    _compare(collection, count, binary + ["nDCG", "nDCG@10", "GAP", "ERR", "ERR@20"], n, 21)


@pytest.mark.slow
@pytest.mark.parametrize("collection", COLLECTIONS)
@pytest.mark.parametrize("count", ["retrieved", "total"])
def test_compiled_equals_numpy_on_real_lists_400(collection, count):
    """As above on 400 random real lists per collection, plus RBP and DCG."""
    t = BINARY_THRESHOLD[collection]
    binary = ["AP" if t == 1 else f"AP(rel={t})", f"AP@10(rel={t})", f"P@10(rel={t})", f"R-prec(rel={t})",
              f"RBP(rel={t})", f"RR(rel={t})"]
    _compare(collection, count, binary + ["nDCG", "nDCG@10", "DCG", "GAP", "ERR"], 400, 22)


def _toy():
    g = np.array([[2, 0, 1, 0, 0, 1], [0, 1, 0, 2, 0, 0], [1, 1, 0, 0, 0, 0]])
    return RankedLists.from_grades(g, np.tile([10, 3, 2], (3, 1)))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_small_dense_solve_and_inverse(n):
    """The block-Thomas helpers (_solve_small, _invert_small: Gaussian elimination with partial
    pivoting) against numpy.linalg, on random and row-permuted systems; singular ones refused."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(n)
    for trial in range(20):
        A = rng.normal(size=(n, n))
        if trial % 2:
            A = A[rng.permutation(n)] * np.where(np.eye(n, dtype=bool), 1e-8, 1.0)   # pivoting needed
        x = rng.normal(size=n)
        y = x.copy()
        assert C._solve_small(A.copy(), y, n)
        assert np.allclose(y, np.linalg.solve(A, x), rtol=1e-9, atol=1e-9)
        inv = np.empty((n, n))
        assert C._invert_small(A.copy(), inv, n)
        assert np.allclose(inv, np.linalg.inv(A), rtol=1e-8, atol=1e-8)
    S = np.zeros((n, n))
    assert not C._solve_small(S.copy(), np.ones(n), n) and not C._invert_small(S.copy(), np.empty((n, n)), n)


def test_slow_newton_kkt_progress_is_not_cut_off():
    """A list of robust03 (run THUIRr0301, topic 615: one grade-2 and nine grade-1 documents in
    1000) under GAP(g=0.1,0.9), the weight on the single grade-2 document: Newton-KKT takes
    small damped steps for 20 iterations, then converges quadratically (25 steps). A cap of
    20 Newton steps would send it to the second run, where successive linearisation fails
    (not_converged after 2000 steps). Oracle: the certificate recomputed in numpy on the
    returned p."""
    g = np.zeros((1, 1000), dtype=np.int64)
    g[0, [0, 1, 4, 5, 14, 20, 90, 99, 237, 241]] = [2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    lists = RankedLists.from_grades(g, np.array([[815, 10, 2]]))
    m = parse_measure("GAP(g=0.1,0.9)")
    v = m.value(lists)
    assert abs(v[0] - 0.43739249) < 1e-8
    res = solve(m, v, lists)
    assert res.status[0] == "optimal" and res.message[0] == "KKT point"
    resid, stat = _numpy_certificate(m, res, lists, v)
    assert resid[0] <= 1e-10 and stat[0] <= 1e-9


def test_unsolved_warm_started_subproblem_is_solved_again_cold():
    """A list of trec_covid_r1 (run2, topic 16: one grade-2 and ten grade-1 documents in 500)
    under GAP(g=0.2,0.8), found by check_convergence's GAP(g) grid: the relaxation's target
    sits at the edge of its range (b ~ 5550) and the second linearisation subproblem,
    warm-started there, was left unsolved (p off the counts by 51 documents, E = 0.62 above
    the top of the range), so Newton-KKT started from it stalled and the second run stayed
    there (not_converged after 2000 steps). Solved again from the
    count-only multipliers it converges: here the numpy solver's Newton-KKT (the compiled
    kernels: the test at the end). Oracle: the certificate recomputed in numpy on the
    returned p."""
    m, v, lists = _run2_16()
    res = solve_numpy(m, v, lists, method="newton-kkt")
    assert res.status[0] == "optimal" and res.message[0] == "KKT point" and res.nit[0] <= 20
    resid, stat = _numpy_certificate(m, res, lists, v)
    assert resid[0] <= 1e-10 and stat[0] <= 1e-9


def _run2_16():
    """trec_covid_r1 run2/16 under GAP(g=0.2,0.8): (metric, target, lists)."""
    g = np.zeros((1, 500), dtype=np.int64)
    g[0, [0, 1, 2, 3, 4, 5, 6, 7, 17, 127, 492]] = [1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    lists = RankedLists.from_grades(g, np.array([[287, 42, 11]]))
    m = parse_measure("GAP(g=0.2,0.8)")
    return m, m.value(lists), lists


@pytest.mark.parametrize("gains", [(0.0, 1.0, 3.0), (0.0, 1.0), (0.0, 1.0, 3.0, 7.0, 15.0)])
def test_softmax_power_path_against_general_path(gains):
    """Oracle: the general softmax (one exp per rank and category). DCG-like features
    W[z, n] = g_z w_n are recognised; the power path (one exp per rank, integer powers) gives
    the same p (1e-12 relative) and sum of log-partitions (1e-12 relative) for moderate
    multipliers; beyond its exponent range (|b| large) the guard leaves the general path
    (results identical), and features that are not integer multiples are not recognised."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(len(gains))
    L, N = len(gains), 1000
    w = 1.0 / np.log2(np.arange(2, N + 2)) / 7.3
    W = np.ascontiguousarray(np.outer(gains, w))
    c = np.ones(N)
    c[-100:] = 3.0                      # columns standing for several ranks
    ok = np.ones(L, dtype=np.uint8)
    ok[-1] = L <= 2                     # an empty category when there are several
    pw = np.empty(L + 3)
    C._power_structure(W, L, N, pw)
    assert pw[L] == 1 and list(pw[:L]) == list(gains) and pw[L + 1] == w.min() and pw[L + 2] == w.max()
    none = np.full(L + 3, -1.0)
    taken = 0
    for b in (-300.0, -20.0, 0.5, 7.0, 60.0, 2e3, -5e4):
        theta = np.append(rng.normal(0, 2, L), b)
        P1, P2 = np.zeros((L, N)), np.zeros((L, N))
        s1, _ = C._softmax(W, c, L, N, ok, theta, P1, np.empty(N), np.empty(N), pw)
        s2, _ = C._softmax(W, c, L, N, ok, theta, P2, np.empty(N), np.empty(N), none)
        x = theta[:L, None] + b * W
        span = x[ok].max() - x[ok].min()
        if span <= C.CONSTANTS["POW_RANGE"]:
            taken += 1
            np.testing.assert_allclose(P1, P2, rtol=1e-12, atol=1e-300)
            assert abs(s1 - s2) <= 1e-12 * abs(s2)
        else:
            assert np.array_equal(P1, P2) and s1 == s2
    assert 2 <= taken < 7
    W2 = W.copy()
    if L > 2:
        W2[-1, 5] *= 1.001              # not a multiple any more
    else:
        W2[0, 5] = 0.5 * W[1, 5]        # a feature for the lowest grade at one rank only
    C._power_structure(W2, L, N, pw)
    assert pw[L] == -1


def test_three_category_softmax_pass_against_the_row_passes_and_numpy():
    """Oracles: the row passes (the same three categories as four with the fourth not
    allowed: bit-identical p and sums) and numpy's log-sum-exp (1e-13). The fused pass of
    three categories with general features (GAP's two slots), multipliers from small to
    large enough to push exponents below the flush-to-zero point."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(3)
    N = 997
    W3 = np.zeros((3, N))
    W3[1:] = rng.normal(size=(2, N)).cumsum(axis=1) / 30.0
    W4 = np.vstack([W3, rng.normal(size=(1, N))])
    c = np.ones(N)
    c[-50:] = 2.0
    none = np.full(7, -1.0)
    for b in (0.3, -4.0, 40.0, -900.0):
        th3 = np.array([0.0, rng.normal(), rng.normal(), b])
        th4 = np.array([0.0, th3[1], th3[2], 5.0, b])
        P3, P4 = np.full((3, N), 9.0), np.full((4, N), 9.0)
        s3, a3 = C._softmax(W3, c, 3, N, np.ones(3, dtype=np.uint8), th3, P3, np.empty(N), np.empty(N), none)
        s4, a4 = C._softmax(W4, c, 4, N, np.array([1, 1, 1, 0], dtype=np.uint8), th4, P4, np.empty(N),
                            np.empty(N), none)
        assert np.array_equal(P3, P4[:3]) and (P4[3] == 0.0).all()
        assert s3 == s4 and a3 == pytest.approx(a4, rel=1e-14)
        x = th3[:3, None] + b * W3
        lse = x.max(axis=0) + np.log(np.exp(x - x.max(axis=0)).sum(axis=0))
        want = np.exp(x - lse)
        want[x - x.max(axis=0) < C.CONSTANTS["EXP_MIN"]] = 0.0
        np.testing.assert_allclose(P3, want / want.sum(axis=0), rtol=1e-13, atol=1e-300)
        assert s3 == pytest.approx(np.dot(c, lse), rel=1e-13)
    # ties: two equal exponents, above or below the third, and three equal ones; a non-zero
    # first row
    Wt = np.vstack([rng.normal(size=(1, N)), W3[1], W3[1]])
    Wt[:, :40] = 0.25
    for a, b in ((0.7, 2.0), (-0.7, 2.0), (0.0, -3.0)):
        th3 = np.array([0.0, a, a, b])
        th4 = np.array([0.0, a, a, 5.0, b])
        W4 = np.vstack([Wt, np.zeros((1, N))])
        P3, P4 = np.full((3, N), 9.0), np.full((4, N), 9.0)
        C._softmax(Wt, c, 3, N, np.ones(3, dtype=np.uint8), th3, P3, np.empty(N), np.empty(N), none)
        C._softmax(W4, c, 4, N, np.array([1, 1, 1, 0], dtype=np.uint8), th4, P4, np.empty(N), np.empty(N), none)
        assert np.array_equal(P3, P4[:3]) and np.array_equal(P3[1], P3[2])
        if a == 0.0:
            assert (P3[:, :40] == 1.0 / 3.0).all()


@pytest.mark.parametrize("N", [40, 200, 1000])
def test_log_partition_over_blocks_of_ranks_against_numpy(N):
    """A coarse subproblem's columns stand for blocks of ranks (weights c_n = block sizes of
    _rank_blocks: 1 for the first ranks, then 2, 4, ...): sum_n c_n lse_n, whose terms with
    c_n != 1 take their logarithms chunk by chunk, against numpy's log-sum-exp (1e-13), for
    the three-category pass, the row passes (four categories) and an all-ones c."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(N)
    bnd = np.zeros(N + 1, dtype=np.int64)
    M = C._rank_blocks(N, 16, bnd)
    c = np.diff(bnd[:M + 1]).astype(float)
    assert (c[:min(M, 32)] == 1).all() and (M <= 32 or c.max() > 1)
    none = np.full(8, -1.0)
    for L in (3, 4):
        W = rng.normal(size=(L, M)).cumsum(axis=1) / 10.0
        for b in (0.4, -6.0, 300.0):
            th = np.append(rng.normal(size=L), b)
            th[0] = 0.0
            for cc in (c, np.ones(M)):
                P = np.empty((L, M))
                s, _ = C._softmax(W, cc, L, M, np.ones(L, dtype=np.uint8), th, P, np.empty(M), np.empty(M), none)
                x = th[:L, None] + b * W
                lse = x.max(axis=0) + np.log(np.exp(x - x.max(axis=0)).sum(axis=0))
                assert s == pytest.approx(np.dot(cc, lse), rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("n_len", [0, 1, 5, 15, 16, 17, 19, 100, 1000, 1003])
def test_scan_and_sum_helpers(n_len):
    """Oracles: numpy's cumsum / sum / max (and math.fsum for the compensated sums) for the
    kernels' four-chain prefix and suffix sums, compensated block sums and |x| maximum,
    over lengths around the segment split (< 16 sequential, 16+ in four segments)."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(n_len)
    x = np.append(rng.uniform(0, 2, n_len), [7.0, 7.0])     # entries past n_len are ignored
    y = np.append(rng.normal(size=n_len), [7.0, 7.0])
    xs, ys = x[:n_len], y[:n_len]
    out = np.full(n_len + 2, -1.0)
    C._prefix_excl(x, n_len, out)
    np.testing.assert_allclose(out[:n_len], np.cumsum(xs) - xs, rtol=1e-13, atol=1e-13)
    assert (out[n_len:] == -1.0).all()
    out = np.full(n_len + 2, -1.0)
    C._suffix_excl_xy(x, y, n_len, out)
    want = (xs * ys)[::-1].cumsum()[::-1] - xs * ys
    np.testing.assert_allclose(out[:n_len], want, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(xs * ys).sum()))
    yy = y.copy()
    C._suffix_excl_xy(x, yy, n_len, yy)        # in place (out = y), as _prefix_E_G uses it
    np.testing.assert_allclose(yy[:n_len], want, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(xs * ys).sum()))
    assert abs(C._csum1(x, n_len) - math.fsum(xs)) <= 1e-15 * max(1.0, np.abs(xs).sum())
    assert abs(C._csum(x, y, n_len) - math.fsum(xs * ys)) <= 1e-14 * max(1.0, np.abs(xs * ys).sum())
    assert abs(C._csum2(x, y, x, n_len) - math.fsum(xs * ys * xs)) <= 1e-14 * max(1.0, np.abs(xs * ys * xs).sum())
    # the reassociated sums and product over [n0, n1) (views indexed from 0), against numpy
    n0, n1 = n_len // 3, n_len - n_len // 4
    cw = np.where(np.arange(n_len + 2) % 7 == 3, 2.0, 1.0)     # weights != 1 leave the product
    assert np.isclose(C._rsum_cx(x, y, n0, n1), np.dot(xs[n0:n1], ys[n0:n1]), rtol=1e-13, atol=1e-13)
    assert np.isclose(C._rsum_cxy(x, y, y, n0, n1), np.sum(xs[n0:n1] * ys[n0:n1] ** 2), rtol=1e-13, atol=1e-13)
    assert np.isclose(C._rsum(y, n0, n1), ys[n0:n1].sum(), rtol=1e-13, atol=1e-13)
    assert np.isclose(C._rprod(x, cw, n0, n1), np.prod(np.where(cw[n0:n1] == 1.0, xs[n0:n1], 1.0)), rtol=1e-12)
    assert C._absmax(y, n_len) == (np.abs(ys).max() if n_len else 0.0)
    d, a = C._absmax_diff(x, y, n_len)
    assert d == (np.abs(xs - ys).max() if n_len else 0.0) and a == (np.abs(xs).max() if n_len else 0.0)
    if n_len:
        assert C._minmax(y, n_len) == (ys.min(), ys.max())


@pytest.mark.parametrize("n_len", [0, 1, 16, 17, 40, 1000, 1003])
@pytest.mark.parametrize("ratio", [4, 16])
def test_rank_blocks_and_block_means(n_len, ratio):
    """The coarse start's blocks (:func:`maxent.solver._engine._rank_blocks`): they tile
    ranks 0..n_len-1 in order, the block starting at a max(1, a // ratio) long (the last one
    cut at n_len), so the first 2 ratio ranks alone (93 blocks at N = 1000 for ratio 16); the
    block means and sizes against numpy's."""
    from maxent.solver import _engine as C

    bnd = np.full(n_len + 2, -7, dtype=np.int64)
    M = C._rank_blocks(n_len, ratio, bnd)
    b = bnd[:M + 1]
    assert b[0] == 0 and b[-1] == n_len and (np.diff(b) >= 1).all() and (M == 0) == (n_len == 0)
    assert (np.diff(b) <= np.maximum(1, b[:-1] // ratio)).all()
    assert (np.diff(b)[b[:-1] < ratio] == 1).all()
    np.testing.assert_array_equal(np.diff(b)[:-1], np.maximum(1, b[:-2] // ratio))
    assert (np.diff(b)[b[:-1] < 2 * ratio] == 1).all()
    if (n_len, ratio) == (1000, 16):
        assert M == 93
    if M:
        rng = np.random.default_rng(n_len)
        W = rng.normal(size=(3, n_len + 2))
        cc, Wc = np.empty(M), np.empty((3, M))
        C._block_means(W, 3, bnd, M, cc, Wc)
        np.testing.assert_array_equal(cc, np.diff(b))
        want = np.array([[W[z, b[j]:b[j + 1]].mean() for j in range(M)] for z in range(3)])
        np.testing.assert_allclose(Wc, want, rtol=1e-13, atol=1e-15)


def test_extreme_steer_is_the_extreme_value_summed_reassociated():
    """_linearize_run's range of <W, p> (the deterministic lists filling the categories in
    preference order, both ways): oracle, the extreme list built in numpy and math.fsum over
    its entries; _extreme_value (strict sums) and _extreme_steer (reassociated) both within
    a few ulps of the sum of |entries|, also with counts that overrun the list."""
    import math

    from maxent.solver import _engine as C

    rng = np.random.default_rng(3)
    for n_len, K in [(1000, [900.0, 70.0, 30.0]), (37, [20.0, 0.0, 17.0]), (5, [1.0, 3.0, 4.0])]:
        K = np.array(K)
        W = rng.normal(size=(3, n_len + 3))
        pref = np.array([2, 1, 0])
        for top in (True, False):
            order = pref if top else pref[::-1]
            cats = np.repeat(order, K[order].astype(int))[:n_len]
            terms = W[cats, np.arange(len(cats))]
            want = math.fsum(terms)
            scale = np.abs(terms).sum()
            for f in (C._extreme_value, C._extreme_steer):
                got = f(W, 3, n_len, K, pref, top)
                assert abs(got - want) <= 8 * np.finfo(float).eps * scale, (f, n_len, top)


@pytest.mark.parametrize("J", [1, 2, 3, 4])
@pytest.mark.parametrize("b", [-40.0, 3.0])
def test_block_thomas_against_dense_solve(J, b):
    """Oracle: numpy.linalg.solve of the dense Newton-KKT matrix (E_H - b Hess) in the
    reduced coordinates Q'_{n,r} (docs/method.md, newton_kkt): E_H block-diagonal over ranks, the
    J x J tridiagonal (1/p_r + 1/p_{r+1} on the diagonal, -1/p_{r+1} beside it), and
    Hess_r[n, m] = kappa'_r f_max(n,m) (n != m, 0 on the diagonal), built here from that
    definition. The recurrences (scalar, closed-form 2 x 2 and 3 x 3 with the adjugate,
    Gauss-Jordan blocks) must give the same X for every right-hand side. With ``unit`` (one
    to three slots: the Newton-KKT solve's right-hand sides, whose columns 1..J are
    1_{s = r} at every rank, so that the elimination skips them) on such right-hand sides
    too."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(J)
    N, nr = 61, J + 2
    cases = [(n_len, False) for n_len in (N, 60, 9, 8, 7, 6, 5, 4, 3, 2, 1)]  # odd and even: two-sided
    if J <= 3:
        cases += [(n_len, True) for n_len in (N, 60, 9, 8, 5, 2, 1)]
    for n_len, unit in cases:
        P = np.zeros((J + 1, N))
        P[:, :n_len] = rng.dirichlet(np.linspace(3.0, 0.5, J + 1), size=n_len).T
        P[:, :n_len] = np.maximum(P[:, :n_len], 1e-6)   # (not the kernels' floor of 1/p at 1e12)
        kap = rng.uniform(0.01, 0.1, J)
        f = 1.0 / np.arange(1, N + 1)
        w = np.array([f[n] - f[n + 1] if n + 1 < n_len else f[n] for n in range(N)])
        R = np.zeros((J, N, nr))
        R[:, :n_len] = rng.normal(size=(J, n_len, nr))
        if unit:
            R[:, :, 1:J + 1] = 0.0
            for r in range(J):
                R[r, :n_len, 1 + r] = 1.0
        X = np.zeros((J, N, nr))
        ok = C._block_thomas(P, J, n_len, b, kap, f, w, R, X, nr, np.zeros((N, J, J)),
                             np.zeros((N, J, J)), np.zeros((N, J, nr)), np.zeros((J, J)),
                             np.zeros((J, J)), np.zeros(J), unit)
        assert ok
        want = _dense_newton_solve(P, J, n_len, b, kap, f, R[:, :n_len])
        np.testing.assert_allclose(X[:, :n_len], want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


def _dense_newton_solve(P, J, n_len, b, kap, f, R):
    """numpy.linalg.solve of the dense Newton-KKT matrix (E_H - b Hess) over (n, r), index
    n * J + r, for the right-hand sides R (J, n_len, nr), built from its definition."""
    A = np.zeros((n_len * J, n_len * J))
    for n in range(n_len):
        for r in range(J):
            i = n * J + r
            A[i, i] += 1.0 / P[r, n] + 1.0 / P[r + 1, n]
            if r + 1 < J:
                A[i, i + 1] -= 1.0 / P[r + 1, n]
                A[i + 1, i] -= 1.0 / P[r + 1, n]
            for m in range(n_len):
                if m != n:
                    A[i, m * J + r] -= b * kap[r] * f[max(n, m)]
    nr = R.shape[2]
    rhs = R.transpose(1, 0, 2).reshape(n_len * J, nr)
    return np.linalg.solve(A, rhs).reshape(n_len, J, nr).transpose(1, 0, 2)


@pytest.mark.parametrize("J", [1, 2, 3, 4])
@pytest.mark.parametrize("b", [-40.0, 3.0])
def test_newton_direction_against_dense_solve(J, b):
    """Oracle: the Newton-KKT direction from dense solves. X = A^-1 [F, 1_s, G'] by
    numpy.linalg.solve; the multiplier system S [dalpha, db] = rs with S[r, s] = sum_n X_s,
    S[J, s] = sum G' X_s (s = J: X_G), rs = -(sum_n X_F + c, sum G' X_F + e); then
    dQ' = X_F + sum_s X_s dalpha_s + X_G db. The kernel (for J = 3 from the elimination
    alone and one back-substitution) must give the same steps and direction."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(10 + J)
    N, nr = 40, J + 2
    for n_len in (N, 33, 8, 5, 2):      # (one rank: G' is a multiple of the unit columns)
        P = np.zeros((J + 1, N))
        P[:, :n_len] = rng.dirichlet(np.linspace(3.0, 0.5, J + 1), size=n_len).T
        P[:, :n_len] = np.maximum(P[:, :n_len], 1e-6)
        kap = rng.uniform(0.01, 0.1, J)
        f = 1.0 / np.arange(1, N + 1)
        w = np.array([f[n] - f[n + 1] if n + 1 < n_len else f[n] for n in range(N)])
        F, G = rng.normal(size=(J, N)), rng.uniform(0.1, 1.0, size=(J, N))
        c, e = rng.normal(size=J), float(rng.normal())
        R = np.zeros((J, N, nr))
        for r in range(J):
            R[r, :, 1 + r] = 1.0
        S, rs, dQ = np.zeros((J + 1, J + 1)), np.zeros(J + 1), np.zeros((J, N))
        ok = C._newton_direction(P, J, n_len, b, kap, f, w, F, G, c, e, R, np.zeros((J, N, nr)),
                                 np.zeros((N, J, J)), np.zeros((N, J, J)), np.zeros((N, J, nr)),
                                 np.zeros((J, J)), np.zeros((J, J)), np.zeros(J), S, rs, dQ)
        assert ok
        Rd = np.concatenate((F[:, :n_len, None], R[:, :n_len, 1:J + 1], G[:, :n_len, None]), axis=2)
        X = _dense_newton_solve(P, J, n_len, b, kap, f, Rd)
        sums = X.sum(axis=1)                                  # (J, nr)
        gx = np.einsum("rn,rnq->q", G[:, :n_len], X)          # (nr,)
        Sd = np.vstack((sums[:, 1:], gx[1:]))
        rsd = np.linalg.solve(Sd, -np.concatenate((sums[:, 0] + c, [gx[0] + e])))
        want = X[:, :, 0] + X[:, :, 1:J + 1] @ rsd[:J] + X[:, :, J + 1] * rsd[J]
        np.testing.assert_allclose(rs, rsd, rtol=1e-8, atol=1e-9 * np.abs(rsd).max())
        np.testing.assert_allclose(dQ[:, :n_len], want, rtol=1e-8, atol=1e-9 * np.abs(want).max())


def test_method_selection_and_errors():
    """``auto`` runs the kernel of the metric's form and ``method`` names it; ``linearize``
    runs the linearisation alone (the dual for a linear metric); a method that does not
    apply to the metric is a ParameterError."""
    lists = _toy()
    ap, gap, rr, ndcg = (parse_measure(x) for x in ("AP", "GAP", "RR", "nDCG"))
    assert solve(ap, ap.value(lists), lists).method == "newton-kkt"
    assert solve(gap, gap.value(lists), lists).method == "newton-kkt"
    assert solve(rr, rr.value(lists), lists).method == "linearize+newton-kkt"
    assert solve(ndcg, ndcg.value(lists), lists).method == "newton-dual"
    assert solve(ndcg, ndcg.value(lists), lists, method="linearize").method == "newton-dual"
    for m in (ap, gap, rr):
        lin = solve(m, m.value(lists), lists, method="linearize")
        auto = solve(m, m.value(lists), lists)
        assert lin.method == "linearize" and (lin.status == auto.status).all(), m
        opt = lin.status == "optimal"
        np.testing.assert_allclose(lin.entropy[opt], auto.entropy[opt], rtol=1e-9)
    with pytest.raises(ParameterError, match="newton-kkt"):
        solve(rr, rr.value(lists), lists, method="newton-kkt")
    with pytest.raises(ParameterError, match="linear in p"):
        solve(ap, ap.value(lists), lists, method="newton-dual")


def test_unsolved_warm_started_subproblem_is_solved_by_the_kernels_themselves():
    """The list of the test above, solved by the compiled kernels.
    Their inexact start (3 dual steps per subproblem) leaves p off the counts by 2.2, below
    the cold re-solve's threshold (it is meant for exact subproblems); Newton-KKT stalls from
    there, and the second run's linearisation oscillates (not certified in 2000 steps). The
    kernels try Newton again from the exact start of the numpy solver (a problem not
    near an end of the range) and certify it in a few steps. Oracle: the certificate recomputed in numpy on the returned p,
    and the numpy solver's Newton-KKT's entropy."""
    from maxent.solver import Batch
    from maxent.solver._problem import entropy
    from tests.numpy_solver.newton_kkt import newton_kkt

    m, v, lists = _run2_16()
    res = solve(m, v, lists)
    assert res.status[0] == "optimal" and res.message[0] == "KKT point" and res.nit[0] <= 20
    resid, stat = _numpy_certificate(m, res, lists, v)
    assert resid[0] <= 1e-10 and stat[0] <= 1e-9
    batch = Batch(m, v, lists, lists.retrieved_counts().astype(float))
    _, P, _, conv, _ = newton_kkt(batch, max_iter=12)
    assert conv[0] and abs(entropy(P)[0] - res.entropy[0]) <= 1e-8


def test_a_trial_point_whose_p_underflows_is_rejected_not_an_error():
    """A Newton-KKT trial point can renormalise a floored p to 0 (a row scaled by up to
    e^300); its log-ratio is then infinite, and the kernel must reject the trial (as the
    numpy solver does: its merit is not finite) instead of raising ZeroDivisionError
    (C's float division by 0). Oracle: numpy's own division rule."""
    from maxent.solver import _engine as C

    P = np.array([[0.5, 1.0], [0.0, 0.0], [0.5, 0.0]])
    LR = np.zeros((2, 2))
    C._log_ratios(P, 2, 2, LR)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(P[:-1] / P[1:])
    np.testing.assert_array_equal(LR, want)


@pytest.mark.parametrize("name", [c.NAME for c in METRICS])
def test_solver_form_is_declared_with_the_structure_it_names(name):
    """Every metric with an expectation declares a compiled form (there is no other solve
    path), the form agrees with the methods its kernel calls, and a solve through it at the
    middle of each list's range ends in a certified optimum (a boundary where the range is a
    point) whose E[M] is the target."""
    from maxent.solver import solve, value_range

    cls = next(c for c in METRICS if c.NAME == name)
    form = cls.SOLVER_FORM
    if not cls.HAS_EXPECTATION:
        assert form is None
        return
    assert form in ("linear", "prefix", "cascade")
    assert (form == "linear") == bool(cls.LINEAR_IN_P)
    assert (form == "prefix") == callable(getattr(cls, "prefix_hessian", None))
    assert (form == "cascade") == callable(getattr(cls, "cascade_form", None))
    m = cls()
    if m.AT_PARAM:                          # a cutoff inside the lists, so that ranges are not points
        m = dataclasses.replace(m, **{m.AT_PARAM: 20})
    rng = np.random.default_rng(7)
    g = np.where(rng.random((4, 40)) < 0.2, rng.integers(1, 3, (4, 40)), 0)
    lists = RankedLists.from_grades(g, np.tile([60, 12, 6], (4, 1)))
    lo, hi = value_range(m, lists).T
    res = solve(m, (lo + hi) / 2, lists)
    want = np.where(hi - lo > 1e-12, "optimal", "boundary")    # a point range is its boundary
    assert list(res.status) == list(want) and (want == "optimal").any(), (res.status, lo, hi)
    np.testing.assert_allclose(m.expectation(res.p, lists), (lo + hi) / 2, rtol=1e-7, atol=1e-9)


def test_numpy_solver_reads_the_kernels_constants():
    """One definition of each constant (``_constants.h``): the numpy solver's modules read the
    compiled engine's values, so the kernels and their oracle cannot drift apart."""
    import inspect

    from maxent.solver import _engine, _problem
    from tests.numpy_solver import dual, linearize, newton_kkt

    K = _engine.CONSTANTS
    far_tol = inspect.signature(linearize.linearize).parameters["far_tol"].default
    pairs = {"RTOL": _problem.BOUNDARY_RTOL, "ARMIJO": dual._ARMIJO,
             "P_FLOOR": newton_kkt._P_FLOOR, "PINV_MAX": newton_kkt._PINV_MAX,
             "START_TOL": newton_kkt._START_TOL, "LS_STEPS": newton_kkt._LS_STEPS,
             "ELASTIC": linearize._ELASTIC, "INNER_ITER": linearize._INNER_ITER,
             "COLD_RES": linearize._COLD_RES, "COLD_ITER": linearize._COLD_ITER,
             "FAR_TOL": far_tol, "W_ULPS": linearize._W_ULPS, "MIN_STEP": linearize._MIN_STEP}
    assert {k: K[k] for k in pairs} == pairs
    assert (K["RTOL"], K["P_FLOOR"], K["MIN_STEP"]) == (1e-11, 1e-250, 1.0 / 64)
    assert [int(c) for c in _engine.kernel_code] == list(range(4))


@pytest.mark.parametrize("n_len", [0, 1, 7, 15, 16, 17, 18, 19, 33, 200, 997])
def test_segmented_cascade_chain_against_the_sequential_recursions(n_len):
    """Oracle: the recursions written out rank by rank in Python (A_n = prod_{m<n} (1 - r_m),
    T_n = c_{n+1} r_{n+1} + (1 - r_{n+1}) T_{n+1}, E = fsum c r A). The kernel runs them on
    four segments (16 ranks and more) and joins them: lengths around the split, products
    that vanish (r within 1e-9 of 1) and entries past n_len left alone."""
    from maxent.solver import _engine as C

    rng = np.random.default_rng(n_len)
    for vanish in (False, True):
        N = n_len + 2
        R = rng.uniform(0.0, 1.0, N) ** 3
        if vanish:
            R[: n_len // 2] = 1.0 - 1e-9
        OM = 1.0 - R
        c = 1.0 / np.log2(np.arange(2, N + 2))
        A, e, g = np.full(N, 7.0), np.full(N, 7.0), np.full(N, 7.0)
        E = C._cascade_chain(R, OM, c, n_len, A, e, g, True)
        wA, wT = np.ones(n_len), np.zeros(n_len)
        for n in range(1, n_len):
            wA[n] = wA[n - 1] * OM[n - 1]
        for n in range(n_len - 2, -1, -1):
            wT[n] = c[n + 1] * R[n + 1] + OM[n + 1] * wT[n + 1]
        assert E == pytest.approx(math.fsum(c[:n_len] * R[:n_len] * wA), rel=1e-14, abs=1e-300)
        np.testing.assert_allclose(A[:n_len], wA, rtol=1e-13, atol=0)
        np.testing.assert_allclose(e[:n_len], c[:n_len] - wT, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(g[:n_len], wA * (c[:n_len] - wT), rtol=1e-12, atol=1e-300)
        assert (A[n_len:] == 7.0).all() and (e[n_len:] == 7.0).all() and (g[n_len:] == 7.0).all()


@pytest.mark.parametrize("name", ["ERR", "ERR@7", "ERR(gain=linear)", "RR", "RR@5"])
def test_cascade_expectation_and_features_against_the_metric(name):
    """Oracle: ``metric.expectation`` and ``metric.gradient`` (numpy; RR's in log space,
    ERR's dividing by 1 - r). The kernels' E and category-form features
    W[k, n] = (s_k - s_0) dE/dr_n (suffix recursion, no division) on random slot-form p,
    some ranks almost certainly relevant (r within 1e-12 of 1 for RR)."""
    from maxent.solver._engine import _cascade_E_W

    m = parse_measure(name)
    rng = np.random.default_rng(3)
    N, L = 40, (2 if name.startswith("RR") else 4)
    g = rng.integers(0, L, size=(1, N))
    g[0, 0] = L - 1
    lists = RankedLists.from_grades(g, np.array([[N + 5] + [3] * (L - 1)]))
    s, c = m.cascade_form(lists)
    for trial in range(5):
        P = rng.dirichlet(np.ones(L), size=N).T.copy()        # (L, N), columns sum to 1
        if trial:
            hot = rng.choice(N, 4, replace=False)
            P[:, hot] = 1e-13
            P[-1, hot] = 1.0 - (L - 1) * 1e-13
        W = np.zeros((L, N))
        E = _cascade_E_W(P, L, N, s, c, W, True, np.empty((5, N)))
        p = P[1] if L == 2 else P.T
        np.testing.assert_allclose(E, m.expectation(p[None], lists)[0], rtol=1e-13, atol=1e-15)
        grad = m.gradient(p[None], lists)[0]
        want = np.stack([np.zeros(N), grad]) if L == 2 else (grad - grad[:, :1]).T
        np.testing.assert_allclose(W, want, rtol=1e-9, atol=1e-14)


def _near_minimum_lists():
    """Two trec_covid_r1 lists (run yn-r1-hierarchy, topics 3 and 28) under GAP whose targets
    lie 2.2e-3 and 4.4e-5 of the range's width above its minimum: grades of the 1000 ranks
    (all others 0) and the qrels' relevant counts per grade."""
    cases = [([213, 320, 461, 553, 559, 615, 694, 712, 722, 729, 751, 778, 781, 802, 821, 849, 855,
               858, 860, 894, 905, 925, 930, 958, 972, 989, 992, 996, 999],
              [2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 2, 2, 1, 1, 1, 2],
              [247, 66, 24]),
             ([890, 892, 930, 947, 956, 957, 970, 972, 973, 974, 975, 979, 980, 981, 983, 984, 985,
               986, 987, 988, 989, 990, 993, 994, 995, 996, 997, 998, 999],
              [2, 1, 2, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
              [142, 9, 29])]
    g = np.zeros((2, 1000), dtype=np.int64)
    for i, (ranks, grades, _) in enumerate(cases):
        g[i, ranks] = grades
    return RankedLists.from_grades(g, np.array([c[2] for c in cases]))


def test_near_minimum_lists_are_certified_by_newton():
    """Near the minimum of GAP (|b| ~ 3e4-3e5) the KKT point has probabilities below the
    kernels' floor of 1e-250 (exponents down to -3000). Their floored log-odds are no
    stationarity residual; counted in Newton's merit (list 1: 7.6 at one entry, 6e-5
    elsewhere) they stalled its line search, and these lists went to the second run's ~36
    linearisation steps (trec_covid_r1 GAP: 129 of 5000 lists, 14 % of the batch's time).
    Newton's iterations now mask them (the certificate does not); list 2's b must grow 40x
    from the inexact start's, and Newton certifies it from its second start (linearisation
    to stationarity 1e-3). Oracles: the certificate recomputed in numpy on the returned p,
    and the numpy solver's entropy (its Newton-KKT fails here; its linearisation certifies)."""
    m = parse_measure("GAP")
    lists = _near_minimum_lists()
    v = m.value(lists)
    lo = m.value(RankedLists.from_grades(np.sort(lists.grades, axis=1), lists.rel_counts))
    hi = m.value(RankedLists.from_grades(-np.sort(-lists.grades, axis=1), lists.rel_counts))
    assert np.all((v - lo) < 3e-3 * (hi - lo)) and np.all(v > lo)
    res = solve(m, v, lists)
    assert list(res.status) == ["optimal"] * 2 and list(res.message) == ["KKT point"] * 2
    resid, stat = _numpy_certificate(m, res, lists, v)
    assert np.all(resid <= 1e-10) and np.all(stat <= 1e-9)
    ref = solve_numpy(m, v, lists)
    assert list(ref.status) == ["optimal"] * 2
    assert np.all(res.entropy >= ref.entropy - 1e-12 * np.abs(ref.entropy))


def test_masked_kkt_residual_skips_only_floored_entries():
    """Oracle: the residual's definition. With ``masked``, F_{r,n} = 0 exactly where p_r or
    p_{r+1} is below twice the floor, unchanged elsewhere; the count and metric residuals
    are unaffected. Without it (the certificate) every entry counts."""
    from maxent.solver import _engine as C

    J, N = 2, 6
    P = np.full((J + 1, N), 1.0 / 3.0)
    P[2, 1] = C.CONSTANTS["P_FLOOR"]
    P[0, 4] = 1.2 * C.CONSTANTS["P_FLOOR"]
    P[:, [1, 4]] /= P[:, [1, 4]].sum(axis=0)
    LR = np.empty((J, N))
    C._log_ratios(P, J, N, LR)
    alpha, b = np.array([0.3, -0.2]), 2.0
    G = np.linspace(-1.0, 1.0, J * N).reshape(J, N)
    Kp = P.sum(axis=1) + np.array([0.0, 1e-3, -1e-3])
    out = []
    for masked in (False, True):
        F, c = np.zeros((J, N)), np.zeros(J)
        merit, st, res = C._kkt_residual(P, J, N, alpha, b, G, Kp, 0.5, 0.4, F, LR, np.zeros(N), c, masked)
        out.append((F, merit, st, res, c))
    (F0, m0, st0, r0, c0), (F1, m1, st1, r1, c1) = out
    want = LR + alpha[:, None] + b * G
    np.testing.assert_allclose(F0, want, rtol=1e-15)
    skip = np.zeros((J, N), dtype=bool)
    skip[1, 1] = skip[0, 4] = True              # (slot 1: p_1 / p_2 at rank 1), (slot 0: p_0 / p_1 at rank 4)
    np.testing.assert_array_equal(F1[skip], 0.0)
    np.testing.assert_array_equal(F1[~skip], F0[~skip])
    assert st0 == np.abs(np.cumsum(want, axis=0)).max() and st1 < st0
    assert r1 == r0 and np.array_equal(c1, c0) and m1 < m0


@pytest.mark.parametrize("name", ["AP", "GAP", "GAP(g=0.2,0.8)", "ERR", "RR", "nDCG"])
def test_results_do_not_depend_on_the_batch_order(name):
    """The kernels reuse their scratch from one problem to the next without clearing it
    (:func:`maxent.solver._engine._prefix_workspace`): a problem that read an entry it had
    not written would see the previous problem's values. Oracle: the same lists solved in
    reverse order and one per call. Lists of varied lengths (every run and topic of
    robust03, the shorter lists' tails beyond their length), both count constraints: p,
    multipliers, statuses, entropies and iteration counts identical, bit for bit."""
    m = parse_measure(name)
    allv = ranked("robust03")
    rng = np.random.default_rng(7)
    lengths = allv.lengths
    # the shortest lists and random ones, interleaved: each problem follows longer and shorter ones
    short = np.argsort(lengths, kind="stable")[:20]
    idx = np.stack([short, rng.choice(len(allv), 20, replace=False)], axis=1).ravel()
    lists = allv.take(idx)
    assert lengths[idx].min() < 200 and lengths[idx].max() == 1000
    v = m.value(lists)
    rev = np.arange(len(idx))[::-1]
    for count in ("retrieved", "total"):
        ref = solve(m, v, lists, count=count, workers=1)
        back = solve(m, v[rev], lists.take(rev), count=count, workers=1)
        one = [solve(m, v[[i]], lists.take([i]), count=count) for i in range(0, len(idx), 7)]
        for got, rows in [(back, rev)] + [(r, [i]) for r, i in zip(one, range(0, len(idx), 7))]:
            for field in ("p", "multipliers", "status", "entropy", "nit"):
                np.testing.assert_array_equal(getattr(got, field), getattr(ref, field)[rows],
                                              err_msg=f"{name} {count} {field}")




def test_isa_dispatch_names_the_build_that_runs():
    """``maxent.solver._engine`` holds the functions of the widest build the CPU runs (oracle:
    the CPU flags the kernel reports in /proc/cpuinfo on Linux): AVX-512 with AVX2 and FMA,
    else AVX2 with FMA, else its own baseline build's; ``MAXENT_ENGINE_ISA`` caps the choice."""
    from importlib.util import find_spec

    from maxent.solver import _engine as C

    assert set(C.BASELINE) >= {"linear_batch", "prefix_batch", "cascade_batch", "fexp_array", "SoftmaxScratch"}
    runs = {name: getattr(C, name).__module__ for name in C.BASELINE}
    want = "maxent.solver._engine" if C.ISA == "baseline" else f"maxent.solver._engine_{C.ISA}"
    assert set(runs.values()) == {want} and C.ISA in C.BUILDS
    assert all(f.__module__ == "maxent.solver._engine" for f in C.BASELINE.values())
    assert C.build("baseline") is C.BASELINE
    try:
        flags = set(next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split())
    except (OSError, StopIteration):
        flags = None
    installed = {isa for isa in C.BUILDS[1:] if find_spec(f"maxent.solver._engine_{isa}") is not None}
    if flags is not None and sys.platform.startswith("linux") and installed:
        widest = ("avx512" if {"avx2", "fma", "avx512f", "avx512dq", "avx512vl", "avx512bw"} <= flags
                  and "avx512" in installed else "avx2" if {"avx2", "fma"} <= flags else "baseline")
        assert C.ISA == widest
    for cap in ("baseline", "avx2"):
        forced = subprocess.run([sys.executable, "-c", "from maxent.solver import _engine as C; "
                                 "print(C.ISA, C.linear_batch.__module__)"],
                                env={**__import__("os").environ, "MAXENT_ENGINE_ISA": cap},
                                capture_output=True, text=True, check=True)
        isa = cap if C.build(cap) is not None else "baseline"
        assert forced.stdout.split() == [isa, "maxent.solver._engine" + ("" if isa == "baseline" else "_" + isa)]


def _solve_with(build, m, v, lists, count):
    import types

    from maxent.solver import _engine as C, forms

    forms._engine = types.SimpleNamespace(kernel_code=C.kernel_code, **build)   # the kernels' one caller
    try:
        return solve(m, v, lists, count=count, workers=1)
    finally:
        forms._engine = C


def _against_baseline(isa, name):
    """(count, baseline result, result of build ``isa``) for metric ``name`` on 40 lists of
    trec_covid_r1 (depth 1000) under each count constraint; skips where there is no such build."""
    from maxent.solver import _engine as C

    if C.build(isa) is None:
        pytest.skip(f"this CPU or install has no {isa} build")
    lists = ranked("trec_covid_r1")
    lists = lists.take(np.random.default_rng(3).choice(len(lists), 40, replace=False))
    m = parse_measure(name)
    v = m.value(lists)
    for count in ("retrieved", "total"):
        yield count, _solve_with(C.BASELINE, m, v, lists, count), _solve_with(C.build(isa), m, v, lists, count)


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("name", ["nDCG", "AP", "GAP", "ERR", "RR"])
def test_the_wider_builds_agree_with_the_baseline_to_rounding(isa, name):
    """The AVX2 and AVX-512 builds fuse multiply-adds, so their iterates round differently
    from the baseline build's. Oracle: the baseline build on the same lists (depth 1000, both
    count constraints): the same statuses; entropies within 1e-10 relative, or, near a
    metric's maximum (|b| large), within the certificate's residual tolerance, worth
    |b| 1e-10 nats; p within 1e-6 (two certified points of an ill-conditioned ERR list
    differ by ~4e-8)."""
    for count, ref, got in _against_baseline(isa, name):
        np.testing.assert_array_equal(got.status, ref.status, err_msg=f"{name} {count}")
        b = np.abs(np.nan_to_num(ref.multipliers[:, -1]))
        allowance = np.maximum(1e-10 * np.maximum(1.0, np.abs(ref.entropy)), 1e-10 * b)
        assert (np.abs(got.entropy - ref.entropy) <= allowance).all(), f"{name} {count}"
        assert np.abs(got.p - ref.p).max() <= 1e-6, f"{name} {count}"
