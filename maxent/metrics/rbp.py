"""Rank-biased precision (Moffat & Zobel, "Rank-biased precision for measurement of retrieval
effectiveness", ACM TOIS 27(1), 2008)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import PositionalDeltas
from maxent.metrics._kernels import cutoff_mask, gain_vector
from maxent.metrics.base import Metric, Param
from maxent.metrics.dcg import GAIN, _check_gain
from maxent.metrics.precision import REL

__all__ = ["RBP"]


@dataclass(frozen=True, eq=False, repr=False)
class RBP(PositionalDeltas, Metric):
    r"""Rank-biased precision: :math:`RBP = (1 - p) \sum_{n \le k} u(i_n)\, p^{n-1}`.

    A user moves on from each rank to the next with persistence p (Moffat & Zobel 2008
    section 4; default 0.8 as ir_measures). Binary (``gain`` unset): :math:`u = [i_n \ge rel]`;
    graded: :math:`u(z) = \min(1, \max(0, gain(z) / gain(c)))`, c = ``max_grade`` (default the
    qrels' highest level). Unjudged documents have u = 0 (no residual added); a cutoff k is
    not renormalised. Linear in p. No trec_eval measure.
    """

    p: float = 0.8
    cutoff: int | None = None
    rel: int = 1
    gain: object = None
    max_grade: int | None = None
    NAME: ClassVar[str] = "RBP"
    PARAMS: ClassVar = {
        "p": Param(float, 0.8, "persistence p in (0, 1): probability of reading on to the next rank"),
        "cutoff": Param(int, None, "rank cutoff k"),
        "rel": REL,
        "gain": Param(str, None, "unset: binary at rel; else " + GAIN.desc + ", divided by gain(max_grade)"),
        "max_grade": Param(int, None, "c, the grade of utility 1 when graded (default: the qrels' highest level)"),
    }
    LINEAR_IN_P: ClassVar[bool] = True
    SOLVER_FORM: ClassVar[str | None] = "linear"
    CERTIFIED_ENDS: ClassVar[tuple] = (True, True)

    @property
    def GRADED(self) -> bool:  # noqa: N802 - the class attribute of every other metric
        """Graded when a gain is given; binary at ``rel`` otherwise."""
        return self.gain is not None

    def __post_init__(self):
        if isinstance(self.p, int) and not isinstance(self.p, bool):
            object.__setattr__(self, "p", float(self.p))
        super().__post_init__()

    def validate(self):
        self._check(isinstance(self.p, float) and 0.0 < self.p < 1.0, f"p must be in (0, 1), got {self.p!r}")
        if self.gain is not None:
            _check_gain(self)
        if self.max_grade is not None:
            self._check(isinstance(self.max_grade, int) and self.max_grade >= 1, "max_grade must be >= 1")
        super().validate()

    def utility_table(self, levels: int) -> np.ndarray:
        """(L,) u(z) in [0, 1] for the grade levels 0..L-1."""
        if self.gain is None:
            return (np.arange(levels) >= self.rel).astype(np.float64)
        c = (levels - 1) if self.max_grade is None else self.max_grade
        top = gain_vector(max(c, levels - 1) + 1, self.gain)[c]
        if top <= 0:
            return np.zeros(levels)
        return np.clip(gain_vector(levels, self.gain) / top, 0.0, 1.0)

    def rank_discount(self, N: int) -> np.ndarray:
        """(N,) D(n) = (1 - p) p^(n-1), 0 beyond the cutoff."""
        return (1.0 - self.p) * self.p ** np.arange(N, dtype=np.float64) * cutoff_mask(N, self.cutoff)

    def smooth_discount(self, x):
        """D and dD/dx at real positions x >= 1 (no cutoff; ApproxRank)."""
        D = (1.0 - self.p) * self.p ** (np.asarray(x, dtype=np.float64) - 1.0)
        return D, D * np.log(self.p)

    def value(self, lists):
        u = self.utility_table(lists.levels)
        g = lists.grades
        un = np.where(g >= 0, u[np.maximum(g, 0)], 0.0)
        return un @ self.rank_discount(lists.depth)

    def _expectation(self, p, lists):
        w = self.rank_discount(p.shape[1])
        if p.ndim == 3:
            return np.einsum("bnz,z,n->b", p, self.utility_table(p.shape[2]), w)
        return p @ w

    def _gradient(self, p, lists):
        w = self.rank_discount(p.shape[1])
        if p.ndim == 3:
            grad = w[None, :, None] * self.utility_table(p.shape[2])[None, None, :]
        else:
            grad = w[None, :]
        return np.broadcast_to(grad, p.shape).copy()
