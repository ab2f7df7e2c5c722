"""Percentile bootstrap intervals (maxent.stats.intervals) against scipy and explicit resampling loops."""
import numpy as np
import pandas as pd
import pytest

from maxent.errors import ParameterError
from maxent.stats import bootstrap_ci, effect_sizes, percentile_interval, topic_bootstrap_mean


def test_bootstrap_ci_matches_scipy_percentile():
    """Oracle: scipy.stats.bootstrap(method='percentile') on the same data (own resampling, so
    agreement to Monte-Carlo error: 1% of the spread of d at B = 20000)."""
    from scipy import stats as st

    d = np.random.default_rng(3).normal(0.02, 0.1, 40)
    lo, hi = bootstrap_ci(d, n_resamples=20000, seed=1)
    ref = st.bootstrap((d,), np.mean, method="percentile", n_resamples=20000, random_state=2).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.01 * d.std()) and hi == pytest.approx(ref.high, abs=0.01 * d.std())
    assert lo < d.mean() < hi
    assert bootstrap_ci(np.full(5, 0.3)) == pytest.approx((0.3, 0.3))
    with pytest.raises(ParameterError):
        bootstrap_ci([1.0])


def test_bootstrap_ci_is_the_documented_resampling_in_blocks():
    """The same numbers as topic indices drawn from one generator in blocks of 2,000,000 // n
    rows (here 3 blocks of 6006 rows and one of 1982 for n = 333)."""
    d = np.random.default_rng(8).normal(0.0, 1.0, 333)
    rng = np.random.default_rng(4)
    block = 2_000_000 // 333
    means = np.concatenate([d[rng.integers(0, 333, size=(min(block, 20000 - r), 333))].mean(axis=1)
                            for r in range(0, 20000, block)])
    assert bootstrap_ci(d, n_resamples=20000, seed=4, level=0.9) == tuple(np.quantile(means, [0.05, 0.95]))


def test_effect_sizes_and_bootstrap_ci_share_the_resamples():
    """With all resamples in one block, the interval of the mean difference is bootstrap_ci's."""
    d = np.random.default_rng(5).normal(0.05, 0.2, (3, 25))
    out = effect_sizes(d, n_boot=700, seed=2, level=0.8)
    for k in range(3):
        assert (out["diff_lo"][k], out["diff_hi"][k]) == bootstrap_ci(d[k], n_resamples=700, seed=2, level=0.8)


def test_effect_sizes_constant_pair_has_no_d_interval():
    out = effect_sizes(np.full((1, 6), 0.25), n_boot=50)
    assert out["diff_lo"][0] == out["diff_hi"][0] == 0.25
    assert np.isnan(out["d"][0]) and np.isnan(out["d_lo"][0]) and np.isnan(out["d_hi"][0])
    with pytest.raises(ParameterError):
        effect_sizes(np.zeros((2, 1)))


def test_percentile_interval_leaves_out_undefined_resamples():
    b = np.array([np.nan, 1.0, 2.0, 3.0, np.inf, 4.0, 5.0])
    assert percentile_interval(b, 0.5) == (2.0, 4.0)
    lo, hi = percentile_interval(np.array([1.0, np.nan, 2.0]), 0.5, finite_only=False)
    assert np.isnan(lo) and np.isnan(hi)
    assert all(np.isnan(percentile_interval(np.full(4, np.nan))))


def test_topic_bootstrap_mean_one_row_per_topic_is_the_topic_mean_interval():
    """With one row per topic a group's resampled mean is the mean of the drawn topics, so the
    interval is a percentile interval of bootstrap means; a group without finite values is NaN."""
    rng = np.random.default_rng(6)
    v = rng.random(12)
    frame = pd.DataFrame({"topic": [f"t{i:02d}" for i in range(12)] * 2, "g": ["a"] * 12 + ["b"] * 12,
                          "v": np.concatenate([v, np.full(12, np.nan)])})
    got = topic_bootstrap_mean(frame, "v", ["g"], n_boot=400, seed=3, level=0.9)
    from maxent.stats import resample_counts

    means = resample_counts(12, 400, 3) @ v / 12
    assert got.loc[0, "mean"] == pytest.approx(v.mean())
    assert (got.loc[0, "lo"], got.loc[0, "hi"]) == pytest.approx(tuple(np.quantile(means, [0.05, 0.95])), abs=1e-15)
    assert got.loc[0, "n"] == 12 and got.loc[0, "topics"] == 12
    assert got.loc[1, "n"] == 0 and got.loc[1, ["mean", "lo", "hi"]].isna().all()
    with pytest.raises(ParameterError):
        topic_bootstrap_mean(frame, "v", ["g"], n_boot=0)
