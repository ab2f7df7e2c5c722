r"""Power analysis of the paired t-test over topics: minimum detectable effects and test-set sizes
(the power of a non-central t with n - 1 degrees of freedom, non-centrality
:math:`\delta \sqrt n / \mathrm{sd}`).
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError

__all__ = ["minimum_detectable_effect", "family_mde", "queries_needed"]


def minimum_detectable_effect(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Smallest true mean difference the two-sided paired t-test detects with the given power.

    The :math:`\delta` at which :math:`P(|T| > t_{1-\alpha/2, n-1}) = \text{power}` for n topics
    whose differences have standard deviation ``sd``; 0 when sd is 0, nan when not finite.
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
        # where scipy returns nan for the lower tail it is below 1e-15: 0
        lower = stats.nct.cdf(-crit, df, nc)
        return stats.nct.sf(crit, df, nc) + (lower if np.isfinite(lower) else 0.0) - power

    hi = 1.0
    while excess(hi) < 0:
        hi *= 2
    nc = optimize.brentq(excess, 0.0, hi, xtol=1e-10)
    return float(nc * sd / np.sqrt(n))


def family_mde(sd: float, n: int, *, n_claims: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Minimum detectable effect of one claim among ``n_claims`` tested with Holm's correction.

    The MDE at :math:`\alpha / m`, the most stringent level Holm (1979) applies, so the
    corrected test detects it with at least the given power whatever the other p-values.
    """
    if n_claims < 1:
        raise ParameterError(f"n_claims must be >= 1, got {n_claims}")
    return minimum_detectable_effect(sd, n, alpha=alpha / n_claims, power=power)


def queries_needed(sd: float, mde: float, *, n_claims: int = 1, alpha: float = 0.05, power: float = 0.8,
                   max_queries: int = 10_000_000) -> int:
    r"""Smallest number of test queries n with :func:`family_mde` ``(sd, n) <= mde``.

    ``sd``: the standard deviation of a pilot's per-query differences; ``mde``: the effect to
    detect. From the normal approximation, settled by bisection; 2 when sd is 0.
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
