"""trec_eval's conventions at the edges, in ``maxent evaluate`` (maxent.cli.evaluate) and the
evaluate() API: unlimited depth, relevance level 0, ``-q -c``, the output formats, feedback on stderr.

Oracles: pytrec_eval (an independent C++ build of trec_eval 9: unlimited depth; it refuses
relevance level 0, so -l 0 is checked by hand), values worked out by hand on the tiny files of tests/data/bad, trec_eval 9's
trec_eval.c for ``-q -c`` (its per-topic loop runs over the run's topics only), and pandas'
``to_csv`` for the CSV output written without pandas.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from maxent import evaluate, read_qrels, read_run
from tests._bundled import run_evaluate
from maxent.evaluate import evaluate_lists, resolve_measures
from maxent.ranked import rank_runs

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())


_cli = run_evaluate


def _all(text: str) -> dict[str, str]:
    return {p[0].strip(): p[2] for p in (ln.split("\t") for ln in text.splitlines()) if p[1] == "all"}


# ------------------------------------------------------------------------- -M unlimited
def test_depth_is_unlimited_by_default_as_trec_eval():
    # 1,500 documents, the one relevant at rank 1,200 (trec_eval's -M default is MAX_LONG:
    # it is counted); hand: AP = 1/1200, nDCG = 1/log2(1201) = 0.09775
    code, out, err = _cli([BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt",
                           "-m", "map", "-m", "ndcg", "-m", "num_rel_ret", "-m", "num_ret"])
    assert code == 0 and err == ""
    got = _all(out)
    assert (got["map"], got["num_rel_ret"], got["ndcg"], got["num_ret"]) == ("0.0008", "1", "0.0978", "1500")
    assert float(got["map"]) == pytest.approx(1 / 1200, abs=5e-5)
    assert float(got["ndcg"]) == pytest.approx(1 / np.log2(1201), abs=5e-5)
    # -M cuts as asked; -M 1000 loses the relevant document
    got = _all(_cli([BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", "-m", "map",
                     "-m", "num_rel_ret", "-m", "num_ret", "-M", "1000"])[1])
    assert (got["map"], got["num_rel_ret"], got["num_ret"]) == ("0.0000", "0", "1000")
    # the API too
    frame = evaluate(BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", ["AP"])
    assert frame["value"].iloc[0] == pytest.approx(1 / 1200, rel=1e-12)
    assert evaluate(BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", ["AP"], depth=1000)["value"].iloc[0] == 0


def test_unlimited_depth_agrees_with_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"d1200": 1, "x1": 0}}
    run = {"1": {f"d{r}": float(2000 - r) for r in range(1, 1501)}}
    want = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg", "num_rel_ret"}).evaluate(run)["1"]
    frame = evaluate(BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", ["AP", "nDCG", "NumRelRet"])
    got = dict(zip(frame["measure"], frame["value"]))
    assert got["AP"] == pytest.approx(want["map"], abs=1e-12)
    assert got["nDCG"] == pytest.approx(want["ndcg"], abs=1e-12)
    assert got["NumRelRet"] == want["num_rel_ret"] == 1


# ---------------------------------------------------------------------------------- -l 0
def test_relevance_level_zero_as_trec_eval():
    # trec_eval -l 0: every judged document (grade >= 0) is relevant. Hand: qrels_deep judges
    # d1200 (1) and x1 (0, not retrieved): R = 2, one retrieved at rank 1200: AP = 1/2400
    got = _all(_cli([BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", "-m", "num_rel",
                     "-m", "map", "-l", "0"])[1])
    assert got["num_rel"] == "2"
    frame = evaluate(BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", ["AP"], rel=0)
    assert frame["value"].iloc[0] == pytest.approx(1 / 2400, rel=1e-12)


def test_negative_relevance_level_names_the_option():
    code, out, err = _cli([QRELS, RUNS[0], "-m", "map", "-l", "-1"])
    assert code == 1 and out == "" and err == "error: -l: the relevance level must be >= 0, got -1\n"
    code, out, err = _cli([QRELS, RUNS[0], "-m", "map", "-M", "0"])
    assert code == 1 and err.startswith("error: -M: the depth must be >= 1")


# --------------------------------------------------------------------------------- -q -c
def test_per_topic_rows_with_complete_as_trec_eval_9(tmp_path):
    # qrels topics 1, 2, 3; the run has 1 and 3: -q -c prints per-topic rows for 1 and 3 only
    # (trec_eval 9's loop over the run's topics), num_q 3 and means over 3 topics
    (tmp_path / "q").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 t\n3 Q0 x 1 2.0 t\n")
    code, out, err = _cli([tmp_path / "q", tmp_path / "r", "-m", "map", "-m", "num_ret", "-m", "num_q",
                           "-m", "runid", "-q", "-c"])
    assert code == 0
    rows = [ln.split("\t") for ln in out.splitlines()]
    per_topic = [(m.strip(), t, v) for m, t, v in rows if t != "all"]
    assert per_topic == [("num_ret", "1", "1"), ("map", "1", "1.0000"),
                         ("num_ret", "3", "1"), ("map", "3", "0.0000")]
    assert _all(out) == {"runid": "t", "num_q": "3", "num_ret": "2", "map": "0.3333"}
    # without -c: the two topics only
    got = _all(_cli([tmp_path / "q", tmp_path / "r", "-m", "map", "-m", "num_q", "-q"])[1])
    assert got["num_q"] == "2" and got["map"] == "0.5000"


# ------------------------------------------------------------------------ output formats
def test_csv_is_pandas_to_csv_text_without_pandas(tmp_path):
    # oracle: the frame of evaluate_lists written by pandas, as the command wrote it before;
    # a run name with a comma and a quote checks the quoting
    odd = tmp_path / 'a,b"c'
    odd.write_bytes(RUNS[0].read_bytes())
    measures = ["AP", "P@10", "GAP(g=0.5,0.5)", "num_ret"]
    code, out, _ = _cli([QRELS, odd, RUNS[1], *sum((["-m", m] for m in measures), []), "--format", "csv"])
    assert code == 0
    qrels = read_qrels(QRELS)
    lists = rank_runs([read_run(odd), read_run(RUNS[1])], qrels)
    frame = evaluate_lists(lists, resolve_measures(measures))
    frame["tag"] = [{"a,b\"c": read_run(odd).tag}.get(r, read_run(RUNS[1]).tag) for r in frame["run"]]
    want = frame.to_csv(index=False, float_format="%.17g")
    lines = out.splitlines(keepends=True)
    wanted = want.splitlines(keepends=True)         # the same rows, measures in trec_eval's order
    assert lines[0] == wanted[0] and sorted(lines[1:1 + len(frame)]) == sorted(wanted[1:])
    assert len(lines) == 1 + len(frame) + 2 * len(measures)          # then each run's all rows
    assert all(",all," in line for line in lines[1 + len(frame):])


@pytest.mark.parametrize("fmt", ["trec", "csv"])
def test_no_output_format_imports_pandas(fmt):
    code = ("import sys, runpy; sys.argv = ['x', %r, %r, '-m', 'map', '--format', %r]\n"
            "from maxent.cli.evaluate import main\nmain(sys.argv[1:])\n"
            "assert 'pandas' not in sys.modules, 'pandas imported'\n"
            "assert 'scipy' not in sys.modules, 'scipy imported'\n") % (str(QRELS), str(RUNS[0]), fmt)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "map" in done.stdout if fmt == "trec" else "BITEM_df,1,AP," in done.stdout


# ---------------------------------------------------------------------- feedback on stderr
def test_evaluate_command_says_what_it_does_in_a_pipe(tmp_path):
    # the command line in a subprocess with stderr a pipe (not a terminal), its phases made
    # "long" by a tiny threshold: each phase is named on stderr; stdout is unchanged
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = ("import sys; from maxent.cli import progress; progress.AFTER = 0.0\n"
            "from maxent.cli.evaluate import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, str(QRELS), str(RUNS[0]), "-m", "map"],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    plain = subprocess.run([sys.executable, "-m", "maxent.evaluate", str(QRELS), str(RUNS[0]), "-m", "map"],
                           capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.stdout == plain.stdout and plain.stderr == ""
    err = done.stderr
    for what in ("reading qrels", "reading and ranking the runs", "evaluating"):
        assert f"{what}" in err and ": done in " in err, err
