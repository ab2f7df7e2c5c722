r"""Paired significance tests over topics (Yilmaz & Robertson 2010 section 5).

Yilmaz & Robertson (2010) call a difference significant only when the paired t-test, the
Wilcoxon signed-rank test and the sign test all reject at 95% (after Sanderson & Zobel 2005):
:func:`paired_tests`. All tests are two-sided: the t-test (``scipy.stats.ttest_rel``; p = 1
without variance), Wilcoxon (zero differences dropped), the sign test (ties dropped), Sakai's
bootstrap (:func:`maxent.stats.bootstrap.paired_bootstrap_asl`) and Fisher's randomisation
test (Smucker et al., CIKM 2007).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maxent.errors import ParameterError

__all__ = ["PairedTests", "paired_t", "wilcoxon", "sign_test", "paired_bootstrap", "paired_tests",
           "randomisation_test"]


def _diff(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"paired tests need two 1-d arrays of equal length, got {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ParameterError("paired tests need at least 2 topics")
    return a - b


def paired_t(a, b) -> float:
    """Two-sided p-value of the paired t-test of mean(a - b) = 0; shape (n,) inputs."""
    from scipy import stats

    d = _diff(a, b)
    if np.allclose(d, d[0], rtol=0, atol=1e-15):
        return 1.0 if abs(d[0]) < 1e-15 else 0.0
    return float(stats.ttest_rel(a, b).pvalue)


def wilcoxon(a, b) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test (zero differences dropped)."""
    from scipy import stats

    d = _diff(a, b)
    d = d[np.abs(d) > 1e-15]
    if len(d) == 0:
        return 1.0
    return float(stats.wilcoxon(d, zero_method="wilcox").pvalue)


def sign_test(a, b) -> float:
    """Two-sided p-value of the sign test: #(a > b) ~ Binomial(n_nonzero, 1/2)."""
    from scipy import stats

    d = _diff(a, b)
    pos = int((d > 1e-15).sum())
    neg = int((d < -1e-15).sum())
    if pos + neg == 0:
        return 1.0
    return float(stats.binomtest(pos, pos + neg, 0.5).pvalue)


def paired_bootstrap(a, b, *, n_resamples: int = 10000, seed: int = 0) -> float:
    r"""Two-sided achieved significance level of Sakai's paired bootstrap test (Sakai 2006):
    :func:`maxent.stats.bootstrap.paired_bootstrap_asl` of ``a - b``.

    Parameters
    ----------
    a, b : array_like, shape (n,): per-topic values of two systems on the same topics
    n_resamples : bootstrap samples B; seed : of the topic resampling

    Returns
    -------
    float: ASL in [0, 1]
    """
    from maxent.stats.bootstrap import paired_bootstrap_asl

    d = _diff(a, b)
    return float(paired_bootstrap_asl(d[None, :], n_boot=n_resamples, seed=seed)[0])


@dataclass(frozen=True)
class PairedTests:
    """Result of :func:`paired_tests` for systems a and b over the same topics."""

    mean_a: float
    mean_b: float
    p_t: float
    p_wilcoxon: float
    p_sign: float
    alpha: float

    @property
    def significant(self) -> bool:
        """All three tests reject at level ``alpha`` (the rule of Yilmaz & Robertson 2010)."""
        return max(self.p_t, self.p_wilcoxon, self.p_sign) < self.alpha

    @property
    def difference(self) -> float:
        return self.mean_a - self.mean_b


def paired_tests(a, b, *, alpha: float = 0.05) -> PairedTests:
    """Paired t-test, Wilcoxon signed-rank and sign test of per-topic values a vs b."""
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must be in (0, 1), got {alpha}")
    _diff(a, b)
    return PairedTests(float(np.mean(a)), float(np.mean(b)), paired_t(a, b), wilcoxon(a, b),
                       sign_test(a, b), alpha)


def randomisation_test(diffs, n_permutations: int = 10000, seed: int = 0, chunk: int = 64,
                       block: int | None = None) -> np.ndarray:
    r"""Two-sided p-value of Fisher's paired randomisation test for each row of differences.

    .. math:: p = \#\{s : |\textstyle\sum_i s_i d_i| \ge |\sum_i d_i|\} / P

    Parameters
    ----------
    diffs : array_like, shape (P_pairs, n): per-topic differences of system pairs
    n_permutations : random sign vectors P (no +1 correction, as ranx); all :math:`2^n` are
        enumerated, for the exact p, when that is not more
    seed : of the random sign vectors (shared by all pairs)
    chunk : pairs tested at once
    block : sign vectors drawn at once (default :func:`maxent.stats.bootstrap.block_rows`);
        memory is O(block x n), the result does not depend on it

    Returns
    -------
    ndarray, shape (P_pairs,): p-values in [0, 1]; 1 where all differences are 0
    """
    from maxent.stats.bootstrap import block_rows

    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    n = d.shape[1]
    if n < 1:
        raise ParameterError("the randomisation test needs at least 1 topic")
    if n_permutations < 1:
        raise ParameterError(f"n_permutations must be >= 1, got {n_permutations}")
    exact = n < 63 and 2 ** n <= n_permutations
    total = 2 ** n if exact else int(n_permutations)
    rows = block_rows(n, total) if block is None else max(1, min(int(block), total))
    rng = None if exact else np.random.default_rng(seed)
    observed = np.abs(d.sum(axis=1))
    tol = 1e-9 * np.abs(d).sum(axis=1)                # sums equal up to rounding count as ties
    hits = np.zeros(len(d), dtype=np.int64)
    for r0 in range(0, total, rows):
        r = min(rows, total - r0)
        if exact:                                     # sign vectors r0 .. r0 + r - 1 of all 2^n
            bits = (np.arange(r0, r0 + r, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        else:                                         # int64 draws: blocks give the one-block stream
            bits = rng.integers(0, 2, size=(r, n))
        signs = 1.0 - 2.0 * bits                      # (r, n); vector 0 of the enumeration is the identity
        del bits
        for a in range(0, len(d), chunk):
            perm = np.abs(signs @ d[a:a + chunk].T)   # (r, chunk)
            hits[a:a + chunk] += (perm >= observed[a:a + chunk] - tol[a:a + chunk]).sum(axis=0)
    return hits / total
