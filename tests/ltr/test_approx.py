"""ApproxRank (Qin et al. 2010).

Oracles: positions from sorting (``rank_by_score``) for large alpha; the library's metric
value (``maxent.metrics``) for large alpha and beta (Qin et al. 2010 theorems 1-2); gradients
against central finite differences.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.ltr.approx import approx_metric, approx_positions, approxrank_gradients
from maxent.ltr.lambdas import DeltaContext, rank_by_score
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists

METRICS = ["nDCG", "nDCG(gain=exp)", "nDCG@3", "P@3", "AP", "AP(rel=2)", "GAP", "GAP(g=0.2,0.3,0.5)",
           "nDCG@3(discount=jk)", "R@4"]


def _case(rng, n=None):
    n = int(rng.integers(2, 10)) if n is None else n
    y = rng.integers(-1, 4, n)
    counts = np.bincount(np.maximum(y, 0), minlength=4) + rng.integers(0, 2, 4)
    s = rng.permutation(n) + 0.3 * rng.random(n)          # distinct scores, gaps >= 0.4
    return s, y, counts


def test_positions_large_alpha_are_ranks():
    rng = np.random.default_rng(0)
    s, _, _ = _case(rng, 8)
    ph, _ = approx_positions(s, 1e3)
    ranks = np.empty(8)
    ranks[rank_by_score(s[None])[0]] = np.arange(1, 9)
    np.testing.assert_allclose(ph, ranks, atol=1e-12)


def test_positions_hand_value():
    # two documents 0 apart: each is half above the other, pi_hat = 1 + 1/2
    ph, S = approx_positions([0.0, 0.0], 10.0)
    np.testing.assert_allclose(ph, [1.5, 1.5])
    assert S[0, 1] == pytest.approx(10.0 * 0.25)      # alpha sigma (1 - sigma) at 0


@pytest.mark.parametrize("name", METRICS)
def test_large_alpha_beta_give_the_metric(name):
    m = parse_measure(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across processes
    for _ in range(20):
        s, y, counts = _case(rng)
        ctx = DeltaContext(m, counts[None])
        order = rank_by_score(s[None])[0]
        want = m.value(RankedLists.from_grades(y[order][None], counts[None], lengths=[len(y)]))[0]
        got = approx_metric(ctx, s, y, alpha=1e3, beta=200.0, gradient=False)
        assert got == pytest.approx(want, abs=1e-10)


def test_moderate_alpha_is_only_approximate():
    """The approximation is not the metric for small alpha (the test above can fail)."""
    s = np.array([0.0, 0.05, 0.1])
    y = np.array([1, 0, 0])
    ctx = DeltaContext(parse_measure("AP"), [[2, 1]])
    assert abs(approx_metric(ctx, s, y, alpha=5.0, beta=10.0, gradient=False) - 1 / 3) > 1e-3


@pytest.mark.parametrize("name", METRICS)
def test_gradient_finite_differences(name):
    m = parse_measure(name)
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(8):
        s, y, counts = _case(rng)
        s = 0.2 * s
        ctx = DeltaContext(m, counts[None])
        _, g = approx_metric(ctx, s, y, alpha=3.0, beta=2.0)
        fd = np.empty(len(s))
        for i in range(len(s)):   # central differences, one coordinate at a time (test only)
            e = np.zeros(len(s))
            e[i] = h
            fd[i] = (approx_metric(ctx, s + e, y, alpha=3.0, beta=2.0, gradient=False)
                     - approx_metric(ctx, s - e, y, alpha=3.0, beta=2.0, gradient=False)) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-8)


def test_batch_equals_per_query():
    rng = np.random.default_rng(4)
    m = parse_measure("AP")
    S = rng.standard_normal((3, 7))
    Y = rng.integers(0, 2, (3, 7))
    lengths = np.array([7, 5, 1])
    for b in range(3):
        Y[b, lengths[b]:] = -1
    counts = np.stack([np.bincount(np.maximum(Y[b], 0), minlength=2) + 1 for b in range(3)])
    ctx = DeltaContext(m, counts)
    G = approxrank_gradients(S, Y, ctx, lengths=lengths, alpha=4.0, beta=3.0)
    for b in range(3):
        n = lengths[b]
        np.testing.assert_allclose(G[b, :n], approx_metric(ctx, S[b, :n], Y[b, :n], row=b, alpha=4.0,
                                                           beta=3.0)[1], atol=1e-15)
        assert not G[b, n:].any()


def test_unsupported():
    with pytest.raises(ParameterError):
        approx_metric(DeltaContext(parse_measure("RR"), [[1, 1]]), [0.0, 1.0], [0, 1])
    with pytest.raises(ParameterError):
        approx_positions([0.0], 0.0)


def test_approx_values_batch_and_convergence():
    """approx_values: each entry = approx_metric on that list (oracle: the per-list function);
    for tie-free lists it tends to the library's true metric as alpha grows (Qin et al. 2010 theorems 1-2;
    oracle: maxent.metrics on the ranking by score)."""
    from maxent.ltr.approx import approx_metric, approx_values
    from maxent.ltr.lambdas import DeltaContext
    from maxent.metrics import parse_measure
    from maxent.ranked import RankedLists

    rng = np.random.default_rng(5)
    B, N = 6, 12
    lengths = rng.integers(5, N + 1, B)
    S = np.full((B, N), -np.inf)
    G = np.full((B, N), -1)
    for b in range(B):
        n = lengths[b]
        S[b, :n] = -np.sort(-rng.random(n))              # ranked, distinct scores in [0, 1]
        G[b, :n] = rng.integers(0, 3, n)
        G[b, 0] = 2
    rc = np.stack([np.bincount(G[b, :lengths[b]], minlength=3) for b in range(B)])
    for name in ("nDCG(gain=exp)", "AP", "P@5", "nDCG@5"):
        m = parse_measure(name)
        ctx = DeltaContext(m, rc)
        vals = approx_values(ctx, S, G, lengths, [5.0, 1e6], beta=1e4)
        for b in range(B):
            assert vals[0, b] == pytest.approx(approx_metric(ctx, S[b, :lengths[b]], G[b, :lengths[b]], row=b,
                                                             alpha=5.0, beta=1e4, gradient=False))
        true = m.value(RankedLists.from_grades(G, rc, lengths))
        np.testing.assert_allclose(vals[1], true, atol=1e-6)
        assert np.abs(vals[0] - true).max() > 1e-3        # a small alpha is visibly approximate
