"""The metrics: every metric class, the registry (:data:`METRICS`, :data:`MEASURE_SETS`, held
by :mod:`maxent.metrics.registry`) and the name parser (:mod:`maxent.metrics.names`).
"""
from __future__ import annotations

from maxent.metrics.ap import AP, GMAP
from maxent.metrics.base import Metric, Param
from maxent.metrics.bpref import Bpref
from maxent.metrics.counts import NumRel, NumRelRet, NumRet
from maxent.metrics.dcg import DCG, NDCG
from maxent.metrics.err import ERR
from maxent.metrics.gap import GAP, gap_pivot
from maxent.metrics.names import as_measure, parse_measure, parse_measures
from maxent.metrics.precision import IPrec, Precision, Recall, RPrec, SetP, SetR, Success
from maxent.metrics.rbp import RBP
from maxent.metrics.registry import MEASURE_SETS, METRICS
from maxent.metrics.rr import RR

__all__ = [
    "Metric", "Param", "METRICS", "MEASURE_SETS", "parse_measure", "parse_measures", "as_measure",
    "AP", "GMAP", "Bpref", "SetP", "SetR", "Precision", "RPrec", "Recall", "Success", "IPrec", "RR", "DCG", "NDCG",
    "ERR", "GAP", "RBP", "NumRet", "NumRel", "NumRelRet", "gap_pivot",
]
