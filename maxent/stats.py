r"""Paired significance tests over topics (Yilmaz & Robertson 2010 section 5).

Yilmaz & Robertson (2010) mark a difference between two systems as significant only when the paired
t-test, the Wilcoxon signed-rank test and the sign test all reject at 95% (after Sanderson &
Zobel 2005). :func:`paired_tests` runs the three on per-topic values and reports each
p-value and the joint verdict. All tests are two-sided.

Conventions:

* t-test: :math:`t = \bar d / (s_d / \sqrt n)` on the differences d, n - 1 degrees of
  freedom (``scipy.stats.ttest_rel``); p = 1 when all differences are equal (no variance).
* Wilcoxon signed-rank: zero differences are dropped (Wilcoxon's convention), exact null
  distribution for small samples without ties, normal approximation otherwise
  (``scipy.stats.wilcoxon``); p = 1 when every difference is 0.
* sign test: ties dropped, two-sided binomial test of #(d > 0) among the non-zero
  differences with p = 1/2.
* bootstrap: Sakai's paired bootstrap test (:func:`maxent.bootstrap.paired_bootstrap_asl`,
  the library's one implementation): the studentised statistic
  :math:`t = \bar d / (s_d / \sqrt n)`, null enforced by shifting d to mean 0, two-sided
  achieved significance level :math:`\#\{|t^*| \ge |t|\} / B`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maxent.errors import ParameterError

__all__ = ["PairedTests", "paired_t", "wilcoxon", "sign_test", "paired_bootstrap", "paired_tests",
           "bootstrap_ci", "minimum_detectable_effect", "family_mde", "queries_needed"]


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
    r"""Two-sided achieved significance level of Sakai's paired bootstrap test (Sakai 2006).

    Delegates to :func:`maxent.bootstrap.paired_bootstrap_asl` with ``diffs = a - b``,
    ``n_boot = n_resamples``: the topics are resampled with replacement from the shifted
    differences :math:`w = d - \bar d` and the ASL is the fraction of resamples whose
    studentised statistic :math:`|t(w^*)| = |\bar w^*| / (s_{w^*} / \sqrt n)` is at least
    :math:`|t(d)|`.

    Notes
    -----
    Until this library had one bootstrap, this function compared resampled *means*
    (Efron & Tibshirani's shift method); it now uses Sakai's *studentised* statistic, as the
    discriminative-power analysis does, so both report the same number. The resampling
    (``numpy.random.default_rng(seed)``, n_resamples x n topic indices) is unchanged.
    Conventions of :mod:`maxent.bootstrap`: all differences 0 gives 1; a constant non-zero
    difference gives 0.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Per-topic values of two systems on the same topics.
    n_resamples : int
        Bootstrap samples B.
    seed : int
        Seed of the topic resampling.

    Returns
    -------
    float
        ASL in [0, 1].
    """
    from maxent.bootstrap import paired_bootstrap_asl

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


def bootstrap_ci(d, *, level: float = 0.95, n_resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    r"""Percentile bootstrap confidence interval of the mean of paired differences d.

    Topics are resampled with replacement B = ``n_resamples`` times
    (``numpy.random.default_rng(seed)``); the interval is the
    :math:`(1 - \text{level})/2` and :math:`(1 + \text{level})/2` quantiles of the B
    resampled means (Efron & Tibshirani 1993, section 13.3; ``scipy.stats.bootstrap`` with
    ``method="percentile"`` computes the same interval).

    Parameters
    ----------
    d : array_like, shape (n,)
        Per-topic differences a - b.
    level : float
        Confidence level in (0, 1).
    n_resamples, seed : int
        Bootstrap samples and the seed of the topic resampling.

    Returns
    -------
    (low, high) : tuple of float
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise ParameterError(f"bootstrap_ci needs a 1-d array of at least 2 differences, got shape {d.shape}")
    if not 0 < level < 1 or n_resamples < 1:
        raise ParameterError(f"level must be in (0, 1) and n_resamples >= 1, got {level}, {n_resamples}")
    n = len(d)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // n)
    for a in range(0, n_resamples, chunk):
        b = min(n_resamples, a + chunk)
        means[a:b] = d[rng.integers(0, n, size=(b - a, n))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def minimum_detectable_effect(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Smallest true mean difference the two-sided paired t-test detects with the given power.

    With n topics and per-topic differences of standard deviation ``sd``, the test statistic
    follows a non-central t with n - 1 degrees of freedom and non-centrality
    :math:`\delta \sqrt n / \mathrm{sd}`; the MDE is the :math:`\delta` at which
    :math:`P(|T| > t_{1-\alpha/2, n-1}) = \text{power}` (solved with ``scipy.optimize.brentq``).
    For large n it tends to :math:`(z_{1-\alpha/2} + z_{\text{power}})\,\mathrm{sd}/\sqrt n`.
    Returns 0 when sd is 0 and nan when sd is not finite.
    """
    from scipy import optimize, stats

    if n < 2:
        raise ParameterError(f"the minimum detectable effect needs n >= 2 topics, got {n}")
    if not 0 < alpha < power < 1:
        raise ParameterError(f"0 < alpha < power < 1 is required, got alpha={alpha}, power={power}")
    if not np.isfinite(sd):
        return float("nan")
    if sd <= 0:
        return 0.0
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)

    def excess(nc):
        # the lower tail P(T < -crit) is below P(T < 0) = Phi(-nc); where scipy's non-central
        # t returns nan for it (df = 19, nc = 8 at alpha = 0.005), it is below 1e-15: 0
        lower = stats.nct.cdf(-crit, df, nc)
        return stats.nct.sf(crit, df, nc) + (lower if np.isfinite(lower) else 0.0) - power

    hi = 1.0
    while excess(hi) < 0:
        hi *= 2
    nc = optimize.brentq(excess, 0.0, hi, xtol=1e-10)
    return float(nc * sd / np.sqrt(n))


def family_mde(sd: float, n: int, *, n_claims: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Minimum detectable effect of one claim among ``n_claims`` tested with Holm's correction.

    Holm (1979) compares the smallest p-value with :math:`\alpha / m`, the next with
    :math:`\alpha / (m - 1)` and so on, so :math:`\alpha / m` is the most stringent level a
    claim can face. The MDE at that level (:func:`minimum_detectable_effect` with
    ``alpha / n_claims``) is therefore an effect that the Holm-corrected paired t-test detects
    with at least the given power whatever the other claims' p-values are.
    """
    if n_claims < 1:
        raise ParameterError(f"n_claims must be >= 1, got {n_claims}")
    return minimum_detectable_effect(sd, n, alpha=alpha / n_claims, power=power)


def queries_needed(sd: float, mde: float, *, n_claims: int = 1, alpha: float = 0.05, power: float = 0.8,
                   max_queries: int = 10_000_000) -> int:
    r"""Smallest number of test queries n with :func:`family_mde` ``(sd, n) <= mde``.

    The power analysis before a run: ``sd`` is the standard deviation of the per-query
    differences a pilot measured, ``mde`` the effect the run must be able to detect. Starts from
    the normal approximation :math:`n \approx ((z_{1-\alpha/2m} + z_{\text{power}})\,
    \mathrm{sd} / \mathrm{mde})^2` and settles the exact n by bisection on the non-central t
    (the MDE decreases with n). Returns 2 when sd is 0.
    """
    from scipy import stats

    if not (np.isfinite(mde) and mde > 0):
        raise ParameterError(f"mde must be a finite number > 0, got {mde}")
    if not (np.isfinite(sd) and sd >= 0):
        raise ParameterError(f"sd must be a finite number >= 0, got {sd}")
    if sd == 0:
        return 2

    def ok(n):
        return family_mde(sd, n, n_claims=n_claims, alpha=alpha, power=power) <= mde

    a = alpha / n_claims
    guess = int(np.ceil(((stats.norm.ppf(1 - a / 2) + stats.norm.ppf(power)) * sd / mde) ** 2))
    lo, hi = max(1, guess - 1), max(2, guess)    # the exact n is never below the normal one
    while not ok(hi):                        # the t distribution's tails make n a little larger
        lo, hi = hi, hi * 2
        if hi > max_queries:
            raise ParameterError(f"more than max_queries={max_queries} queries needed for mde={mde} at sd={sd}")
    while hi - lo > 1:                       # invariant: not ok(lo) or lo == 1, ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return max(2, hi)
