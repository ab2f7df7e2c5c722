"""Expected reciprocal rank (Chapelle et al. 2009; METHOD sections 2-3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import cutoff_mask, gain_vector
from maxent.metrics.base import Metric, Param
from maxent.metrics.dcg import GAIN, _check_gain

__all__ = ["ERR"]


@dataclass(frozen=True, eq=False, repr=False)
class ERR(Metric):
    r"""Expected reciprocal rank:
    :math:`ERR@k = \sum_{n\le k}\frac1n r_n\prod_{m<n}(1-r_m)`,
    :math:`r_n = gain(i_n) / (gain(c) + 1)`, c = ``max_grade``.

    With the default exponential gain this is Chapelle's :math:`r = (2^{i}-1)/2^{c}`; with
    linear or mapped gains it is NTCIREVAL's ERR. ``max_grade`` defaults to the highest
    grade level of the qrels (L - 1). Under a graded product distribution
    :math:`E[ERR]` replaces r_n by :math:`E[r_n]=\sum_z p_n(z) r(z)` (independence).
    Unjudged documents have r = 0.
    """

    cutoff: int | None = None
    gain: object = "exp"
    max_grade: int | None = None
    NAME: ClassVar[str] = "ERR"
    TREC_NAME: ClassVar[str | None] = None
    PARAMS: ClassVar = {
        "cutoff": Param(int, None, "rank cutoff k"),
        "gain": Param(str, "exp", GAIN.desc),
        "max_grade": Param(int, None, "c, the maximum grade (default: the qrels' highest level)"),
    }
    GRADED: ClassVar[bool] = True

    def validate(self):
        _check_gain(self)
        if self.max_grade is not None:
            self._check(isinstance(self.max_grade, int) and self.max_grade >= 1, "max_grade must be >= 1")
        super().validate()

    def satisfaction(self, levels: int) -> np.ndarray:
        """(L,) stopping probability r(z) of each grade level."""
        c = (levels - 1) if self.max_grade is None else self.max_grade
        top = gain_vector(max(c, levels - 1) + 1, self.gain)
        g = gain_vector(levels, self.gain)
        return np.clip(g / (top[c] + 1.0), 0.0, 1.0)

    def value(self, lists):
        r = self.satisfaction(lists.levels)
        rn = np.where(lists.grades >= 0, r[np.maximum(lists.grades, 0)], 0.0)
        return self._from_r(rn)

    def _from_r(self, rn):
        N = rn.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        A = np.cumprod(np.concatenate((np.ones((len(rn), 1)), 1.0 - rn[:, :-1]), axis=1), axis=1)
        return (rn / n * A * cutoff_mask(N, self.cutoff)).sum(axis=1)

    def _expectation(self, p, lists):
        return self._from_r(p @ self.satisfaction(p.shape[2]))

    def _gradient(self, p, lists):
        r = self.satisfaction(p.shape[2])
        rn = p @ r
        N = rn.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        mask = cutoff_mask(N, self.cutoff)
        A = np.cumprod(np.concatenate((np.ones((len(rn), 1)), 1.0 - rn[:, :-1]), axis=1), axis=1)
        # dERR/dr_j = A_j/j - sum_{n>j} (r_n/n) prod_{m<n, m!=j}(1-r_m); r <= 1 - 1/(gain(c)+1) < 1
        term = rn / n * A * mask
        after = np.cumsum(term[:, ::-1], axis=1)[:, ::-1] - term
        dr = A * mask / n - after / (1.0 - rn)
        return dr[:, :, None] * r[None, None, :]
