r"""Power analysis of the paired t-test over topics: minimum detectable effects and test-set sizes.

With n topics whose per-topic differences have standard deviation sd, the two-sided paired
t-test at level :math:`\alpha` detects a true mean difference :math:`\delta` with the power
of a non-central t with n - 1 degrees of freedom and non-centrality
:math:`\delta \sqrt n / \mathrm{sd}`. :func:`minimum_detectable_effect` solves it for
:math:`\delta`, :func:`family_mde` for one claim of a family under Holm's correction
(:mod:`maxent.stats.corrections`), :func:`queries_needed` for n.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError

__all__ = ["minimum_detectable_effect", "family_mde", "queries_needed"]


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
