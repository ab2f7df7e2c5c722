"""``python -m analysis.active_eval``: interface, outputs and errors."""
from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from analysis import active_eval

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())[:3]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
SMALL = ["--runs", *map(str, RUNS), "--qrels", str(QRELS), "--depth", "20", "--repetitions", "20",
         "--folds", "3", "--no-progress"]


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as e:
        active_eval.main(["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for opt in ("--runs", "--qrels", "--metric", "--budgets", "--repetitions", "--seed", "--out",
                "--letor", "--model", "--experiments", "--max-pairs", "--update-fraction"):
        assert opt in text


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("active")
    rc = active_eval.main([*SMALL, "--metric", "DCG@10,ERR@10", "--budgets", "3,6", "--seed", "1",
                           "--out", str(out)])
    assert rc == 0
    return out


def test_outputs_have_the_promised_columns(small_run):
    errors = pd.read_csv(small_run / "errors.csv")
    assert {"method", "metric", "budget", "rmse"} <= set(errors.columns)
    assert {"active", "passive", "active_uniD", "active_uniC"} <= set(errors["method"])
    assert set(errors["metric"]) == {"DCG@10", "ERR@10"}
    assert set(errors["budget"]) == {3.0, 6.0}
    # the truth each error is measured against is the ranker's mean metric (oracle: evaluate);
    # an RMS error is at least the mean absolute error, and sampling leaves some error
    from maxent import evaluate

    truth = evaluate(QRELS, RUNS, ["DCG@10", "ERR@10"]).groupby(["run", "measure"])["value"].mean()
    per_ranker = errors[errors["ranker"] != "all"].drop_duplicates(["metric", "ranker"])
    assert len(per_ranker) == 6
    for r in per_ranker.itertuples(index=False):
        assert r.truth == pytest.approx(truth[(r.ranker, r.metric)], rel=1e-9)
    assert (errors["rmse"] >= errors["mean_abs"] - 1e-12).all() and (errors["rmse"] > 0).any()
    sel = pd.read_csv(small_run / "selection.csv")
    assert {"method", "metric", "budget", "pair", "wrong_rate"} <= set(sel.columns)
    assert sel["wrong_rate"].between(0, 1).all()
    assert "all" in set(sel["pair"])
    for name in ("update", "sampling", "costs", "summary"):
        assert (small_run / f"{name}.csv").exists()
    for name in ("errors", "selection", "update", "sampling", "costs", "saved"):
        assert (small_run / f"{name}.png").exists()
    summary = pd.read_csv(small_run / "summary.csv", keep_default_na=False)
    assert {"passive_budget", "saved", "saved_side", "saved_lo", "saved_hi", "pool_queries", "queries_active",
            "queries_passive"} <= set(summary.columns)
    assert (summary["pool_queries"] == 30).all()           # the bundled sample's topics
    assert (summary["queries_passive"] <= 30).all()
    assert set(summary["saved_side"]) <= {"", "<", ">"}
    ok = summary["saved_side"] == ""
    saved = summary["saved"].astype(float)
    assert (1 - summary["budget"] / summary["passive_budget"].astype(float) - saved).abs().max() < 1e-9
    assert (summary.loc[ok, "saved_lo"].astype(float) <= saved[ok] + 1e-9).all()
    samp = pd.read_csv(small_run / "sampling.csv")
    assert samp["ranker"].str.contains("|", regex=False).any()      # eq. 17 rows for a pair
    for m, g in samp.groupby(["ranker", "metric"]):
        assert g["q_active"].sum() == pytest.approx(1.0)


def test_counted_progress_reaches_its_total(capsys, monkeypatch, tmp_path):
    # without a terminal (stderr captured) the experiments are counted on stderr: every step
    # made "long" (threshold 0), the closing line gives the count reached, which is the total:
    # 3 rankers for errors and update, 3 pairs for selection, one metric
    from maxent.cli import progress

    monkeypatch.setattr(progress, "AFTER", 0.0)
    rc = active_eval.main([*SMALL, "--metric", "DCG@10", "--budgets", "3", "--out", str(tmp_path),
                           "--experiments", "errors,selection,update"])
    assert rc == 0
    err = capsys.readouterr().err
    assert "active_eval: 9/9 done in " in err, err
    assert "reading the pool and fitting the relevance model: done in " in err
    assert "writing the tables and figures: done in " in err


def test_same_seed_same_results(small_run, tmp_path):
    rc = active_eval.main([*SMALL, "--metric", "DCG@10,ERR@10", "--budgets", "3,6", "--seed", "1",
                           "--out", str(tmp_path), "--experiments", "errors"])
    assert rc == 0
    a = pd.read_csv(small_run / "errors.csv")
    b = pd.read_csv(tmp_path / "errors.csv")
    pd.testing.assert_frame_equal(a, b)


def _error(argv, capsys):
    rc = active_eval.main(argv)
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("error: ")
    return err


def test_budget_below_cheapest_query(capsys, tmp_path):
    err = _error([*SMALL, "--budgets", "0.5", "--out", str(tmp_path), "--experiments", "errors"], capsys)
    assert "below the cheapest" in err


def test_metric_the_estimator_cannot_take(capsys, tmp_path):
    err = _error([*SMALL, "--metric", "AP", "--out", str(tmp_path)], capsys)
    assert "supports DCG and ERR" in err


def test_pool_of_one_query(capsys, tmp_path):
    one = tmp_path / "qrels.txt"
    lines = [l for l in QRELS.read_text().splitlines() if l.split()[0] == "1"]
    one.write_text("\n".join(lines) + "\n")
    err = _error(["--runs", *map(str, RUNS), "--qrels", str(one), "--repetitions", "5", "--no-progress",
                  "--out", str(tmp_path / "o")], capsys)
    assert "pool" in err and "1 quer" in err


def test_ranker_with_no_retrieved_documents(capsys, tmp_path):
    run = tmp_path / "empty_run"
    run.write_text("999 Q0 doc1 1 1.0 x\n999 Q0 doc2 2 0.5 x\n")
    err = _error(["--runs", str(RUNS[0]), str(run), "--qrels", str(QRELS), "--depth", "20",
                  "--repetitions", "5", "--no-progress", "--out", str(tmp_path / "o")], capsys)
    assert "empty_run" in err and "no document" in err


def _outputs(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}


def test_resume_keeps_finished_experiments(tmp_path, capsys):
    argv = [*SMALL, "--metric", "ERR@10", "--budgets", "3", "--out", str(tmp_path), "--experiments", "errors"]
    assert active_eval.main(argv) == 0
    chunk = tmp_path / "chunks" / "errors.csv"
    first, before = chunk.stat().st_mtime_ns, _outputs(tmp_path)
    assert active_eval.main([*argv, "--resume"]) == 0
    assert chunk.stat().st_mtime_ns == first and _outputs(tmp_path) == before   # not recomputed
    capsys.readouterr()
    assert active_eval.main([*argv, "--seed", "5", "--resume"]) == 1             # other settings: refused
    assert "made with other settings" in capsys.readouterr().err and _outputs(tmp_path) == before
    assert active_eval.main([*argv, "--seed", "5"]) == 0                         # redone
    assert chunk.stat().st_mtime_ns != first and _outputs(tmp_path) != before
    # a changed input is noticed: its chunk is recomputed, and said so
    runs = tmp_path.parent / f"{tmp_path.name}_runs"
    runs.mkdir()
    for r in RUNS:
        (runs / r.name).write_bytes(r.read_bytes())
    moved = [a for a in argv if a not in map(str, RUNS)]
    moved[moved.index("--runs") + 1: moved.index("--runs") + 1] = [str(runs)]
    out = tmp_path / "again"
    moved[moved.index("--out") + 1] = str(out)
    assert active_eval.main(moved) == 0
    lines = gzip.decompress((runs / RUNS[0].name).read_bytes()).splitlines(keepends=True)
    (runs / RUNS[0].name).write_bytes(gzip.compress(b"".join(lines[1:])))       # its first line gone
    capsys.readouterr()
    assert active_eval.main([*moved, "--resume"]) == 0
    assert "resume: experiment errors: the input files changed since its chunk was written; recomputed" \
        in capsys.readouterr().err


def test_failed_write_leaves_the_finished_result(tmp_path):
    import os
    import subprocess
    import sys

    argv = [*SMALL, "--metric", "ERR@10", "--budgets", "3", "--out", str(tmp_path), "--experiments", "errors,sampling"]
    assert active_eval.main(argv) == 0
    before = _outputs(tmp_path)
    done = subprocess.run(["prlimit", "--fsize=3000", sys.executable, "-m", "analysis.active_eval", *argv, "--resume"],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1 and errors[0].startswith(f"error: {tmp_path}/") and "(File too large)" in errors[0]
    assert _outputs(tmp_path) == before


@pytest.mark.slow
def test_letor_mode_on_mslr(shared_data, tmp_path):
    """LETOR mode end to end: rankers trained on the MSLR 5k training file, pool = its test file."""
    folder = shared_data / "ltr" / "mslr_web10k_5k"
    rc = active_eval.main(["--letor", str(folder), "--budgets", "5", "--repetitions", "10", "--max-pairs", "2",
                           "--no-progress", "--out", str(tmp_path)])
    assert rc == 0
    errors = pd.read_csv(tmp_path / "errors.csv")
    assert {"logit", "lambdarank"} <= set(errors["ranker"])
    costs = pd.read_csv(tmp_path / "costs.csv")
    assert costs["cost_union"].mean() == pytest.approx(1.0)
    assert costs["cost_union"].std() > 0          # document-length costs vary across queries
