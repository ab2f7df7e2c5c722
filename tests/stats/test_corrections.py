"""Holm and Benjamini-Hochberg adjusted p-values (maxent.stats.corrections) against hand-computed values."""
import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.stats import CORRECTIONS, adjust, benjamini_hochberg, family_mde, holm, minimum_detectable_effect

P = np.array([0.01, 0.04, 0.03, 0.005])


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; running max
    # 0.02, 0.03, 0.06, 0.06; back in input order:
    assert holm(P) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert np.array_equal(adjust(P, "holm"), holm(P))


def test_benjamini_hochberg_by_hand():
    # sorted p times m / i = 4 / 1, 4 / 2, 4 / 3, 4 / 4: 0.02, 0.02, 0.04, 0.04; running min from
    # the largest: unchanged; back in input order:
    assert benjamini_hochberg(P) == pytest.approx([0.02, 0.04, 0.04, 0.02], abs=1e-15)
    assert np.array_equal(adjust(P, "bh"), benjamini_hochberg(P))


def test_capped_at_one_ties_and_empty():
    p = np.array([0.6, 0.2, 0.2, 0.9])
    assert holm(p) == pytest.approx([1.0, 0.8, 0.8, 1.0])
    # BH: 0.2 * 4 / 1, 0.2 * 4 / 2, 0.6 * 4 / 3, 0.9: running min from the top 0.4, 0.4, 0.8, 0.9
    assert benjamini_hochberg(p) == pytest.approx([0.8, 0.4, 0.4, 0.9])
    assert len(adjust(np.array([]), "holm")) == 0
    assert holm([0.3]) == pytest.approx([0.3]) and benjamini_hochberg([0.3]) == pytest.approx([0.3])


def test_none_copies_and_unknown_method_fails():
    out = adjust(P, "none")
    assert np.array_equal(out, P) and out is not P
    assert CORRECTIONS == ("holm", "bh", "none")
    with pytest.raises(ParameterError, match="correction"):
        adjust(P, "bonferroni")


def test_holm_is_never_below_bh_and_never_above_bonferroni():
    p = np.random.default_rng(0).random(40) ** 3
    assert np.all(benjamini_hochberg(p) <= holm(p) + 1e-15)
    assert np.all(holm(p) <= np.minimum(1.0, len(p) * p) + 1e-15)


def test_family_mde_uses_holms_smallest_level():
    """Holm's most stringent comparison is alpha / m: family_mde is the MDE at that level."""
    assert family_mde(0.1, 30, n_claims=4, alpha=0.05) == minimum_detectable_effect(0.1, 30, alpha=0.05 / 4)
