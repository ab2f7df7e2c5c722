"""One option style for every command: the qrels and runs positional or as --qrels/--runs, and
measures as -m/--measures/--metrics, repeated or comma-separated; each form gives the same output."""
from __future__ import annotations

import contextlib
import gzip
import io
from pathlib import Path

import pytest

from analysis import active_eval, gap_thresholds
from analysis import maxent as analysis_maxent
from maxent.cli import compare as compare_cli
from maxent.cli import evaluate as evaluate_cli
from maxent.cli._common import measure_names
from maxent.errors import MeasureNameError

ROOT = Path(__file__).resolve().parents[2]
QRELS = str(ROOT / "trec_runs" / "qrels-rnd1.txt")
RUNS = [str(p) for p in sorted((ROOT / "trec_runs" / "runs").glob("*.gz"))[:2]]


def _out(main, args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_measure_lists_keep_parameter_commas():
    assert measure_names(["map,P.5,10", "GAP(g=0.5,0.5)", "iprec_at_recall..1,.5, ndcg_cut.5"], []) == [
        "map", "P.5,10", "GAP(g=0.5,0.5)", "iprec_at_recall..1,.5", "ndcg_cut.5"]
    assert measure_names(["utility.1,-1,0,0,map"], []) == ["utility.1,-1,0,0", "map"]
    assert measure_names(None, ["official"]) == ["official"]
    with pytest.raises(MeasureNameError, match="empty measure name"):
        measure_names([" "], [])


@pytest.mark.parametrize("main", [evaluate_cli.main, compare_cli.main], ids=["evaluate", "compare"])
def test_both_forms_give_the_same_output(main):
    forms = [[QRELS, *RUNS, "-m", "map", "-m", "P.10"],
             ["--qrels", QRELS, "--runs", *RUNS, "-m", "map,P.10"],
             ["-m", "map", "--measures", "P.10", "--qrels", QRELS, *RUNS],
             [QRELS, "--runs", *RUNS, "--metrics", "map,P.10"]]
    outputs = [_out(main, f) for f in forms]
    assert outputs[0][0] == 0 and outputs[0][1]
    assert all(o == outputs[0] for o in outputs), [o[2] for o in outputs]


def test_trec_eval_cutoff_lists_stay_one_measure():
    code, text, _ = _out(evaluate_cli.main, [QRELS, RUNS[0], "-m", "P.5,10,map"])
    assert code == 0 and [ln.split()[0] for ln in text.splitlines()] == ["map", "P_5", "P_10"]


def test_runs_given_twice_are_refused():
    code, _, err = _out(evaluate_cli.main, [QRELS, RUNS[0], "--runs", RUNS[1], "-m", "map"])
    assert code == 1 and err == f"error: runs given twice: as arguments ({RUNS[0]}) and as --runs\n"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    (d / "runs").mkdir()
    for path in RUNS:
        lines = gzip.open(path, "rt").read().splitlines()
        (d / "runs" / Path(path).stem).write_text("\n".join(ln for ln in lines if ln.split()[0] in "123") + "\n")
    (d / "qrels.txt").write_text("".join(ln for ln in open(QRELS) if ln.split()[0] in "123"))
    return d


def test_analysis_forms_give_the_same_tables(small, tmp_path):
    common = ["--no-progress", "--depth", "100", "--threshold", "1"]
    forms = [["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--metrics", "AP,RR"],
             [str(small / "qrels.txt"), str(small / "runs"), "-m", "AP", "--metrics", "RR"]]
    tables = []
    for k, form in enumerate(forms):
        code, _, err = _out(analysis_maxent.main, [*form, *common, "--out", str(tmp_path / str(k))])
        assert code == 0, err
        tables.append((tmp_path / str(k) / "summary.csv").read_bytes())
    assert tables[0] == tables[1]


def test_active_eval_takes_the_same_names(small, tmp_path):
    base = ["--budgets", "3", "--repetitions", "5", "--folds", "2", "--experiments", "errors", "--no-progress"]
    outs = []
    for k, form in enumerate([[str(small / "qrels.txt"), str(small / "runs"), "-m", "ERR@10"],
                              ["--qrels", str(small / "qrels.txt"), "--runs", str(small / "runs"), "--metric", "ERR@10"]]):
        code, _, err = _out(active_eval.main, [*form, *base, "--out", str(tmp_path / str(k))])
        assert code == 0, err
        outs.append((tmp_path / str(k) / "errors.csv").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("main", [evaluate_cli.main, compare_cli.main, analysis_maxent.main, active_eval.main,
                                  gap_thresholds.main],
                         ids=["evaluate", "compare", "analysis.maxent", "active_eval", "gap_thresholds"])
def test_help_shows_the_same_names(main, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "QRELS RUN" in text and "--qrels QRELS" in text and "--runs RUNS [RUNS ...]" in text
    if main is not gap_thresholds.main:
        assert "-m MEASURES, --measures MEASURES, --metrics MEASURES" in text
