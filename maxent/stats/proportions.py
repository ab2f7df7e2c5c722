r"""Proportions: Wilson's (1927) score interval of a success rate and McNemar's exact test of
two paired ones (b ~ Binomial(b + c, 1/2) over the discordant items).
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
