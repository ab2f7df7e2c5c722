"""Paired significance tests (maxent.stats.paired; Yilmaz & Robertson (2010)'s rule: t-test, Wilcoxon and
sign test all at 95%)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.stats import paired_bootstrap, paired_t, paired_tests, sign_test, wilcoxon


def test_sign_test_hand_binomial():
    # 8 wins, 2 losses, 1 tie (dropped): p = 2 * P(Bin(10, 1/2) <= 2) = 2 * (1 + 10 + 45) / 1024
    a = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 5.0])
    b = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 5.0])
    assert sign_test(a, b) == pytest.approx(112 / 1024, abs=1e-12)


def test_paired_t_closed_form_three_df():
    # d = 1, 2, 3, 4: mean 2.5, s = sqrt(5/3), t = 2.5 / (s / 2); Student t with 3 df has
    # F(t) = 1/2 + (t / (sqrt3 (1 + t^2/3)) + atan(t / sqrt3)) / pi
    a = np.array([2.0, 4.0, 6.0, 8.0])
    b = np.array([1.0, 2.0, 3.0, 4.0])
    t = 2.5 / (math.sqrt(5 / 3) / 2)
    F = 0.5 + (t / (math.sqrt(3) * (1 + t * t / 3)) + math.atan(t / math.sqrt(3))) / math.pi
    assert paired_t(a, b) == pytest.approx(2 * (1 - F), rel=1e-9)


def test_wilcoxon_exact_all_positive():
    # 5 positive differences, no ties: W- = 0 has probability 1/2^5; two-sided p = 2/32
    a = np.array([1.0, 2, 3, 4, 5])
    assert wilcoxon(a, np.zeros(5)) == pytest.approx(2 / 32, abs=1e-12)


def test_identical_systems_are_not_different():
    a = np.array([0.1, 0.5, 0.3])
    assert paired_t(a, a) == wilcoxon(a, a) == sign_test(a, a) == 1.0
    assert not paired_tests(a, a).significant


def test_joint_rule_needs_all_three():
    # 20 topics all improved by varied amounts: every test rejects (sign test p = 2 / 2^20)
    rng = np.random.default_rng(0)
    b = rng.random(20)
    a = b + 0.05 + 0.01 * rng.random(20)
    r = paired_tests(a, b)
    assert r.significant and r.p_sign == pytest.approx(2 / 2**20)
    # one huge win and 9 small losses: the t-test does not reject, so no mark
    a2 = np.array([10.0] + [0.0] * 9)
    b2 = np.array([0.0] + [0.01] * 9)
    r2 = paired_tests(a2, b2)
    assert r2.p_t > 0.05 and not r2.significant


def test_bootstrap():
    rng = np.random.default_rng(1)
    b = rng.random(30)
    assert paired_bootstrap(b + 0.2 + 0.01 * rng.random(30), b, n_resamples=2000) < 0.01
    d = np.array([0.1, -0.1] * 10)           # mean 0: t = 0, every resample is at least as extreme
    assert paired_bootstrap(d, np.zeros(20), n_resamples=500) == 1.0
    # maxent.stats.bootstrap's conventions: identical systems -> 1, constant non-zero difference -> 0
    assert paired_bootstrap(b, b, n_resamples=100) == 1.0
    assert paired_bootstrap(b + 0.2, b, n_resamples=100) == 0.0


def test_bootstrap_is_sakais_studentised_test():
    """Oracle: maxent.stats.paired_bootstrap_asl (the one implementation), and for a small
    case a direct count of resampled |t*| >= |t| with the same generator draws."""
    from maxent.stats import paired_bootstrap_asl

    rng = np.random.default_rng(2)
    a, b = rng.random(15), rng.random(15)
    assert paired_bootstrap(a, b, n_resamples=300, seed=5) == paired_bootstrap_asl((a - b)[None], 300, 5)[0]
    d = a - b
    t = d.mean() / (d.std(ddof=1) / np.sqrt(15))
    idx = np.random.default_rng(5).integers(0, 15, size=(300, 15))
    w = (d - d.mean())[idx]
    tb = w.mean(axis=1) / (w.std(axis=1, ddof=1) / np.sqrt(15))
    assert paired_bootstrap(a, b, n_resamples=300, seed=5) == pytest.approx(np.mean(np.abs(tb) >= abs(t) - 1e-12))


def test_bad_inputs():
    with pytest.raises(ParameterError):
        paired_tests([1.0, 2.0], [1.0])
    with pytest.raises(ParameterError):
        paired_tests([1.0], [2.0])
    with pytest.raises(ParameterError):
        paired_tests([1.0, 2.0], [1.0, 3.0], alpha=1.5)
