"""SoftRank (Taylor et al. 2008; Yilmaz & Robertson 2010 section 4.1; Robertson et al. 2010).

Oracles: the rank distribution against the Poisson-binomial distribution built by
``np.convolve`` of the Bernoulli(pi_ij) factors; the smoothed metrics as sigma_s -> 0 against
``maxent.metrics`` on the ranking by score; gradients against central finite differences;
SoftGAP with one grade above 0 against SoftAP (GAP -> AP, docs/method.md).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.ltr.lambdas import DeltaContext, rank_by_score
from maxent.ltr.softrank import beat_probabilities, rank_distributions, soft_metric, softrank_gradients
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists

METRICS = ["nDCG", "nDCG(gain=exp)", "nDCG@3", "P@3", "AP", "AP(rel=2)", "GAP", "GAP(g=0.2,0.3,0.5)"]


def _case(rng, n=None):
    n = int(rng.integers(2, 9)) if n is None else n
    y = rng.integers(-1, 4, n)
    counts = np.bincount(np.maximum(y, 0), minlength=4) + rng.integers(0, 2, 4)   # unretrieved too
    s = rng.permutation(n) + 0.3 * rng.random(n)                                  # distinct, gap >= 0.4
    return s, y, counts


def test_beat_probabilities_hand_values():
    # s = (1, 0), sigma_s = 1/sqrt2: pi_12 = Phi(1) = 0.8413447460685429 (normal table), pi_21 = Phi(-1)
    pi, _ = beat_probabilities([1.0, 0.0], 1 / np.sqrt(2))
    assert pi[0, 1] == pytest.approx(0.8413447460685429, abs=1e-15)
    assert pi[1, 0] == pytest.approx(1 - 0.8413447460685429, abs=1e-15)
    assert pi[0, 0] == pi[1, 1] == 0.0


def test_rank_distribution_is_poisson_binomial():
    rng = np.random.default_rng(0)
    s = rng.standard_normal(7)
    p = rank_distributions(s, 0.8)
    pi, _ = beat_probabilities(s, 0.8)
    for j in range(7):
        want = np.array([1.0])
        for i in range(7):
            if i != j:
                want = np.convolve(want, [1 - pi[i, j], pi[i, j]])
        np.testing.assert_allclose(p[j], want, atol=1e-14)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)


@pytest.mark.parametrize("name", METRICS)
def test_small_sigma_gives_the_metric(name):
    m = parse_measure(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across processes
    for _ in range(20):
        s, y, counts = _case(rng)
        ctx = DeltaContext(m, counts[None])
        order = rank_by_score(s[None])[0]
        want = m.value(RankedLists.from_grades(y[order][None], counts[None], lengths=[len(y)]))[0]
        assert soft_metric(ctx, s, y, sigma_s=1e-3, gradient=False) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("name", METRICS)
def test_gradient_finite_differences(name):
    m = parse_measure(name)
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(8):
        s, y, counts = _case(rng)
        s = s * 0.3
        ctx = DeltaContext(m, counts[None])
        _, g = soft_metric(ctx, s, y, sigma_s=0.5)
        fd = np.empty(len(s))
        for i in range(len(s)):   # central differences, one coordinate at a time (test only)
            e = np.zeros(len(s))
            e[i] = h
            fd[i] = (soft_metric(ctx, s + e, y, sigma_s=0.5, gradient=False)
                     - soft_metric(ctx, s - e, y, sigma_s=0.5, gradient=False)) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-8)


def test_chunked_adjoint_equals_single_chunk(monkeypatch):
    """The reverse pass over chunks of documents gives the same gradient as one chunk."""
    import maxent.ltr.softrank as sr

    rng = np.random.default_rng(2)
    s, y, counts = _case(rng, 12)
    ctx = DeltaContext(parse_measure("nDCG@5"), counts[None])
    v1, g1 = soft_metric(ctx, s * 0.2, y, sigma_s=0.4)
    monkeypatch.setattr(sr, "_chunk", lambda n: 5)
    v2, g2 = soft_metric(ctx, s * 0.2, y, sigma_s=0.4)
    assert v1 == pytest.approx(v2, abs=1e-14)
    np.testing.assert_allclose(g1, g2, atol=1e-14)


def test_softgap_with_binary_grades_is_softap():
    rng = np.random.default_rng(3)
    s = rng.standard_normal(9)
    y = rng.integers(0, 2, 9)
    counts = np.bincount(y, minlength=2)[None]
    a = soft_metric(DeltaContext(parse_measure("AP"), counts), s, y, sigma_s=0.7)
    g = soft_metric(DeltaContext(parse_measure("GAP"), counts), s, y, sigma_s=0.7)
    assert a[0] == pytest.approx(g[0], abs=1e-14)
    np.testing.assert_allclose(a[1], g[1], atol=1e-14)


def test_batch_equals_per_query():
    rng = np.random.default_rng(4)
    m = parse_measure("nDCG(gain=exp)")
    S = rng.standard_normal((3, 6))
    Y = rng.integers(0, 3, (3, 6))
    lengths = np.array([6, 4, 2])
    for b in range(3):
        Y[b, lengths[b]:] = -1
    counts = np.stack([np.bincount(np.maximum(Y[b], 0), minlength=3) for b in range(3)])
    ctx = DeltaContext(m, counts)
    G = softrank_gradients(S, Y, ctx, lengths=lengths, sigma_s=0.5)
    for b in range(3):
        n = lengths[b]
        np.testing.assert_allclose(G[b, :n], soft_metric(ctx, S[b, :n], Y[b, :n], row=b, sigma_s=0.5)[1],
                                   atol=1e-15)
        assert not G[b, n:].any()


def test_unsupported():
    with pytest.raises(ParameterError):
        soft_metric(DeltaContext(parse_measure("RR"), [[1, 1]]), [0.0, 1.0], [0, 1])
    with pytest.raises(ParameterError):
        beat_probabilities([0.0, 1.0], 0.0)
