"""Every option of ``maxent evaluate`` (maxent.cli.evaluate) changes the output as it says.

Each test passes one option and checks its effect on the output against an independent
computation (the API with the same setting, trec_eval's own output order, the geometric mean
written out here), so that a command ignoring the option fails.
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from maxent.evaluate import aggregate, evaluate
from maxent.cli.evaluate import main as evaluate_main

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = ROOT / "trec_runs" / "runs"
THREE = [RUNS / "T5R1.gz", RUNS / "bm25_baseline.gz", RUNS / "run1.gz"]


def _run(main, argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _all(text):
    return {p[0].strip(): p[2] for p in (ln.split("\t") for ln in text.splitlines()) if p[1] == "all"}


# ---------------------------------------------------------------------------- the options
def test_evaluate_options_against_the_api():
    run = THREE[0]
    want = aggregate(evaluate(QRELS, run, ["AP", "P@10"])).set_index("measure")["value"]
    got = _all(_run(evaluate_main, [QRELS, run, "-m", "map", "-m", "P.10"])[1])
    assert got["map"] == f"{want['AP']:6.4f}" and got["P_10"] == f"{want['P@10']:6.4f}"
    # default measures: the official set
    got = _all(_run(evaluate_main, [QRELS, run])[1])
    assert {"map", "P_10", "Rprec", "recip_rank"} <= set(got) and len(got) > 5
    # -q: per-topic lines, one per topic and measure
    code, out, _ = _run(evaluate_main, [QRELS, run, "-m", "map", "-q"])
    per_topic = [ln for ln in out.splitlines() if "\tall\t" not in ln]
    assert len(per_topic) == 30
    for opt, api in ((["-l", "2"], {"rel": 2}), (["-M", "5"], {"depth": 5}),
                     (["--score-precision", "double"], {"score_precision": "double"})):
        want = aggregate(evaluate(QRELS, run, ["AP"], **api))["value"].iloc[0]
        base = aggregate(evaluate(QRELS, run, ["AP"]))["value"].iloc[0]
        got = _all(_run(evaluate_main, [QRELS, run, "-m", "map", *opt])[1])["map"]
        assert got == f"{want:6.4f}"
        if opt[0] != "--score-precision":
            assert got != f"{base:6.4f}", opt


def test_evaluate_describe_format():
    runs = sorted(RUNS.iterdir())[:4]
    assert _run(evaluate_main, [QRELS, *runs, "-m", "map"])[1].count("runid") == 4
    code, out, _ = _run(evaluate_main, ["--describe", "GAP"])
    assert code == 0 and out.startswith("GAP") and "Parameters:" in out
    code, out, _ = _run(evaluate_main, [QRELS, runs[0], "-m", "map", "--format", "csv"])
    assert out.splitlines()[0] == "run,topic,measure,value,tag" and len(out.splitlines()) == 1 + 30 + 1


# ------------------------------------------------------------- details of the output's form
def test_measure_order_is_trec_evals(shared_data):
    # oracle: the order of trec_eval's own output lines (out.test.a: -m all_trec)
    d = shared_data / "trec_eval_test"
    want = [ln.split("\t")[0].strip() for ln in (d / "out.test.a").read_text().splitlines()]
    code, out, _ = _run(evaluate_main, [d / "qrels.test", d / "results.test", "-m", "all_trec"])
    got = [ln.split("\t")[0].strip() for ln in out.splitlines()]
    assert got == [m for m in want if m in set(got)] and len(got) > 0.5 * len(want)
    # cut measures after their family, by cutoff; measures trec_eval lacks at the end
    code, out, _ = _run(evaluate_main, [d / "qrels.test", d / "results.test", "-m", "ERR@5", "-m", "ndcg_cut.20,5",
                                        "-m", "P.10,5", "-m", "map", "-m", "map_cut.10"])
    got = [ln.split("\t")[0].strip() for ln in out.splitlines()]
    assert got == ["map", "P_5", "P_10", "ndcg_cut_5", "ndcg_cut_20", "map_cut_10", "ERR@5"]


def test_gm_map_is_the_geometric_mean_with_trec_evals_floor():
    frame = evaluate(QRELS, THREE[0], ["AP"])
    v = frame["value"].to_numpy()
    want = np.exp(np.mean(np.log(np.maximum(v, 1e-5))))
    got = _all(_run(evaluate_main, [QRELS, THREE[0], "-m", "gm_map"])[1])["gm_map"]
    assert got == f"{want:6.4f}" and abs(want - v.mean()) > 1e-3


def test_csv_quotes_only_what_needs_quoting(tmp_path):
    plain = tmp_path / "RunX_1"
    plain.write_bytes(THREE[0].read_bytes())
    code, out, _ = _run(evaluate_main, [QRELS, plain, "-m", "map", "--format", "csv"])
    assert out.splitlines()[1].startswith("RunX_1,1,AP,")
