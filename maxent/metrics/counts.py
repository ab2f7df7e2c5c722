"""Counting measures (trec_eval ``num_ret``, ``num_rel``, ``num_rel_ret``); summed over topics."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics.base import Metric
from maxent.metrics.precision import REL

__all__ = ["NumRet", "NumRel", "NumRelRet"]


@dataclass(frozen=True, eq=False, repr=False)
class _Count(Metric):
    rel: int = 1
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    AGGREGATE: ClassVar[str] = "sum"
    INTEGER: ClassVar[bool] = True
    HAS_EXPECTATION: ClassVar[bool] = False


@dataclass(frozen=True, eq=False, repr=False)
class NumRet(_Count):
    """Number of documents retrieved (after the depth cut)."""

    NAME: ClassVar[str] = "NumRet"
    TREC_NAME: ClassVar[str] = "num_ret"
    TREC_ORDER: ClassVar[tuple] = (0,)

    def value(self, lists):
        return lists.lengths.astype(np.float64)


@dataclass(frozen=True, eq=False, repr=False)
class NumRel(_Count):
    """Number of judged documents with grade >= rel in the qrels (R)."""

    NAME: ClassVar[str] = "NumRel"
    TREC_NAME: ClassVar[str] = "num_rel"
    TREC_ORDER: ClassVar[tuple] = (1,)

    def value(self, lists):
        return lists.n_rel(self.rel).astype(np.float64)


@dataclass(frozen=True, eq=False, repr=False)
class NumRelRet(_Count):
    """Number of retrieved documents with grade >= rel."""

    NAME: ClassVar[str] = "NumRelRet"
    TREC_NAME: ClassVar[str] = "num_rel_ret"
    TREC_ORDER: ClassVar[tuple] = (2,)

    def value(self, lists):
        return (lists.grades >= self.rel).sum(axis=1).astype(np.float64)
