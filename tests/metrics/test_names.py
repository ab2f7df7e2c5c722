"""Names: parse_measure(str(m)) == m for every registered metric; trec_eval names map to
our metrics and print back unchanged."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxent import MeasureNameError, parse_measure, parse_measures
from maxent.metrics import (AP, DCG, ERR, GAP, GMAP, METRICS, NDCG, Bpref, IPrec, NumRel,
                            NumRelRet, NumRet, Precision, Recall, RPrec, RR, SetP, SetR, Success)
from maxent.metrics.names import ALIASES
from maxent.metrics.trec_extra import (RNDCG, BinG, ElevenPtAvg, G, GMBpref, InfAP, NDCGRel,
                                       NumNonRelJudgedRet, RBPResid, RelP, RelString, RPrecMult, SetAP, SetF,
                                       SetRelP, TrecRBP, Unjudged, Utility)

# non-default instances of every class (defaults are added below)
EXAMPLES = [
    AP(cutoff=100), AP(rel=2), GMAP(rel=3), RPrec(rel=2), Bpref(rel=2), RR(cutoff=10), RR(rel=2),
    IPrec(cutoff=0.3), IPrec(cutoff=1.0, rel=2), Precision(cutoff=5), Precision(cutoff=20, rel=2),
    Recall(cutoff=100), NDCG(cutoff=10), NDCG(gain="exp"), NDCG(cutoff=10, gain="exp"),
    NDCG(cutoff=10, ideal="all"), NDCG(ideal="cut"), NDCG(discount="jk", gain=((1, 1.0), (2, 4.0), (3, 9.0))),
    NDCG(gain=((1, 3.0), (2, 9.0), (4, 4.5))), Success(cutoff=1), SetP(rel=2), SetR(rel=2),
    DCG(cutoff=5, gain="exp"), ERR(cutoff=20), ERR(max_grade=4, gain="linear"),
    ERR(gain=((1, 1.0), (2, 2.0), (3, 3.0))), GAP(g=(0.5, 0.5)), GAP(g=(1.0,)),
    GAP(g=(0.2, 0.3, 0.5), cutoff=10), NumRet(), NumRel(rel=2), NumRelRet(rel=2),
]
ALL = [cls() for cls in METRICS] + EXAMPLES


def test_every_registered_class_has_examples():
    assert {type(m) for m in ALL} == set(METRICS)
    assert all(cls in ALIASES.values() for cls in METRICS)


@pytest.mark.parametrize("metric", ALL, ids=str)
def test_round_trip(metric):
    parsed = parse_measure(str(metric))
    assert parsed == metric and type(parsed) is type(metric)
    assert dataclasses.asdict(parsed) == dataclasses.asdict(metric)
    assert repr(metric) == str(metric) and hash(parsed) == hash(metric)


def _in_trec_eval(m) -> bool:
    """Whether trec_eval 10 has this measure (with its default relevance threshold)."""
    if m.TREC_NAME is None or isinstance(m, DCG) or getattr(m, "rel", 1) != 1:
        return False
    if isinstance(m, RR):
        return m.cutoff is None
    if isinstance(m, NDCG):
        return m.discount == "log2" and m.ideal is None and m.gain != "exp" and (
            m.cutoff is None or m.gain == "linear")
    return True


@pytest.mark.parametrize("metric", [m for m in ALL if _in_trec_eval(m)], ids=str)
def test_trec_name_round_trip(metric):
    assert parse_measure(metric.trec_name()) == metric


@settings(max_examples=60, deadline=None)
@given(cls=st.sampled_from([AP, Precision, Recall, Success, RR]), k=st.integers(1, 5000),
       rel=st.integers(1, 6))
def test_round_trip_any_cutoff_and_threshold(cls, k, rel):
    m = cls(cutoff=k, rel=rel)
    assert parse_measure(str(m)) == m


@settings(max_examples=60, deadline=None)
@given(g=st.lists(st.integers(1, 20), min_size=1, max_size=5))
def test_round_trip_any_gap_thresholds(g):
    probs = tuple(x / sum(g) for x in g)
    if abs(sum(probs) - 1.0) > 1e-9:
        return
    m = GAP(g=probs)
    assert parse_measure(str(m)) == m


# every measure name trec_eval printed in the golden outputs that this library implements
# (oracle: ../shared/data/trec_eval_test/out.test.a and out.test.meas_params)
TREC_EVAL_NAMES = {
    "num_ret": NumRet(), "num_rel": NumRel(), "num_rel_ret": NumRelRet(), "map": AP(),
    "gm_map": GMAP(), "Rprec": RPrec(), "bpref": Bpref(), "recip_rank": RR(),
    **{f"iprec_at_recall_{x / 10:.2f}": IPrec(cutoff=x / 10) for x in range(11)},
    "iprec_at_recall_0.25": IPrec(cutoff=0.25), "iprec_at_recall_0.75": IPrec(cutoff=0.75),
    **{f"P_{k}": Precision(cutoff=k) for k in (3, 5, 7, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"recall_{k}": Recall(cutoff=k) for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000, 2000)},
    "ndcg": NDCG(), "ndcg_1=3,2=9,4=4.5": NDCG(gain=((1, 3.0), (2, 9.0), (4, 4.5))),
    **{f"ndcg_cut_{k}": NDCG(cutoff=k) for k in (5, 10, 15, 20, 23, 30, 100, 200, 500, 1000)},
    **{f"map_cut_{k}": AP(cutoff=k) for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"success_{k}": Success(cutoff=k) for k in (1, 2, 5, 10, 20)},
    "set_P": SetP(), "set_recall": SetR(),
    "infAP": InfAP(), "gm_bpref": GMBpref(), "utility": Utility(), "11pt_avg": ElevenPtAvg(),
    "binG": BinG(), "G": G(), "ndcg_rel": NDCGRel(), "Rndcg": RNDCG(),
    **{f"Rprec_mult_{x:.2f}": RPrecMult(cutoff=x) for x in (0.2, 0.35, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6,
                                                           1.8, 2.0, 5.0)},
    **{f"relative_P_{k}": RelP(cutoff=k) for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    "set_relative_P": SetRelP(), "set_map": SetAP(), "set_F": SetF(), "num_nonrel_judged_ret": NumNonRelJudgedRet(),
    # float parameter lists (trec_eval prints the text as given)
    "utility_2,-1,0,0": Utility(a=2.0), "11pt_avg_.25,.5,.75": ElevenPtAvg(levels=(0.25, 0.5, 0.75)),
    # trec_eval 10.0's additions
    "rbp": TrecRBP(), "rbp_resid": RBPResid(), **{f"unj_{k}": Unjudged(cutoff=k) for k in (5, 10, 20)},
    "relstring": RelString(), "relstring_20": RelString(length=(20.0,)),
}


@pytest.mark.parametrize("name", sorted(TREC_EVAL_NAMES))
def test_trec_eval_output_names(name):
    m = parse_measure(name)
    assert m == TREC_EVAL_NAMES[name]
    assert m.trec_name() == name


def test_trec_eval_names_cover_the_golden_files(shared_data):
    # every name in the golden files is either implemented (above) or a measure we do not
    # have; the list of those is explicit so that a new metric must be added above
    not_ours = {"runid", "num_q"}
    prefixes = ("runid_",)
    seen = set()
    for out in ("out.test.a", "out.test.aql", "out.test.meas_params", "out.comment.test"):
        for line in (shared_data / "trec_eval_test" / out).read_text().splitlines():
            seen.add(line.split("\t")[0].strip())
    for name in seen:
        if name in not_ours or name.startswith(prefixes):
            with pytest.raises(MeasureNameError):
                parse_measure(name)
        else:
            assert name in TREC_EVAL_NAMES, name


@pytest.mark.parametrize("text, expected", [
    ("P.5,10", [Precision(cutoff=5), Precision(cutoff=10)]),
    ("ndcg_cut.10,20", [NDCG(cutoff=10), NDCG(cutoff=20)]),
    ("ndcg_cut.23.4", [NDCG(cutoff=23)]),  # trec_eval truncates a fractional cutoff
    ("iprec_at_recall..10,.20", [IPrec(cutoff=0.1), IPrec(cutoff=0.2)]),
    ("recall.20,2000", [Recall(cutoff=20), Recall(cutoff=2000)]),
    ("success.2,5", [Success(cutoff=2), Success(cutoff=5)]),
    ("ndcg.1=3,2=9,4=4.5", [NDCG(gain=((1, 3.0), (2, 9.0), (4, 4.5)))]),
])
def test_trec_eval_parameter_syntax(text, expected):
    assert parse_measures(text) == expected


@pytest.mark.parametrize("a, b", [
    ("nDCG@10(gain=exp)", "nDCG(gain=exp)@10"),
    ("MAP", "AP"), ("map", "AP"), ("P_10", "P@10"), ("P.10", "P@10"), ("R-Prec", "R-prec"),
    ("GAP(g=0.5,0.5)", "GAP(g=0.50, 0.5)"), ("ndcg_cut_10", "nDCG@10"),
    ("nDCG@10(ideal=cut)", "nDCG@10"), ("nDCG(ideal=all)", "nDCG"),
])
def test_equivalent_spellings(a, b):
    assert parse_measure(a) == parse_measure(b)


@pytest.mark.parametrize("bad", ["nDGC@10", "P@x", "P@0", "GAP(g=0.5,0.6)", "AP(foo=1)",
                                 "RPrec@10", "nDCG(gain=cubic)", "P@10(rel=-1)", "", "NumRet@5"])
def test_bad_names_raise_measure_name_error(bad):
    with pytest.raises(MeasureNameError):
        parse_measure(bad)


def test_several_names_need_parse_measures():
    with pytest.raises(MeasureNameError, match="parse_measures"):
        parse_measure("P.5,10")
