"""Power analysis (maxent.stats.family_mde, queries_needed) against simulation and closed forms."""
import numpy as np
import pytest
from scipy import stats as st

from maxent.errors import ParameterError
from maxent.stats import family_mde, minimum_detectable_effect, queries_needed


def test_family_mde_is_the_mde_at_the_bonferroni_level():
    assert family_mde(5.0, 400, n_claims=1) == minimum_detectable_effect(5.0, 400)
    assert family_mde(5.0, 400, n_claims=10) == pytest.approx(minimum_detectable_effect(5.0, 400, alpha=0.005))
    assert family_mde(5.0, 400, n_claims=10) > family_mde(5.0, 400, n_claims=2)


def test_family_mde_power_by_simulation():
    """At the MDE, the t-test at alpha/m rejects in about 80% of simulated experiments."""
    rng = np.random.default_rng(0)
    sd, n, m = 3.0, 60, 8
    delta = family_mde(sd, n, n_claims=m)
    d = delta + sd * rng.standard_normal((20_000, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    p = 2 * st.t.sf(np.abs(t), n - 1)
    assert np.mean(p < 0.05 / m) == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("n, m", [(20, 10), (100, 23)])
def test_family_mde_with_few_queries_and_many_claims_by_simulation(n, m):
    """Few test queries and many claims (Robust 2003 on one split: 20 queries, 10 claims),
    where scipy's non-central t gives nan for the negligible lower tail: the MDE is finite and
    the t-test at alpha/m rejects in about 80% of simulated experiments there."""
    rng = np.random.default_rng(1)
    sd = 2.0
    delta = family_mde(sd, n, n_claims=m)
    assert np.isfinite(delta) and delta > 0
    d = delta + sd * rng.standard_normal((20_000, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    p = 2 * st.t.sf(np.abs(t), n - 1)
    assert np.mean(p < 0.05 / m) == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("sd, mde, m", [(10.0, 0.5, 10), (6.0, 0.5, 1), (3.0, 1.0, 4), (12.0, 0.3, 16)])
def test_queries_needed_is_the_smallest_n(sd, mde, m):
    n = queries_needed(sd, mde, n_claims=m)
    assert family_mde(sd, n, n_claims=m) <= mde
    if n > 2:
        assert family_mde(sd, n - 1, n_claims=m) > mde
    z = st.norm.ppf(1 - 0.05 / m / 2) + st.norm.ppf(0.8)
    assert n == pytest.approx((z * sd / mde) ** 2, rel=0.05, abs=3)     # the normal approximation


def test_queries_needed_edges():
    assert queries_needed(0.0, 0.5) == 2
    for kw in ({"sd": 1.0, "mde": 0.0}, {"sd": -1.0, "mde": 1.0}, {"sd": float("nan"), "mde": 1.0}):
        with pytest.raises(ParameterError, match="mde|sd"):
            queries_needed(**kw)
    with pytest.raises(ParameterError, match="n_claims"):
        family_mde(1.0, 10, n_claims=0)


def test_minimum_detectable_effect_has_the_stated_power():
    """Oracles: (1) simulated paired t-tests at the MDE reject with frequency 0.8 (4000 trials,
    binomial sd 0.0063); (2) large n gives the normal formula (z_{.975} + z_{.8}) sd / sqrt(n)."""
    n, sd = 15, 0.2
    mde = minimum_detectable_effect(sd, n)
    x = np.random.default_rng(0).normal(mde, sd, (4000, n))
    p = st.ttest_1samp(x, 0.0, axis=1).pvalue
    assert (p < 0.05).mean() == pytest.approx(0.8, abs=0.025)
    z = (st.norm.ppf(0.975) + st.norm.ppf(0.8)) * sd / np.sqrt(100000)
    assert minimum_detectable_effect(sd, 100000) == pytest.approx(z, rel=1e-3)
    assert minimum_detectable_effect(0.0, 10) == 0.0
    with pytest.raises(ParameterError):
        minimum_detectable_effect(0.1, 1)
