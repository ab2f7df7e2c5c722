r"""Percentile bootstrap intervals over topics (Efron & Tibshirani 1993, section 13.3): the
:math:`((1 - \text{level})/2, (1 + \text{level})/2)` quantiles of a statistic over
:func:`maxent.stats.bootstrap.topic_bootstrap` resamples.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from maxent.errors import ParameterError
from maxent.stats.bootstrap import block_rows, topic_bootstrap

if TYPE_CHECKING:  # pandas loads where a frame is built
    import pandas as pd

__all__ = ["percentile_interval", "bootstrap_ci", "effect_sizes", "topic_bootstrap_mean"]


def percentile_interval(boot, level: float = 0.95, *, finite_only: bool = True) -> tuple[float, float]:
    """The (1 - level)/2 and (1 + level)/2 quantiles of the resampled statistic ``boot``;
    ``finite_only`` leaves out NaN and infinite resamples ((nan, nan) when none is left)."""
    boot = np.asarray(boot, dtype=np.float64)
    if finite_only:
        boot = boot[np.isfinite(boot)]
        if len(boot) == 0:
            return float("nan"), float("nan")
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_ci(d, *, level: float = 0.95, n_resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    r"""Percentile bootstrap confidence interval of the mean of paired differences d (as
    ``scipy.stats.bootstrap`` with ``method="percentile"``).

    Parameters
    ----------
    d : array_like, shape (n,): per-topic differences a - b
    level : confidence level in (0, 1); n_resamples, seed : bootstrap samples and their seed

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
    means = topic_bootstrap(lambda idx: d[idx].mean(axis=1), n, n_resamples, seed, block=max(1, 2_000_000 // n))
    return percentile_interval(means, level, finite_only=False)


def _dz(x: np.ndarray) -> np.ndarray:
    """Cohen's d_z of the rows of x; NaN where the standard deviation is 0."""
    sd = x.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, x.mean(axis=-1) / np.where(sd > 0, sd, 1.0), np.nan)


#: resampled statistics :func:`effect_sizes` keeps at once (2 per resample and pair): 256 MiB
KEPT_ELEMENTS = 2 ** 25


def effect_sizes(diffs, n_boot: int = 10000, seed: int = 0, level: float = 0.95, *,
                 block: int | None = None, kept: int = KEPT_ELEMENTS) -> pd.DataFrame:
    r"""Mean difference and Cohen's :math:`d_z = \bar d / s_d` with percentile bootstrap intervals.

    diffs : (P, n) per-topic differences, the resamples shared by all pairs. Returns a frame of
    P rows: ``diff``, ``diff_lo``, ``diff_hi``, ``d``, ``d_lo``, ``d_hi`` (d_z NaN when s_d = 0).

    Memory is bounded: resamples are drawn ``block`` rows at a time (default
    :func:`~maxent.stats.bootstrap.block_rows`), and the intervals of at most ``kept / (2 B)``
    pairs are computed per pass over the resamples (the same draws again for the next pairs).
    Neither changes the numbers.
    """
    import pandas as pd

    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    P, n = d.shape
    if n < 2:
        raise ParameterError(f"effect sizes need at least 2 topics, got {n}")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ParameterError(f"n_boot must be >= 1, got {n_boot}")
    rows_at_once = block_rows(n, n_boot) if block is None else max(1, min(int(block), n_boot))
    group = max(1, int(kept) // (2 * n_boot))            # pairs per pass over the resamples

    rows = {k: np.empty(P) for k in ("diff", "diff_lo", "diff_hi", "d", "d_lo", "d_hi")}
    rows["diff"] = d.mean(axis=1)
    rows["d"] = _dz(d)
    for g0 in range(0, P, group):
        part = d[g0:g0 + group]

        def statistic(idx, part=part):                  # (rows, pairs, 2): mean and d_z
            out = np.empty((len(idx), len(part), 2))
            for a in range(len(part)):                  # pairs, not documents: rows x n per pair
                boot = part[a][idx]                     # (rows, n)
                out[:, a, 0] = boot.mean(axis=1)
                out[:, a, 1] = _dz(boot)
            return out

        boot = topic_bootstrap(statistic, n, n_boot, seed, block=rows_at_once)
        for a in range(len(part)):
            k = g0 + a
            rows["diff_lo"][k], rows["diff_hi"][k] = percentile_interval(boot[:, a, 0], level, finite_only=False)
            rows["d_lo"][k], rows["d_hi"][k] = percentile_interval(boot[:, a, 1], level)
        del boot
    return pd.DataFrame(rows)


def topic_bootstrap_mean(frame: pd.DataFrame, value: str, by: Sequence[str], *, level: float = 0.95,
                         n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Mean of ``value`` per group of ``by`` with a percentile bootstrap interval over the
    ``topic`` column (one draw of topics, as weights, for every group). Returns ``by``,
    ``mean``, ``lo``, ``hi``, ``n`` (rows) and ``topics``."""
    import pandas as pd

    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ParameterError(f"n_boot must be >= 1, got {n_boot}")
    by = list(by)
    topics, t_index = np.unique(frame["topic"].astype(str).to_numpy(), return_inverse=True)
    T = len(topics)
    values = frame[value].to_numpy(dtype=np.float64)
    groups = list(frame.groupby(by, sort=False).indices.items())
    # per group: the sum of its finite values and their count per topic, columns of (T, G)
    sums, counts, means, ns = np.zeros((T, len(groups))), np.zeros((T, len(groups))), [], []
    for j, (_, idx) in enumerate(groups):
        v, t = values[idx], t_index[idx]
        ok = np.isfinite(v)
        v, t = v[ok], t[ok]
        sums[:, j] = np.bincount(t, weights=v, minlength=T)
        counts[:, j] = np.bincount(t, minlength=T)
        means.append(v.mean() if len(v) else np.nan)
        ns.append(len(v))

    def statistic(W):                                   # (rows, G) weighted means of the groups
        with np.errstate(invalid="ignore", divide="ignore"):
            return (W @ sums) / (W @ counts)

    # counts in blocks of rows (the same draws), so memory stays O(T)
    boot = topic_bootstrap(statistic, T, n_boot, seed, weights=True, block=max(1, min(n_boot, 2**22 // max(T, 1))))
    rows = []
    for j, (key, _) in enumerate(groups):
        lo, hi = percentile_interval(boot[:, j], level)
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "mean": means[j], "lo": lo, "hi": hi,
                     "n": ns[j], "topics": int((counts[:, j] > 0).sum())})
    return pd.DataFrame(rows, columns=[*by, "mean", "lo", "hi", "n", "topics"])
