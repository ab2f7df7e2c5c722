"""Newton on the KKT system: Hessian-vector products, the banded solve, and
agreement with the original successive linearisation.

Oracles: central finite differences of the library's gradients (Hessians), a dense
Hessian assembled entry by entry from the closed form f_{max(n,m)} (structure), dense
numpy.linalg.solve (banded solve), and the original solver (``method="linearize"``) for entropies and distributions on real lists.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from maxent.solver import solve
from maxent.solver._problem import Batch, count_constraints
from tests.numpy_solver import solve_numpy
from tests._realdata import BINARY_THRESHOLD, COLLECTIONS, ranked

HESS_METRICS = ["AP", "AP@7", "AP(rel=2)", "GAP", "GAP(g=0.3,0.7)", "GAP@9"]


def _random(rng, B=3, N=15, L=3):
    g = rng.integers(-1, L, size=(B, N))
    rel = np.column_stack([np.full(B, N)] + [rng.integers(1, 6, size=B) for _ in range(L - 1)])
    lists = RankedLists.from_grades(g, rel, lengths=rng.integers(N // 2, N + 1, size=B))
    P = rng.dirichlet(np.ones(L), size=(B, N))
    return lists, P


def _p(m, P):
    return P if m.GRADED else P[:, :, m.binary_threshold:].sum(axis=2)


@pytest.mark.parametrize("name", HESS_METRICS)
def test_hessian_vector_matches_finite_differences(name):
    """H d = (grad(p + h d) - grad(p - h d)) / 2h (exact up to rounding: E is quadratic)."""
    rng = np.random.default_rng(5)
    m = parse_measure(name)
    lists, P = _random(rng)
    p = _p(m, P)
    d = rng.normal(size=p.shape)
    h = 1e-3
    fd = (m.gradient(p + h * d, lists) - m.gradient(p - h * d, lists)) / (2 * h)
    np.testing.assert_allclose(m.hessian_vector(p, d, lists), fd, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", HESS_METRICS)
def test_prefix_hessian_structure_matches_hessian_vector(name):
    """The dense Hessian assembled from (js, kappa, f) -- kappa_j (f_{max(n,m)} - [n=m] f_n)
    on Q_j = P(category >= j) -- equals the columns H e_k of ``hessian_vector``."""
    rng = np.random.default_rng(6)
    m = parse_measure(name)
    lists, P = _random(rng, B=2, N=9)
    b = Batch(m, np.zeros(2), lists, count_constraints(m, lists, "retrieved"))
    js, kappa, f = m.prefix_hessian(lists)
    B, N, L = 2, 9, b.L
    n = np.arange(N)
    Mf = f[np.maximum(n[:, None], n[None, :])] - np.diag(f)
    dense = np.zeros((B, N * L, N * L))
    for col, j in enumerate(js):
        up = (np.arange(L) >= j).astype(float)                       # dQ_j/dp(z)
        dense += kappa[:, col, None, None] * np.kron(Mf, np.outer(up, up))[None]
    p = _p(m, P)
    for k in range(N * L):
        e = np.zeros((B, N, L))
        e[:, k // L, k % L] = 1.0
        if m.GRADED:
            hv = m.hessian_vector(p, e, lists).reshape(B, -1)
        else:   # binary: the category form [not relevant, relevant]
            if k % L == 0:
                continue
            hv = np.zeros((B, N, L))
            hv[:, :, 1] = m.hessian_vector(p, e[:, :, 1], lists)
            hv = hv.reshape(B, -1)
            dense_k = dense[:, :, k].reshape(B, N, L).copy()
            dense_k[:, :, 0] = 0.0
            np.testing.assert_allclose(hv, dense_k.reshape(B, -1), atol=1e-13)
            continue
        np.testing.assert_allclose(hv, dense[:, :, k], atol=1e-13)


def test_banded_solve_matches_dense_solve():
    """The block-tridiagonal solve (prefix-sum change of variables) equals a dense solve of
    A = E_H - b Hess in the reduced coordinates, for binary and graded problems with empty
    categories, short lists and both signs of b."""
    from tests.numpy_solver import newton_kkt as nk

    rng = np.random.default_rng(8)
    for name in ("AP", "GAP", "GAP@6"):
        m = parse_measure(name)
        g = np.array([[0, 2, 0, 2, 1, 0, 0, 1, -1, 0],
                      [2, 0, 0, 2, 0, 0, 2, 0, 0, 0],       # no grade 1 retrieved (empty category)
                      [1, 0, 1, 2, 0, 1, -1, -1, -1, -1]])  # length 6
        lists = RankedLists.from_grades(g, np.array([[20, 4, 5], [20, 3, 4], [20, 5, 2]]),
                                        lengths=[10, 10, 6])
        batch = Batch(m, np.zeros(3), lists, count_constraints(m, lists, "retrieved"))
        red = nk._Reduced(batch)
        P = batch.uniform() * 0.5 + 0.5 * rng.dirichlet(np.ones(batch.L), size=(3, 10)).transpose(0, 2, 1)
        P = np.where(batch.grade_ok[:, :, None], P, 0.0) * batch.active[:, None, :]
        P /= np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
        hi, lo = nk._slots(P, red)
        b = np.array([3.0, -2.0, 1.5])
        J, N = red.J, 10
        rhs = rng.normal(size=(3, J, N, 2)) * (batch.active[:, None, :, None] & red.valid[:, :, None, None])
        X = nk._banded_solve(hi, lo, b, batch, red, rhs)
        for i in range(3):
            ell = int(lists.lengths[i])
            slots = np.flatnonzero(red.valid[i])
            # dense A on (rank, slot) for the active ranks and valid slots
            idx = [(n_, s) for n_ in range(ell) for s in slots]
            A = np.zeros((len(idx), len(idx)))
            f = red.f
            for a_, (n1, s1) in enumerate(idx):
                for c_, (n2, s2) in enumerate(idx):
                    if n1 == n2:
                        if s1 == s2:
                            A[a_, c_] += 1 / hi[i, s1, n1] + 1 / lo[i, s1, n1]
                        elif s2 == s1 + 1:
                            A[a_, c_] -= 1 / hi[i, s1, n1]
                        elif s1 == s2 + 1:
                            A[a_, c_] -= 1 / hi[i, s2, n1]
                    if s1 == s2:
                        h = f[max(n1, n2)] - (f[n1] if n1 == n2 else 0.0)
                        A[a_, c_] -= b[i] * red.kappa[i, s1] * h
            for k in range(2):
                r = np.array([rhs[i, s, n_, k] for n_, s in idx])
                x = np.linalg.solve(A, r)
                got = np.array([X[i, s, n_, k] for n_, s in idx])
                np.testing.assert_allclose(got, x, rtol=1e-9, atol=1e-12, err_msg=name)


def test_newton_kkt_needs_the_structure():
    lists = RankedLists.from_grades(np.array([[1, 0, 1, 0]]), np.array([[3, 2]]))
    rr = parse_measure("RR")
    with pytest.raises(ParameterError):
        solve(rr, rr.value(lists), lists, method="newton-kkt")
    ap = parse_measure("AP")
    assert solve(ap, ap.value(lists), lists).method == "newton-kkt"
    gap = parse_measure("GAP")
    gl = RankedLists.from_grades(np.array([[1, 0, 2, 0]]), np.array([[3, 2, 1]]))
    assert solve(gap, gap.value(gl), gl, method="newton-kkt").method == "newton-kkt"
    assert solve(rr, rr.value(lists), lists).method == "linearize+newton-kkt"


def _same_as_original(collection, count, n, seed, solver="kernels"):
    lists = ranked(collection)
    lists = lists.take(np.sort(np.random.default_rng(seed).choice(len(lists), n, replace=False)))
    t = BINARY_THRESHOLD[collection]
    for name in ("AP" if t == 1 else f"AP(rel={t})", "GAP"):
        m = parse_measure(name)
        v = m.value(lists)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            run = solve if solver == "kernels" else solve_numpy
            new = run(m, v, lists, count=count, method="newton-kkt")
            old = solve_numpy(m, v, lists, count=count, method="linearize", max_iter=2000)
        np.testing.assert_array_equal(new.status, old.status)
        opt = new.status == "optimal"
        assert (new.residual[opt] <= 1e-9).all() and (new.stationarity[opt] <= 1e-9).all()
        assert (new.entropy >= old.entropy - 1e-9 * np.maximum(1.0, old.entropy)).all(), name
        np.testing.assert_allclose(new.p, old.p, rtol=0, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(new.entropy, old.entropy, rtol=1e-8, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("collection", COLLECTIONS)
@pytest.mark.parametrize("count", ["retrieved", "total"])
@pytest.mark.parametrize("solver", ["numpy", "kernels"])
def test_same_solutions_as_the_original_linearisation(collection, count, solver):
    """On 30 random real lists per collection (depth 1000), AP and GAP: the Newton solver
    (the numpy oracle's, and the compiled kernels') returns the
    same statuses as the original successive linearisation (given 2000 steps), entropies
    never lower (by more than 1e-9 relative) and distributions within 1e-6; every optimal
    one certified."""
    _same_as_original(collection, count, 30, 12, solver)


@pytest.mark.slow
@pytest.mark.parametrize("collection", COLLECTIONS)
@pytest.mark.parametrize("count", ["retrieved", "total"])
def test_same_solutions_as_the_original_linearisation_400(collection, count):
    """As above on 400 random real lists per collection."""
    _same_as_original(collection, count, 400, 13)
