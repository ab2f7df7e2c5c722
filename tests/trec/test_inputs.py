"""Qrels, runs and measures from frames, dicts and ir_measures objects (maxent.inputs).

Oracles: the same data read from TREC text files by our readers (themselves checked against
trec_eval), and ir_measures' own providers (pytrec_eval, gdeval, msmarco) for the measure map.
"""
from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxent
from maxent import InputError, MeasureNameError
from maxent.errors import ParameterError
from maxent.inputs import as_qrels, as_run, as_runs, qrels_dict, qrels_frame, run_dict, run_frame
from maxent.metrics.names import as_measure

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())[:3]
MEASURES = ["AP", "P@10", "nDCG@10", "nDCG", "RR", "R-prec", "Bpref", "GAP", "ERR@20", "num_rel_ret"]


@pytest.fixture(scope="module")
def reference():
    return maxent.evaluate(QRELS, RUNS, MEASURES)


def _same(a: pd.DataFrame, b: pd.DataFrame):
    key = ["run", "topic", "measure"]
    a, b = a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[key].astype(str), b[key].astype(str))
    np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())


# ------------------------------------------------------------------------ the bundled runs
@pytest.mark.parametrize("convention", ["PyTerrier", "ir_datasets"])
def test_frames_evaluate_as_the_files(reference, convention):
    qf = qrels_frame(QRELS, convention)
    rf = run_frame(RUNS, convention)                       # one frame, a ``name`` column
    assert list(qf.columns) == list(maxent.inputs.QRELS_COLUMNS[convention])
    assert list(rf.columns)[:4] == ["name", *maxent.inputs.RUN_COLUMNS[convention][:2], "score"]
    _same(reference, maxent.evaluate(qf, rf, MEASURES))
    # several runs as a mapping of name to frame, without the name column
    by_name = {n: g.drop(columns="name") for n, g in rf.groupby("name", sort=False)}
    _same(reference, maxent.evaluate(qf, by_name, MEASURES))
    # and as a ``run`` column (ranx's and pt.Experiment's naming)
    _same(reference, maxent.evaluate(qf, rf.rename(columns={"name": "run"}), MEASURES))


def test_dicts_evaluate_as_the_files(reference):
    runs = {p.name.removesuffix(".gz"): run_dict(p) for p in RUNS}
    _same(reference, maxent.evaluate(qrels_dict(QRELS), runs, MEASURES))


def test_pyterrier_rank_column_is_trec_evals_order():
    rf = run_frame(RUNS[0])
    first = rf[rf["qid"] == "1"]
    lists = maxent.rank_runs([as_run(RUNS[0])], as_qrels(QRELS))
    assert (first["rank"].to_numpy() == np.arange(len(first))).all()
    # the frame's order is the ranking: shuffled, it evaluates the same (rank is ignored)
    shuffled = rf.sample(frac=1.0, random_state=1).assign(rank=0)
    _same(maxent.evaluate(QRELS, RUNS[0], ["AP", "nDCG@10"]).assign(run="x"),
          maxent.evaluate(QRELS, {"x": shuffled}, ["AP", "nDCG@10"]))
    assert lists.lengths[0] == len(first)


def test_compare_and_rank_runs_take_frames():
    qf, rf = qrels_frame(QRELS), run_frame(RUNS)
    a = maxent.compare(QRELS, RUNS, ["AP"], n_bootstrap=200, n_permutations=200)
    b = maxent.compare(qf, rf, ["AP"], n_bootstrap=200, n_permutations=200)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    assert a.runs == b.runs == tuple(p.name.removesuffix(".gz") for p in RUNS)
    la, lb = maxent.rank_runs(RUNS, QRELS), maxent.rank_runs(rf, qf)
    assert np.array_equal(la.grades, lb.grades) and list(la.runs) == list(lb.runs)


def test_ranx_objects():
    ranx = pytest.importorskip("ranx")
    q = ranx.Qrels(qrels_dict(QRELS))
    r = ranx.Run(run_dict(RUNS[0]), name="mine")
    got = maxent.evaluate(q, r, ["AP", "nDCG@10"])
    assert set(got["run"]) == {"mine"}
    two = maxent.as_runs([r, ranx.Run(run_dict(RUNS[1]), name="other"), run_dict(RUNS[2])])
    assert [x.name for x in two] == ["mine", "other", "run"]
    assert [x.name for x in maxent.as_runs([run_dict(RUNS[1]), run_frame(RUNS[2]).drop(columns="name")])] == [
        "run_1", "run_2"]
    _same(maxent.evaluate(QRELS, RUNS[0], ["AP", "nDCG@10"]).assign(run="mine"), got)


