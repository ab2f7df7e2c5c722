"""The one registry (maxent.metrics.METRICS): names, trec_eval names, output order and solver
facts are class attributes of the registered metrics, and derived tables agree with them."""
from __future__ import annotations

import pytest

from maxent.cli.evaluate import _trec_key
from maxent.metrics import METRICS, parse_measure
from maxent.metrics.names import aliases, trec_names

# Oracle: trec_eval's output order of measure families (its measures.c table), ours after.
MEASURES_C = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
              "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success", "set_P",
              "set_recall"]


def test_every_class_is_named_by_its_attributes():
    for cls in METRICS:
        assert aliases()[cls.NAME] is cls
        for a in cls.ALIASES:
            assert aliases()[a] is cls
        if cls.TREC_NAME is not None:
            assert trec_names()[cls.TREC_NAME][0] is cls
        if cls.TREC_CUT_NAME is not None:
            assert trec_names()[cls.TREC_CUT_NAME] == (cls, {}, "cutoff")
    assert set(aliases().values()) == set(METRICS)


def test_trec_output_order_follows_measures_c():
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
             "iprec_at_recall.0.5", "P.10", "recall.10", "ndcg", "ndcg_cut.10", "map_cut.10", "success.5",
             "set_P", "set_recall"]
    ms = [m for n in reversed(names) for m in [parse_measure(n)]]
    got = [m.trec_name() for m in sorted(ms, key=_trec_key)]
    fams = [next(f for f in sorted(MEASURES_C, key=len, reverse=True) if g == f or g.startswith(f + "_"))
            for g in got]
    assert fams == MEASURES_C
    # measures trec_eval lacks come after all of its own
    ours = sorted([parse_measure("GAP"), parse_measure("ERR@10"), parse_measure("map")], key=_trec_key)
    assert [str(m) for m in ours] == ["AP", "ERR@10", "GAP"]


@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.NAME)
def test_solver_facts_are_class_attributes(cls):
    """Linear metrics have both ends certified (an LP over a transportation polytope has
    integral vertices); the solver reads CERTIFIED_ENDS, not the metric's type."""
    if cls.LINEAR_IN_P:
        assert cls.CERTIFIED_ENDS == (True, True)
    if not cls.HAS_EXPECTATION:
        assert cls.CERTIFIED_ENDS == (False, False) and not cls.LINEAR_IN_P
