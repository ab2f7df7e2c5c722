"""Binary preference (Buckley & Voorhees 2004; trec_eval ``bpref``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import safe_divide
from maxent.metrics.base import Metric
from maxent.metrics.precision import REL

__all__ = ["Bpref"]


@dataclass(frozen=True, eq=False, repr=False)
class Bpref(Metric):
    r"""Binary preference: how many judged non-relevant documents outrank each relevant one.

    .. math:: bpref = \frac1R \sum_{n:\, rel_n} \Big(1 - \frac{\min(F_n, R)}{\min(N_J, R)}\Big)

    with F_n the judged non-relevant documents (0 <= grade < rel) above rank n, N_J those of
    the topic and R its judged relevant ones; unjudged documents are skipped. 0 when R = 0
    (trec_eval ``bpref``; Buckley & Voorhees, SIGIR 2004). No expectation.
    """

    rel: int = 1
    NAME: ClassVar[str] = "Bpref"
    TREC_NAME: ClassVar[str] = "bpref"
    ALIASES: ClassVar[tuple] = ("BPref",)
    TREC_ORDER: ClassVar[tuple] = (6,)
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        g = lists.grades
        relevant = g >= self.rel
        nonrel_above = np.cumsum((g >= 0) & ~relevant, axis=1)  # F_n (rank n itself is relevant)
        R = lists.n_rel(self.rel)
        n_nonrel = lists.rel_counts[:, : self.rel].sum(axis=1)
        denom = np.minimum(n_nonrel, R)[:, None]
        frac = safe_divide(np.minimum(nonrel_above, R[:, None]), denom)
        term = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
        # summed left to right as trec_eval: numpy's pairwise sum can flip a printed digit
        total = np.cumsum(np.where(relevant, term, 0.0), axis=1)[:, -1] if g.shape[1] else np.zeros(len(g))
        return safe_divide(total, R)