# ------------------------------------------------------------------------ round trips
_ID = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=6)


@st.composite
def collections(draw):
    """Small qrels and a run: qids and docnos as ints or text (some judged, some not)."""
    int_qids, int_docs = draw(st.booleans()), draw(st.booleans())
    topics = draw(st.lists(st.integers(0, 400) if int_qids else _ID, min_size=1, max_size=4, unique=True))
    docs = draw(st.lists(st.integers(0, 10**12) if int_docs else _ID, min_size=1, max_size=12, unique=True))
    qrels, run = [], []
    for t in topics:
        for d in draw(st.lists(st.sampled_from(docs), max_size=8, unique=True)):
            qrels.append((t, d, draw(st.integers(-1, 3))))
        for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=10, unique=True)):
            # few distinct scores: ties are broken by docno, as trec_eval does
            run.append((t, d, float(draw(st.integers(-3, 3))) / 2))
    if not qrels:
        qrels.append((topics[0], docs[0], 1))
    return qrels, run


@pytest.mark.filterwarnings("ignore::maxent.errors.TopicWarning")   # generated runs may hold unjudged topics
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections())
def test_path_frame_dict_frame_round_trip(tmp_path_factory, data):
    qrels, run = data
    d = tmp_path_factory.mktemp("rt")
    (d / "qrels").write_text("".join(f"{q} 0 {doc} {g}\n" for q, doc, g in qrels))
    (d / "run").write_text("".join(f"{q} Q0 {doc} 0 {s!r} tag\n" for q, doc, s in run))
    measures = ["AP", "P@5", "nDCG", "RR", "num_ret", "num_rel", "GAP"]
    try:
        want = maxent.evaluate(d / "qrels", d / "run", measures, complete=True)
    except InputError:                          # no judged topic at all: the same from every form
        with pytest.raises(InputError):
            maxent.evaluate(pd.DataFrame(qrels, columns=["qid", "docno", "label"]),
                            {"run": pd.DataFrame(run, columns=["qid", "docno", "score"])}, measures, complete=True)
        return
    # path -> frame -> dict -> frame
    qf, rf = qrels_frame(d / "qrels"), run_frame(d / "run")
    qd, rd = qrels_dict(qf), run_dict(rf.drop(columns="name"))
    qf2 = pd.DataFrame([(q, doc, g) for q, docs in qd.items() for doc, g in docs.items()],
                       columns=["query_id", "doc_id", "relevance"])
    rf2 = pd.DataFrame([(q, doc, s) for q, docs in rd.items() for doc, s in docs.items()],
                       columns=["query_id", "doc_id", "score"])
    for q_in, r_in in [(qf, rf), (qd, {"run": rd}), (qf2, {"run": rf2})]:
        _same(want, maxent.evaluate(q_in, r_in, measures, complete=True))
    # the original values: integer qids as ints, as ir_datasets sometimes gives them
    raw_q = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    raw_r = pd.DataFrame(run, columns=["qid", "docno", "score"])
    _same(want, maxent.evaluate(raw_q, {"run": raw_r}, measures, complete=True))


def test_int_ids_are_their_text():
    q = pd.DataFrame({"qid": [1, 1, 20], "docno": [7, 8, 7], "label": [1, 0, 2]})
    r = pd.DataFrame({"qid": np.array([1, 1, 20], dtype=np.int32), "docno": ["7", "8", "7"], "score": [1, 2, 3]})
    qrels = as_qrels(q)
    assert qrels.topics == ["1", "20"] and list(qrels.docnos["1"]) == [b"7", b"8"]
    assert as_run(r).qid.tolist() == [b"1", b"1", b"20"]
    # leading zeros are text, not numbers: "01" is not topic 1 (trec_eval compares strings)
    assert as_qrels({"01": {"d": 1}}).topics == ["01"]
    # grades are read as atol reads them: the integer part
    g = as_qrels(pd.DataFrame({"qid": ["1"] * 4, "docno": list("abcd"), "label": [1.7, 0.9, -0.5, 2.0]}))
    assert g.grades["1"].tolist() == [1, 0, 0, 2]


