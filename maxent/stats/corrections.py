"""Multiple-comparison corrections of the p-values of one family of tests: Holm (1979,
family-wise error rate) and Benjamini & Hochberg (1995, false discovery rate); reject where
the adjusted p-value is below alpha.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError

__all__ = ["CORRECTIONS", "adjust", "holm", "benjamini_hochberg"]

#: the ``method`` names of :func:`adjust`
CORRECTIONS = ("holm", "bh", "none")


def adjust(p, method: str = "holm") -> np.ndarray:
    r"""p-values adjusted for multiple comparisons over one family (shape (m,) in and out).

    * ``holm`` (Holm 1979): sorted :math:`p_{(1)} \le .. \le p_{(m)}`,
      :math:`\tilde p_{(k)} = \max_{i \le k} \min(1, (m - i + 1) p_{(i)})`.
    * ``bh`` (Benjamini & Hochberg 1995):
      :math:`\tilde p_{(k)} = \min_{i \ge k} \min(1, m p_{(i)} / i)`.
    * ``none``: unchanged.
    """
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    s = p[order]
    i = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * s))
    elif method == "bh":
        adj = np.minimum.accumulate(np.minimum(1.0, m * s / i)[::-1])[::-1]
    else:
        raise ParameterError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    out = np.empty(m)
    out[order] = adj
    return out


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (:func:`adjust` with ``method="holm"``)."""
    return adjust(p, "holm")


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (:func:`adjust` with ``method="bh"``)."""
    return adjust(p, "bh")
