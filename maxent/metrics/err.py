"""Expected reciprocal rank (Chapelle et al. 2009; docs/method.md, Metrics and
Expectations)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import DeltaSide, level_groups, symmetric_from_upper, valid_ranks
from maxent.metrics._kernels import cutoff_mask, exclusive_product, gain_vector
from maxent.metrics.base import Metric, Param
from maxent.metrics.dcg import GAIN, _check_gain

__all__ = ["ERR"]


@dataclass(frozen=True, eq=False, repr=False)
class ERR(Metric):
    r"""Expected reciprocal rank:
    :math:`ERR@k = \sum_{n\le k}\frac1n r_n\prod_{m<n}(1-r_m)`,
    :math:`r_n = gain(i_n) / (gain(c) + 1)`, c = ``max_grade``.

    The default exponential gain gives Chapelle's :math:`r = (2^{i}-1)/2^{c}`; linear or
    mapped gains NTCIREVAL's ERR. ``max_grade`` defaults to the qrels' highest level;
    unjudged documents have r = 0. :math:`E[ERR]` replaces r_n by
    :math:`E[r_n]=\sum_z p_n(z) r(z)`. No trec_eval measure.
    """
    SOLVER_FORM: ClassVar[str | None] = "cascade"

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
    # the maximum is certified when the stopping probabilities increase strictly with z;
    # validate() withdraws it for gains where they may not
    CERTIFIED_ENDS: ClassVar[tuple] = (False, True)

    def validate(self):
        _check_gain(self)
        if self.max_grade is not None:
            self._check(isinstance(self.max_grade, int) and self.max_grade >= 1, "max_grade must be >= 1")
        super().validate()
        if not self._strict_satisfaction():
            object.__setattr__(self, "CERTIFIED_ENDS", (False, False))

    def _strict_satisfaction(self) -> bool:
        """Whether s_z = gain(z) / (gain(c) + 1) strictly increases and stays below 1 at every
        number of levels: non-negative, strictly increasing gains and no ``max_grade``."""
        if self.max_grade is not None:
            return False
        top = max((level for level, _ in self.gain), default=0) if isinstance(self.gain, tuple) else 0
        g = gain_vector(top + 2, self.gain)          # levels beyond the map keep gain = level
        return bool(g[0] >= 0 and (np.diff(g) > 0).all())

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
        A = exclusive_product(1.0 - rn, axis=1)
        return (rn / n * A * cutoff_mask(N, self.cutoff)).sum(axis=1)

    def _expectation(self, p, lists):
        return self._from_r(p @ self.satisfaction(p.shape[2]))

    def _gradient(self, p, lists):
        r = self.satisfaction(p.shape[2])
        rn = p @ r
        N = rn.shape[1]
        n = np.arange(1, N + 1, dtype=np.float64)
        mask = cutoff_mask(N, self.cutoff)
        A = exclusive_product(1.0 - rn, axis=1)
        # dERR/dr_j = A_j/j - sum_{n>j} (r_n/n) prod_{m<n, m!=j}(1-r_m); r <= 1 - 1/(gain(c)+1) < 1
        term = rn / n * A * mask
        after = np.cumsum(term[:, ::-1], axis=1)[:, ::-1] - term
        dr = A * mask / n - after / (1.0 - rn)
        return dr[:, :, None] * r[None, None, :]

    def cascade_form(self, lists):
        r"""(s (L,), c (N,)) for the compiled solver: :math:`E = \sum_n c_n r_n \prod_{m<n}(1 - r_m)`,
        :math:`r_n = \sum_z s_z p_n(z)`, s the satisfactions, c_n = [n <= k]/n."""
        N = lists.depth
        return self.satisfaction(lists.levels), cutoff_mask(N, self.cutoff) / np.arange(1, N + 1, dtype=np.float64)

    HAS_SWAP_DELTA: ClassVar[bool] = True
    DELTA_STRIP: ClassVar[bool] = True

    def delta_side(self, rel_counts):
        self._require_delta()
        rc = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        return DeltaSide(rc, r_of_grade=self.satisfaction(rc.shape[1]))

    def delta_depth(self):
        return self.cutoff

    @staticmethod
    def _stop(y, rz):
        """Stop probability r_n of each ranked document (unjudged: 0)."""
        return np.where(y >= 0, rz[np.clip(y, 0, len(rz) - 1)], 0.0)

    def _prefix(self, R):
        """P(n) = prod_{m<n}(1 - r_m), the ERR terms r_n P(n)/n [n <= k] and their prefix sums E."""
        N = R.shape[-1]
        r = np.arange(1, N + 1, dtype=np.float64)
        P = exclusive_product(1.0 - R, axis=-1)
        inc = cutoff_mask(N, self.cutoff)
        Pr = P / r * inc
        term = R * Pr
        return P, Pr, inc, term, np.cumsum(term, axis=-1)

    def swap_delta(self, grades, side, lengths=None):
        r"""ERR swap deltas: with :math:`P(n) = \prod_{m<n}(1 - r_m)` and :math:`E(n)` the
        prefix sum of the ERR terms, for a < b
        :math:`(r_b - r_a)P(a)/a + (E(b-1) - E(a))(\frac{1-r_b}{1-r_a} - 1) +
        P(b)(r_a\frac{1-r_b}{1-r_a} - r_b)/b`, terms beyond k dropped."""
        y, single, side = self._delta_args(grades, side)
        N = y.shape[1]
        r = np.arange(1, N + 1, dtype=np.float64)
        R = self._stop(y, side.r_of_grade)
        P, Pr, inc, term, E = self._prefix(R)
        if R.max(initial=0.0) >= 1.0:
            T = self._swap_terms_certain_stop(R, P, inc, r)
        else:
            Ra, Rb = R[:, :, None], R[:, None, :]
            ratio = (1.0 - Rb) / (1.0 - Ra)
            Ea, Eb_prev = E[:, :, None], (E - term)[:, None, :]
            Pa, Pb = P[:, :, None], P[:, None, :]
            ia, ib = inc[None, :, None], inc[None, None, :]
            T = ((Rb - Ra) * Pa / r[None, :, None] * ia
                 + (Eb_prev - Ea) * (ratio - 1.0)
                 + Pb * (Ra * ratio - Rb) / r[None, None, :] * ib)
        out = symmetric_from_upper(T)
        valid = valid_ranks(y, lengths)
        out *= valid[:, :, None] & valid[:, None, :]
        return out[0] if single else out

    @staticmethod
    def _swap_terms_certain_stop(R, P, inc, r):
        r"""Division-free upper triangle for lists with a certain stop (r = 1): for a < b,
        :math:`\Delta = P(a)(r_b - r_a)[[a \le k]/a - S(a, b) - Q(a, b)[b \le k]/b]`,
        :math:`Q(a, b) = \prod_{a<m<b}(1 - r_m)`, :math:`S(a, b) = \sum_{a<n<b} r_n Q(a, n)[n \le k]/n`."""
        one_m = 1.0 - R
        zero = one_m <= 0.0
        with np.errstate(divide="ignore"):
            lg = np.where(zero, 0.0, np.log(np.where(zero, 1.0, one_m)))
        CL, CZ = np.cumsum(lg, axis=1), np.cumsum(zero, axis=1)
        CLp, CZp = CL - lg, CZ - zero                  # through n - 1
        Q = np.exp(CLp[:, None, :] - CL[:, :, None]) * (CZp[:, None, :] == CZ[:, :, None])
        N = R.shape[1]
        after = np.less.outer(np.arange(N), np.arange(N))[None]      # n > a
        Tm = np.where(after, Q * (R * inc / r)[:, None, :], 0.0)
        S = np.cumsum(Tm, axis=2) - Tm                                # sum over a < n < b
        dr = R[:, None, :] - R[:, :, None]
        return P[:, :, None] * dr * ((inc / r)[None, :, None] - S - Q * (inc / r)[None, None, :])

    def delta_strip(self, y, side, b, K):
        R = self._stop(y, side.r_of_grade)
        if R.max(initial=0.0) >= 1.0:
            return None
        P, Pr, inc, term, E = self._prefix(R)
        Ra = R[:K, None]
        ratio = (1.0 - R)[None, :] / (1.0 - Ra)
        return (np.subtract.outer(R, R[:K]).T * Pr[:K, None]
                + np.subtract.outer(E - term, E[:K]).T * (ratio - 1.0)
                + Pr[None, :] * (Ra * ratio - R[None, :]))

    def delta_blocks(self, y, side, b):
        rz = side.r_of_grade
        groups = level_groups(y)
        levels = np.array([v for v, _ in groups])
        rl_of = self._stop(levels, rz)
        if rl_of.max() >= 1.0:
            return None        # a certain stop: the closed form divides by 1 - r
        P, Pr, inc, term, E = self._prefix(self._stop(y, rz))
        Ep = E - term                                           # E(n - 1)
        blocks = []
        for hi in range(len(groups)):
            for lo in range(hi):
                rh, rl = rl_of[hi], rl_of[lo]
                if rh == rl:
                    continue
                sg = -1.0 if rh > rl else 1.0     # ERR rises when the larger r moves up
                # better doc at the upper rank a, worse at c > a (Ra = rh, Rc = rl)
                k1 = (rh - rl) / (1.0 - rh)
                p1 = sg * ((rl - rh) * Pr - E * k1)
                q1 = sg * (Ep * k1 + Pr * (rh * (1.0 - rl) / (1.0 - rh) - rl))
                # worse doc at the upper rank c, better at a > c (Rc = rl, Ra = rh)
                k2 = (rl - rh) / (1.0 - rl)
                q2 = -sg * ((rh - rl) * Pr - E * k2)
                p2 = -sg * (Ep * k2 + Pr * (rl * (1.0 - rh) / (1.0 - rl) - rh))
                blocks.append((groups[hi][1], groups[lo][1], p1, q1, p2, q2))
        return blocks