def test_non_ascii_and_long_ids(tmp_path):
    long = "d" * 300                                   # stored as a surrogate (maxent.trec.LONG_TOKEN)
    run = {"é1": {"café": 2.0, long: 1.0, "plain": 0.5}}
    qrels = {"é1": {"café": 1, long: 2}}
    (tmp_path / "q").write_text("é1 0 café 1\né1 0 " + long + " 2\n", encoding="utf-8")
    (tmp_path / "r").write_text("é1 Q0 café 1 2.0 t\né1 Q0 " + long + " 2 1.0 t\né1 Q0 plain 3 0.5 t\n",
                                encoding="utf-8")
    want = maxent.evaluate(tmp_path / "q", tmp_path / "r", ["AP", "nDCG"])
    _same(want, maxent.evaluate(qrels, {"r": run}, ["AP", "nDCG"]))
    assert as_run(run).docno.tolist() == maxent.read_run(tmp_path / "r").docno.tolist()
    frame = run_frame(run)
    assert frame["docno"].tolist()[0] == "café" and frame["docno"].tolist()[1].endswith("...")


# ------------------------------------------------------------------------ errors
def test_frame_columns_are_named_in_errors():
    with pytest.raises(InputError, match="Columns found: qid, doc, label"):
        as_qrels(pd.DataFrame({"qid": ["1"], "doc": ["a"], "label": [1]}))
    both = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1], "query_id": ["1"], "doc_id": ["a"],
                         "relevance": [1]})
    with pytest.raises(InputError, match="ambiguous qrels frame"):
        as_qrels(both)
    with pytest.raises(InputError, match="Columns found: qid, docno"):
        as_run(pd.DataFrame({"qid": ["1"], "docno": ["a"]}))
    with pytest.raises(InputError, match="both a 'name' and a 'run' column"):
        as_runs(pd.DataFrame({"name": ["a"], "run": ["b"], "qid": ["1"], "docno": ["d"], "score": [1.0]}))


@pytest.mark.parametrize("frame, match", [
    (pd.DataFrame({"qid": [1.0], "docno": ["a"], "score": [1.0]}), "holds floats"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b c"], "score": [1.0, 2.0]}), "holding whitespace"),
    (pd.DataFrame({"qid": ["1", ""], "docno": ["a", "b"], "score": [1.0, 2.0]}), "empty"),
    (pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "score": [1.0, 2.0]}), "not text"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, "x"]}), "score 'x' is not a number"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, np.nan]}), "not finite"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "a"], "score": [1.0, 2.0]}), "duplicate docno 'a'"),
])
def test_bad_run_frames(frame, match):
    with pytest.raises(InputError, match=match) as e:
        as_run(frame, name="mine")
    assert "mine" in str(e.value)
    if match not in ("holds floats",):
        assert e.value.line == 2                     # the row, 1-based


def test_bad_qrels_inputs():
    with pytest.raises(InputError, match=r"<qrels frame>:2: label nan is not a finite number"):
        as_qrels(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, np.nan]}))
    with pytest.raises(InputError, match="judged twice"):
        as_qrels({"1": {"a": 1}, 1: {"a": 2}})
    with pytest.raises(InputError, match="maps to int"):
        as_qrels({"1": 3})
    with pytest.raises(ParameterError, match="expected a path"):
        as_qrels(3.5)
    with pytest.raises(InputError, match="given twice"):
        as_runs([RUNS[0], RUNS[0]])
    with pytest.raises(InputError, match="no run given"):
        as_runs([])


# ------------------------------------------------------------------------ ir_measures
irm = pytest.importorskip("ir_measures")

