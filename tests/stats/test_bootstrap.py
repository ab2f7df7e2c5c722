"""The topic resampler and Sakai's paired bootstrap test (maxent.stats.bootstrap)."""
import numpy as np
import pytest
from scipy import stats

from maxent.stats import discriminative_power, paired_bootstrap_asl
from maxent.errors import ParameterError


def test_identical_runs_have_asl_one():
    rng = np.random.default_rng(1)
    v = rng.random(40)
    assert paired_bootstrap_asl(v - v, n_boot=500)[0] == 1.0


def test_clearly_different_runs_have_asl_zero():
    rng = np.random.default_rng(2)
    a = rng.random(50)
    b = a - 0.2 + rng.normal(0, 0.02, 50)  # better on every topic by about 0.2
    assert paired_bootstrap_asl(a - b, n_boot=1000)[0] == 0.0


def test_noise_only_difference_is_not_significant():
    rng = np.random.default_rng(3)
    d = rng.normal(0, 0.1, 50)
    d -= d.mean()  # observed mean exactly 0 -> t = 0 -> every resample is at least as extreme
    assert paired_bootstrap_asl(d, n_boot=500)[0] == 1.0


def test_asl_close_to_t_test_p_value():
    # For moderate n the bootstrap ASL approximates the paired t-test's two-sided p-value.
    rng = np.random.default_rng(4)
    d = rng.normal(0.03, 0.1, 50)
    asl = paired_bootstrap_asl(d, n_boot=4000, seed=7)[0]
    p = stats.ttest_1samp(d, 0.0).pvalue
    assert abs(asl - p) < 0.03


def test_deterministic_with_seed_and_chunking():
    rng = np.random.default_rng(5)
    d = rng.normal(0.01, 0.1, (30, 25))
    a = paired_bootstrap_asl(d, n_boot=300, seed=11)
    b = paired_bootstrap_asl(d, n_boot=300, seed=11, chunk=7)
    c = paired_bootstrap_asl(d, n_boot=300, seed=12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_discriminative_power_pairs():
    rng = np.random.default_rng(6)
    good = rng.uniform(0.5, 0.9, 30)
    bad = good - 0.4 + rng.normal(0, 0.05, 30)
    v = np.stack([good, bad, good])  # runs 0 and 2 identical, run 1 far worse
    pairs, asl, frac = discriminative_power(v, n_boot=200)
    assert pairs.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert asl[1] == 1.0 and asl[0] == 0.0 and asl[2] == 0.0
    assert frac == pytest.approx(2 / 3)


def test_bad_parameters():
    with pytest.raises(ParameterError):
        paired_bootstrap_asl(np.zeros((2, 1)))
    with pytest.raises(ParameterError):
        paired_bootstrap_asl(np.zeros((2, 5)), n_boot=0)


def test_resamples_are_one_seeded_stream_of_indices_or_counts():
    from maxent.stats import resample_counts, resample_indices, resample_topics

    idx = resample_indices(9, 50, seed=3)
    assert idx.shape == (50, 9) and idx.min() >= 0 and idx.max() < 9
    assert np.array_equal(idx, np.random.default_rng(3).integers(0, 9, size=(50, 9)))
    W = resample_counts(9, 50, seed=3)
    assert W.dtype == np.float64 and np.all(W.sum(axis=1) == 9)
    # counts do not depend on the block size; they are the multinomial draws row by row
    blocks = list(resample_topics(9, 50, seed=3, weights=True, block=7))
    assert [len(b) for b in blocks] == [7] * 7 + [1]
    assert np.array_equal(np.concatenate(blocks), W)
    assert resample_counts(0, 4).shape == (4, 0)
    with pytest.raises(ParameterError):
        next(resample_topics(9, 0))


def test_topic_bootstrap_stacks_the_statistic_of_every_block():
    from maxent.stats import resample_topics, topic_bootstrap

    d = np.random.default_rng(1).random(11)
    got = topic_bootstrap(lambda idx: d[idx].mean(axis=1), 11, 100, seed=2, block=30)
    want = np.concatenate([d[i].mean(axis=1) for i in resample_topics(11, 100, seed=2, block=30)])
    assert got.shape == (100,) and np.array_equal(got, want)
    two = topic_bootstrap(lambda W: np.stack([W @ d, W.sum(axis=1)], axis=1), 11, 60, seed=2, weights=True)
    assert two.shape == (60, 2) and np.all(two[:, 1] == 11)


def test_paired_bootstrap_asl_uses_the_shared_indices():
    from maxent.stats import resample_indices
    from maxent.stats.bootstrap import _t_stat

    d = np.random.default_rng(9).normal(0.02, 0.1, (2, 12))
    idx = resample_indices(12, 250, seed=4)
    w = d - d.mean(axis=1, keepdims=True)
    want = (np.abs(_t_stat(w[:, idx])) >= np.abs(_t_stat(d))[:, None] - 1e-12).mean(axis=1)
    assert np.array_equal(paired_bootstrap_asl(d, n_boot=250, seed=4), want)


@pytest.mark.parametrize("high", [2, 3, 30, 2 ** 31 - 1, 2 ** 33])
def test_integers_in_row_blocks_are_the_one_call_stream(high):
    """The blocked resampling relies on this: ``Generator.integers`` (int64, the default) gives
    the same numbers in several calls as in one, for odd block sizes too (the half-used 32-bit
    word stays in the bit generator); a small dtype buffers locally and does not."""
    whole = np.random.default_rng(9).integers(0, high, size=(23, 7))
    rng = np.random.default_rng(9)
    parts = [rng.integers(0, high, size=(r, 7)) for r in (1, 5, 3, 13, 1)]
    assert np.array_equal(np.concatenate(parts), whole)
    rng = np.random.default_rng(9)
    assert np.array_equal(np.concatenate([rng.random((r, 7)) for r in (4, 19)]),
                          np.random.default_rng(9).random((23, 7)))
    if high <= 255:
        small = np.random.default_rng(9).integers(0, high, size=(23, 7), dtype=np.uint8)
        rng = np.random.default_rng(9)
        split = np.concatenate([rng.integers(0, high, size=(r, 7), dtype=np.uint8) for r in (1, 5, 3, 13, 1)])
        assert not np.array_equal(split, small)


def test_resample_indices_do_not_depend_on_the_block():
    from maxent.stats import resample_indices, resample_topics

    whole = resample_indices(13, 101, seed=4)
    assert np.array_equal(np.concatenate(list(resample_topics(13, 101, seed=4, block=10))), whole)


@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_blocked_tests_equal_one_block(block):
    from maxent.stats import effect_sizes, randomisation_test

    d = np.random.default_rng(3).normal(0.03, 0.2, size=(4, 21))
    assert np.array_equal(paired_bootstrap_asl(d, 999, seed=5, block=block), paired_bootstrap_asl(d, 999, seed=5))
    assert np.array_equal(randomisation_test(d, 999, seed=5, block=block), randomisation_test(d, 999, seed=5))
    exact = d[:, :9]                                              # 2^9 <= 999: enumerated in blocks
    assert np.array_equal(randomisation_test(exact, 999, block=block), randomisation_test(exact, 999))
    assert effect_sizes(d, 999, seed=5, block=block, kept=2 * 999).equals(effect_sizes(d, 999, seed=5))
