"""Wilson intervals and McNemar's exact test (maxent.stats.proportions) against closed forms."""
import math
from statistics import NormalDist

import pytest

from maxent.errors import ParameterError
from maxent.stats import mcnemar_exact, wilson_interval


def _wilson(k, n, level):
    """Oracle: Wilson's (1927) score interval by its formula."""
    z = NormalDist().inv_cdf((1 + level) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.mark.parametrize("k, n, level", [(3, 10, 0.95), (31, 45, 0.95), (7, 45, 0.9), (0, 10, 0.95),
                                         (10, 10, 0.95), (500, 1000, 0.99)])
def test_wilson_closed_form(k, n, level):
    lo, hi = wilson_interval(k, n, level)
    ref = _wilson(k, n, level)
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_bad_counts():
    for k, n in ((-1, 10), (11, 10), (0, 0)):
        with pytest.raises(ParameterError):
            wilson_interval(k, n)
    with pytest.raises(ParameterError):
        wilson_interval(1, 2, level=1.0)


def test_mcnemar_exact_by_hand():
    # 8 discordant pairs one way, 2 the other: p = 2 * P(Bin(10, 1/2) <= 2) = 2 * (1 + 10 + 45) / 1024
    assert mcnemar_exact(8, 2) == pytest.approx(112 / 1024, abs=1e-15)
    assert mcnemar_exact(2, 8) == mcnemar_exact(8, 2)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32, abs=1e-15)
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(0, 0) == 1.0          # no discordant item: no evidence either way
    with pytest.raises(ParameterError):
        mcnemar_exact(-1, 3)