# every measure ir_measures and this library both offer, with parameters; the second column
# is our name for it (checked), the values come from ir_measures' own providers (checked)
IRM_MAP = [
    ("AP", "AP"), ("AP@10", "AP@10"), ("AP(rel=2)", "AP(rel=2)"), ("P@10", "P@10"), ("P(rel=2)@5", "P(rel=2)@5"),
    ("R@100", "R@100"), ("RR", "RR"), ("RR(rel=2)", "RR(rel=2)"), ("RR@10", "RR@10"), ("Rprec", "R-prec"),
    ("Rprec(rel=2)", "R-prec(rel=2)"), ("Success@5", "Success@5"), ("Bpref", "Bpref"),
    ("Bpref(rel=2)", "Bpref(rel=2)"), ("SetP", "SetP"), ("SetP(rel=2)", "SetP(rel=2)"), ("SetR", "SetR"),
    ("NumRel", "NumRel"), ("NumRet", "NumRet"), ("NumRet(rel=1)", "NumRelRet"),
    ("NumRet(rel=2)", "NumRelRet(rel=2)"), ("IPrec@0.2", "IPrec@0.2"), ("IPrec(rel=2)@0.5", "IPrec(rel=2)@0.5"),
    ("nDCG", "nDCG"), ("nDCG@10", "nDCG@10"), ("nDCG(gains={0:0,1:1,2:5})@10", "nDCG(gain=0:0,1:1,2:5)@10"),
    ("nDCG(dcg='exp-log2')@10", "nDCG(gain=exp)@10"), ("ERR@10", "ERR(max_grade=4)@10"),
    ("ERR@20", "ERR(max_grade=4)@20"), ("RBP(rel=1)", "RBP"), ("RBP(rel=2,p=0.5)", "RBP(p=0.5,rel=2)"),
]


def _irm(text):
    return eval(text, {k: getattr(irm, k) for k in dir(irm) if not k.startswith("_")})


@pytest.mark.parametrize("theirs, ours", IRM_MAP, ids=[t for t, _ in IRM_MAP])
def test_ir_measures_map(theirs, ours):
    measure = _irm(theirs)
    assert str(as_measure(measure)) == ours
    if theirs.startswith("IPrec"):
        # ir_measures runs pytrec_eval (trec_eval 9: the first rank with recall >= x); ours is
        # trec_eval 10's iprec_at_recall (from the round(x R)-th relevant document), so the
        # values differ wherever x R has a fraction below one half. Only the map is checked.
        return
    double = any(k in theirs for k in ("exp-log2", "ERR"))       # gdeval ranks by doubles
    if theirs.startswith("RBP") and not irm.providers.registry["cwl_eval"].is_available():
        pytest.skip("ir_measures computes RBP with cwl_eval, which is not installed (pip install cwl-eval)")
    q, runs = qrels_dict(QRELS), RUNS[:2]
    if theirs.startswith("RBP"):
        # cwl_eval breaks score ties otherwise than trec_eval (score, then docno): a run
        # without tied scores (checked) compares the measure, not the tie-breaking
        runs = [ROOT / "trec_runs" / "runs" / "T5R1.gz"]
        r = maxent.as_run(runs[0])
        assert len(set(zip(r.qid.tolist(), r.score.tolist()))) == len(r)
    got = maxent.evaluate(QRELS, runs, [measure], score_precision="double" if double else "single")
    for path in runs:
        name = path.name.removesuffix(".gz")
        want = {m.query_id: m.value for m in irm.iter_calc([measure], q, run_dict(path))}
        mine = got[got["run"] == name].set_index("topic")["value"]
        assert set(want) == set(mine.index)
        w = np.array([want[t] for t in mine.index])
        np.testing.assert_allclose(mine.to_numpy(), w, atol=1e-5 if double else 1e-9, err_msg=theirs)


def test_ir_measures_rbp_parameters():
    assert str(as_measure(irm.RBP(rel=2, p=0.5) @ 10)) == "RBP(p=0.5,rel=2)@10"   # cwl_eval has no cutoff
    with pytest.raises(MeasureNameError, match="graded RBP"):
        as_measure(irm.RBP)


@pytest.mark.parametrize("text, match", [
    ("AP(judged_only=True)", "judged_only"), ("SetP(relative=True)", "relative"),
    ("infAP", "no equivalent here"), ("Judged@10", "no equivalent here"),
])
def test_ir_measures_without_equivalent(text, match):
    with pytest.raises(MeasureNameError, match=match):
        maxent.evaluate(QRELS, RUNS[0], [_irm(text)])


def test_measure_objects_in_every_entry_point():
    one = maxent.evaluate(QRELS, RUNS[0], irm.nDCG @ 10)
    assert set(one["measure"]) == {"nDCG@10"}
    c = maxent.compare(QRELS, RUNS, [irm.AP(rel=2), "P@10"], n_bootstrap=100, n_permutations=100)
    assert c.measures == ("AP(rel=2)", "P@10")

