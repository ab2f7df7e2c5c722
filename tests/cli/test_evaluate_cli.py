"""python -m maxent.evaluate and the evaluate()/aggregate() API."""
from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from maxent import aggregate, evaluate, read_qrels, read_run
from maxent.cli.evaluate import main


@pytest.fixture
def te(shared_data):
    return shared_data / "trec_eval_test"


def _lines(text):
    return [ln.split("\t") for ln in text.splitlines()]


def test_trec_format_default_measures(te, capsys):
    # out.test is trec_eval 10.0's output: its iprec_at_recall rule is the double mode's
    assert main([str(te / "qrels.test"), str(te / "results.test"), "--score-precision", "double"]) == 0
    rows = _lines(capsys.readouterr().out)
    assert rows[0] == ["runid                 ", "all", "STANDARD"]
    assert rows[1] == ["num_q                 ", "all", "3"]
    got = {r[0].strip(): r[2] for r in rows}
    # oracle: out.test (trec_eval's default measures)
    expected = {ln.split("\t")[0].strip(): ln.split("\t")[2] for ln in (te / "out.test").read_text().splitlines()}
    assert got == expected


def test_per_topic_and_measure_selection(te, capsys):
    assert main([str(te / "qrels.test"), str(te / "results.test"), "-q", "-m", "map", "-m", "P.5,10",
                 "-m", "gm_map"]) == 0
    rows = _lines(capsys.readouterr().out)
    topics = [r[1] for r in rows if r[0].strip() == "map"]
    assert topics == ["301", "302", "303", "all"]
    assert [r[0].strip() for r in rows if r[1] == "301"] == ["map", "P_5", "P_10"]  # gm_map: no per-topic line
    assert [r[0].strip() for r in rows if r[1] == "all"] == ["map", "gm_map", "P_5", "P_10"]  # as trec_eval
    # oracle: out.test.aq
    aq = {(r[0].strip(), r[1]): r[2] for r in _lines((te / "out.test.aq").read_text())}
    for r in rows:
        if r[0].strip() not in ("runid", "num_q"):
            assert aq[(r[0].strip(), r[1])] == r[2]


def test_complete_and_depth_flags(te, capsys):
    # results.trunc lacks some topics: -c averages over all 3 qrels topics (oracle: out.test.aqc)
    for flags, golden in ((["-c"], "out.test.aqc"), (["-c", "-M100"], "out.test.aqcM")):
        assert main([str(te / "qrels.test"), str(te / "results.trunc"), "-q", "-m", "map", "-m", "num_ret",
                     "-m", "num_q"] + flags) == 0
        got = {(r[0].strip(), r[1]): r[2] for r in _lines(capsys.readouterr().out)}
        exp = {(r[0].strip(), r[1]): r[2] for r in _lines((te / golden).read_text())}
        for key in (("map", "all"), ("num_ret", "all"), ("num_q", "all")):
            assert got[key] == exp[key], (flags, key)
    # without -c, only the topics the run has are averaged
    assert main([str(te / "qrels.test"), str(te / "results.trunc"), "-m", "map", "-m", "num_q"]) == 0
    num_q = [r[2] for r in _lines(capsys.readouterr().out) if r[0].strip() == "num_q"][0]
    with pytest.warns(Warning):
        n_topics = len(set(evaluate(te / "qrels.test", te / "results.trunc", ["map"])["topic"]))
    assert int(num_q) == n_topics


def test_relevance_threshold_flag(te, capsys):
    assert main([str(te / "qrels.rel_level"), str(te / "results.test"), "-l2", "-m", "map", "-m", "P.10"]) == 0
    got = {r[0].strip(): r[2] for r in _lines(capsys.readouterr().out)}
    exp = {r[0].strip(): r[2] for r in _lines((te / "out.test.aql").read_text()) if r[1] == "all"}
    assert got["map"] == exp["map"] and got["P_10"] == exp["P_10"]  # oracle: out.test.aql


def test_csv_format_full_precision(te, capsys):
    assert main([str(te / "qrels.test"), str(te / "results.test"), "-m", "AP", "-m", "nDCG@10(gain=exp)",
                 "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"topic": str})
    assert list(frame.columns) == ["run", "topic", "measure", "value", "tag"]
    assert set(frame["measure"]) == {"AP", "nDCG(gain=exp)@10"} and len(frame) == 6 + 2   # and the all rows
    assert (frame["tag"] == "STANDARD").all() and (frame["topic"] == "all").sum() == 2
    frame = frame[frame["topic"] != "all"].drop(columns="tag")
    api = evaluate(te / "qrels.test", te / "results.test", ["AP", "nDCG(gain=exp)@10"])
    merged = frame.merge(api, on=["run", "topic", "measure"])
    assert len(merged) == 6 and np.array_equal(merged["value_x"].to_numpy(), merged["value_y"].to_numpy())


def test_describe(capsys):
    assert main(["--describe", "GAP"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("GAP") and "threshold probabilities" in text and "Parameters:" in text
    assert main(["--describe", "ndcg_cut_10"]) == 0
    assert "nDCG@10  (trec_eval: ndcg_cut_10)" in capsys.readouterr().out


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0 and "examples:" in capsys.readouterr().out


def test_module_entry_point(te):
    proc = subprocess.run([sys.executable, "-m", "maxent.evaluate", str(te / "qrels.test"),
                           str(te / "results.test"), "-m", "map"], capture_output=True, text=True)
    assert proc.returncode == 0 and "map                   \tall\t0.1785" in proc.stdout  # out.test
    bad = subprocess.run([sys.executable, "-m", "maxent.evaluate", str(te / "qrels.test"), "/no/such/run"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr == "error: /no/such/run: no such file\n"


def test_evaluate_and_aggregate_api(te):
    qrels = read_qrels(te / "qrels.test")
    run = read_run(te / "results.test")
    frame = evaluate(qrels, [run], ["map", "gm_map", "num_ret"])
    summary = aggregate(frame).set_index("measure")["value"]
    # oracle: out.test: map 0.1785, gm_map 0.1051, num_ret 1500 (a sum, not a mean)
    assert f"{summary['AP']:.4f}" == "0.1785"
    assert f"{summary['GMAP']:.4f}" == "0.1051"
    assert summary["NumRet"] == 1500
    per_topic = frame[frame["measure"] == "GMAP"]["value"].to_numpy()
    assert summary["GMAP"] == pytest.approx(np.exp(np.log(np.maximum(per_topic, 1e-5)).mean()))
