"""maxent.ir_measures: our measures in ir_measures' registry and default pipeline, and the
opt-in ``maxent`` provider, equal to maxent.evaluate on the bundled sample."""
from __future__ import annotations

from pathlib import Path

import pytest

ir_measures = pytest.importorskip("ir_measures")

import maxent  # noqa: E402
import maxent.ir_measures as mi  # noqa: E402

ROOT = Path(__file__).resolve().parents[2] / "trec_runs"
QRELS = str(ROOT / "qrels-rnd1.txt")
RUNS = [str(p) for p in sorted((ROOT / "runs").glob("*.gz"))[:2]]


def _ours(measures, run):
    frame = maxent.aggregate(maxent.evaluate(QRELS, run, [m.metric for m in measures]))
    return dict(zip(frame["measure"], frame["value"]))


@pytest.mark.parametrize("run", RUNS)
def test_default_pipeline_gives_our_values(run):
    measures = [ir_measures.parse_measure("GAP@10"), ir_measures.parse_measure("maxent_nDCG(gain='exp')@10"),
                mi.GAP(g=(0.25, 0.75)) @ 10, mi.maxent_ERR @ 10, mi.maxent_RBP(gain="exp"), mi.GMAP,
                mi.maxent_NumRet]
    got = ir_measures.calc_aggregate(measures, list(ir_measures.read_trec_qrels(QRELS)),
                                     list(ir_measures.read_trec_run(run)))
    ours = _ours(measures, run)
    for m in measures:
        assert got[m] == pytest.approx(ours[str(m.metric)], abs=1e-12, rel=0), m


def test_the_maxent_provider_runs_ir_measures_own_measures():
    run = RUNS[0]
    qrels, scored = list(ir_measures.read_trec_qrels(QRELS)), list(ir_measures.read_trec_run(run))
    theirs = [ir_measures.AP, ir_measures.nDCG @ 10, ir_measures.P @ 5]
    assert ir_measures.providers.registry["maxent"] is ir_measures.maxent is mi.provider
    got = ir_measures.maxent.calc_aggregate(theirs + [mi.GAP @ 10], qrels, scored)
    ours = _ours([mi.maxent_AP, mi.maxent_nDCG @ 10, mi.maxent_P @ 5, mi.GAP @ 10], run)
    for m, name in zip(theirs + [mi.GAP @ 10], ["AP", "nDCG@10", "P@5", "GAP@10"]):
        assert got[m] == pytest.approx(ours[name], abs=1e-12, rel=0), m
    ref = ir_measures.pytrec_eval.calc_aggregate(theirs, qrels, scored)
    for m in theirs:
        assert got[m] == pytest.approx(ref[m], abs=1e-9), m


def test_per_topic_values_and_missing_topics():
    qrels = [ir_measures.Qrel("1", "a", 2), ir_measures.Qrel("1", "b", 0), ir_measures.Qrel("2", "c", 1)]
    run = [ir_measures.ScoredDoc("1", "a", 1.0), ir_measures.ScoredDoc("1", "b", 2.0),
           ir_measures.ScoredDoc("9", "z", 1.0)]      # topic 2 missing, topic 9 unjudged
    got = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc([mi.GAP @ 10], qrels, run)}
    assert got == {("1", "GAP@10"): pytest.approx(0.5), ("2", "GAP@10"): 0}
    assert ir_measures.calc_aggregate([mi.GAP], qrels, []) == {mi.GAP: 0}


def test_names_parameters_and_registration():
    assert mi.register() is mi.MEASURES                       # idempotent
    reg = ir_measures.measures.registry
    assert reg["nDCG"] is ir_measures.nDCG and reg["ERR"] is ir_measures.ERR   # theirs kept
    assert "InfAP" not in reg and "maxent_InfAP" in reg
    m = mi.maxent_nDCG(gain={0: 0, 1: 1, 2: 3}) @ 10
    assert ir_measures.parse_measure(repr(m)) == m
    assert str(m.metric) == "nDCG(gain=0:0,1:1,2:3)@10"
    assert ir_measures.parse_measure("GAP(g='0.5,0.5')@10").metric == maxent.parse_measure("GAP(g=0.5,0.5)@10")
    with pytest.raises(ValueError):
        ir_measures.calc_aggregate([mi.GAP(g="0.2,0.2")], [ir_measures.Qrel("1", "a", 1)],
                                   [ir_measures.ScoredDoc("1", "a", 1.0)])
    with pytest.raises(AssertionError):
        mi.GAP(nope=1).validate_params()
    assert not mi.provider.supports(ir_measures.parse_measure("nDCG(judged_only=True)"))


def test_pyterrier_experiment_gives_our_values():
    """pt.Experiment on result frames evaluates through ir_measures' registry, so our measures run
    there with our values; no Java is started for it."""
    pt = pytest.importorskip("pyterrier")
    import pandas as pd

    qrels = pd.DataFrame(ir_measures.read_trec_qrels(QRELS)).rename(
        columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    systems, names = [], []
    for path in RUNS:
        frame = pd.DataFrame(ir_measures.read_trec_run(path)).rename(columns={"query_id": "qid", "doc_id": "docno"})
        systems.append(pt.Transformer.from_df(frame))
        names.append(Path(path).name)
    topics = pd.DataFrame({"qid": qrels["qid"].unique(), "query": "unused"})
    # pt.Experiment parses a string as a trec_eval name: ir_measures' names go in as measure objects
    measures = [mi.GAP @ 10, ir_measures.parse_measure("maxent_nDCG(gain='exp')@10"), mi.maxent_ERR @ 20]
    got = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=names).set_index("name")
    assert set(got.columns) == {str(m) for m in measures}   # in an order of its own
    for path, name in zip(RUNS, names):
        ours = _ours(measures, path)
        for m in measures:
            assert got.loc[name, str(m)] == pytest.approx(ours[str(m.metric)], abs=1e-12, rel=0), (name, m)
    assert not pt.java.started()
