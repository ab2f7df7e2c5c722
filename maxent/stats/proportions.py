r"""Proportions: Wilson's interval of a success rate and McNemar's test of two paired ones.

* :func:`wilson_interval`: the score interval of Wilson (1927) for k successes in n trials,

  .. math:: \frac{\hat p + z^2/2n \pm z \sqrt{\hat p (1 - \hat p)/n + z^2/4n^2}}{1 + z^2/n},
     \quad \hat p = k/n,\ z = z_{(1 + \text{level})/2},

  which stays inside [0, 1] and keeps its coverage near 0 and 1 (``scipy.stats.binomtest``'s
  ``proportion_ci(method="wilson")``).
* :func:`mcnemar_exact`: McNemar's test of two classifiers on the same items (e.g. two metrics
  finding the same run pairs significant or not), exact form: of the :math:`b + c` discordant
  items, b ~ Binomial(b + c, 1/2) under the null; two-sided p-value, 1 when no item is
  discordant.
"""
from __future__ import annotations

from maxent.errors import ParameterError

__all__ = ["wilson_interval", "mcnemar_exact"]


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval (low, high) of the success probability after k successes in n trials."""
    from scipy import stats

    if not (0 <= k <= n and n >= 1):
        raise ParameterError(f"the Wilson interval needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (only the first says yes)
    and c (only the second does): the binomial test of b among b + c at 1/2."""
    from scipy import stats

    if b < 0 or c < 0:
        raise ParameterError(f"discordant counts must be >= 0, got {b} and {c}")
    if b + c == 0:
        return 1.0
    return float(stats.binomtest(int(b), int(b + c), 0.5).pvalue)
