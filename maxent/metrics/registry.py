"""The metric table (as trec_eval's measures.c) and the named measure sets of
``maxent evaluate``; a new metric is one file plus one row of :data:`METRICS`.
"""
from __future__ import annotations

from maxent.metrics.ap import AP, GMAP
from maxent.metrics.base import Metric
from maxent.metrics.bpref import Bpref
from maxent.metrics.counts import NumRel, NumRelRet, NumRet
from maxent.metrics.dcg import DCG, NDCG
from maxent.metrics.err import ERR
from maxent.metrics.gap import GAP
from maxent.metrics.precision import IPrec, Precision, Recall, RPrec, SetP, SetR, Success
from maxent.metrics.rbp import RBP
from maxent.metrics.rr import RR
from maxent.metrics.trec_extra import (RNDCG, BinG, ElevenPtAvg, G, GMBpref, InfAP, NDCGRel,
                                       NumNonRelJudgedRet, RBPResid, RelP, RelString, RPrecMult, SetAP, SetF,
                                       SetRelP, TrecRBP, Unjudged, Utility)

__all__ = ["METRICS", "MEASURE_SETS", "TREC_10_ALL_TREC", "measure_sets"]

METRICS: tuple[type[Metric], ...] = (
    NumRet, NumRel, NumRelRet, AP, GMAP, RPrec, Bpref, RR, IPrec, Precision, RelString, Recall, NDCG, Success,
    SetP, SetR, InfAP, GMBpref, RPrecMult, Utility, ElevenPtAvg, BinG, G, NDCGRel, RNDCG, RelP, SetRelP,
    SetAP, SetF, NumNonRelJudgedRet, TrecRBP, RBPResid, Unjudged, DCG, ERR, GAP, RBP,
)
"""Every metric class, in trec_eval's output order (ours last)."""

_CUTS = "5,10,15,20,30,100,200,500,1000"
_RECALL_LEVELS = ",".join(f"{x / 10:.2f}" for x in range(11))
_R_MULTS = ",".join(f"{x / 10:.1f}" for x in range(2, 21, 2))

MEASURE_SETS: dict[str, list[str]] = {
    # trec_eval's default ("official") measures that this library implements
    "official": ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                 f"iprec_at_recall.{_RECALL_LEVELS}", f"P.{_CUTS}"],
    # trec_eval's all_trec measures that this library implements
    "all_trec": ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                 f"iprec_at_recall.{_RECALL_LEVELS}", f"P.{_CUTS}", "relstring", f"recall.{_CUTS}", "infAP",
                 "gm_bpref",
                 f"Rprec_mult.{_R_MULTS}", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
                 f"ndcg_cut.{_CUTS}", f"map_cut.{_CUTS}", f"relative_P.{_CUTS}", "success.1,5,10", "set_P",
                 "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret"],
}

TREC_10_ALL_TREC = ["rbp", "rbp_resid", "unj"]
"""trec_eval 10.0's all_trec measures that 9.0.7 lacks (printed after the others)."""


def measure_sets(score_precision: str = "single") -> dict[str, list[str]]:
    """:data:`MEASURE_SETS` of trec_eval 9.0.7 (``single``) or 10.0 (``double``: all_trec
    with rbp, rbp_resid and unj)."""
    if score_precision != "double":
        return MEASURE_SETS
    return dict(MEASURE_SETS, all_trec=MEASURE_SETS["all_trec"] + TREC_10_ALL_TREC)
