"""``python -m analysis.learning`` end to end on small artificial data (in-process main())."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.learning import main

SMALL = ["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "5",
         "--epochs", "2", "--learning-rates", "0.01,0.1", "--fractions", "0.5,1", "--features", "2,all",
         "--mc-directions", "3", "--workers", "1", "--no-progress", "--parts", "table,curves,sweep,optimality"]


def test_all_parts_and_resume(tmp_path, capsys):
    out = tmp_path / "res"
    figs = tmp_path / "figs"
    assert main(SMALL + ["--out", str(out), "--figures-dir", str(figs)]) == 0
    stdout = capsys.readouterr().out
    assert "Tables 2-4" in stdout and "Fig. 4" in stdout and "Table 5" in stdout
    table = pd.read_csv(out / "table.csv")
    assert len(table) == 6 * 5                                # rows x columns of the issue
    assert set(table.train) == {"AP", "P@10", "nDCG", "nDCG@10", "RR", "GAP"}
    # oracle: each cell is 100 x the mean per-query test value its selected training run recorded
    import json

    records = [json.loads(p.read_text()) for p in (out / "runs").glob("table__*.json")]
    for row in table.itertuples(index=False):
        rec = [r for r in records if r["train"] == row.train and r["lr"] == row.lr and r["seed"] == row.seed]
        assert len(rec) == 1, (row.train, row.lr)
        assert row.value == pytest.approx(100 * np.mean(rec[0]["selected"][row.test]["test"]), abs=1e-6)
    assert table.value.nunique() > 1
    assert (table[table.train == table.test].diff_vs_self == 0).all()
    curves = pd.read_csv(out / "curves.csv")
    assert set(curves.epoch) == {0, 1, 2}
    sweep = pd.read_csv(out / "sweep.csv")
    assert set(sweep.features) == {2, 5} and set(sweep.fraction) == {0.5, 1.0}
    opt = pd.read_csv(out / "optimality.csv")
    assert (opt.alterations == 30).all() and (opt.improved_eps <= opt.improved).all()
    for name in ("curves.png", "curves.csv", "sweep.png", "sweep.csv"):
        assert (figs / name).stat().st_size > 0
    # --resume: finished training runs are not redone (files untouched)
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    assert len(stamps) == 6 * 2 + 2 * 2 * 4                   # table grid + sweep grid
    assert main(SMALL + ["--out", str(out), "--resume", "--parts", "table,sweep"]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == stamps


def test_errors(tmp_path, capsys):
    assert main(SMALL + ["--out", str(tmp_path), "--train-metrics", "Rprec"]) == 1
    assert "error:" in capsys.readouterr().err
    assert main(["--dataset", "nosuch", "--out", str(tmp_path), "--no-progress"]) == 1
    with pytest.raises(SystemExit) as e:
        main(["--model", "tree"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "default" in capsys.readouterr().out


@pytest.mark.parametrize("objective,extra", [("softrank", ["--sigma-s", "0.5"]),
                                             ("approxrank", ["--approx-alpha", "20", "--approx-beta", "5"])])
def test_objective_option(tmp_path, objective, extra):
    """--objective trains the table with SoftRank / ApproxRank; run files are named by objective,
    and a metric the objective cannot smooth is refused."""
    out = tmp_path / objective
    args = SMALL + ["--out", str(out), "--parts", "table", "--train-metrics", "AP,nDCG",
                    "--objective", objective] + extra
    assert main(args) == 0
    table = pd.read_csv(out / "table.csv")
    assert set(table.train) == {"AP", "nDCG"} and table.value.between(0, 100).all()
    runs = sorted(p.name for p in (out / "runs").glob("*.json"))
    assert runs and all(r.startswith(objective + "__") for r in runs)
    assert main(SMALL + ["--out", str(out), "--objective", objective, "--train-metrics", "RR"]) == 1


def _marks_in_text(text: str, trains, tests) -> dict:
    """Marks per (train, test) read back from the first block of table.txt (12-char cells)."""
    lines = text.splitlines()
    out = {}
    for tr, line in zip(trains, lines[1:1 + len(trains)]):
        assert line.startswith(tr)
        for k, te in enumerate(tests):
            cell = line[14 + 12 * k: 14 + 12 * (k + 1)]
            out[(tr, te)] = cell[10:].strip()
    return out


def _marks_in_csv(table: pd.DataFrame) -> dict:
    flag = lambda v: str(v) == "True"                      # CSV text, independent of the code's parsing
    return {(r.train, r.test): ("*" if flag(r.sig_vs_self) else "") +
            ("o" if "sig_ap_ndcg" in table and flag(r.sig_ap_ndcg) else "") for r in table.itertuples()}


def test_marks_agree_with_csv_flags(tmp_path):
    """Regression (issue 10): numpy booleans once printed no marks. A table whose flags are numpy
    bools, NaN and plain bools, round-tripped through CSV, prints exactly the CSV's marks."""
    import numpy as np

    from analysis.learning import cell_marks, table_text

    trains, tests = ["AP", "nDCG", "P@10"], ["AP", "P@10"]
    rng = np.random.default_rng(0)
    rows = []
    for te in tests:
        for tr in trains:
            rows.append({"train": tr, "test": te, "value": 50 + rng.random(), "n_queries": 50,
                         "diff_vs_self": 0.0, "ci_low": np.nan, "ci_high": np.nan, "mde": np.nan,
                         "p_t": np.nan, "p_wilcoxon": np.nan, "p_sign": np.nan,
                         "sig_vs_self": np.bool_(tr != te and rng.random() < 0.6),
                         "sig_ap_ndcg": np.bool_(rng.random() < 0.5) if tr in ("AP", "nDCG") else np.nan})
    table = pd.DataFrame(rows)
    assert table.sig_vs_self.any() and table.sig_ap_ndcg.eq(True).any()
    table.to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv")
    for t in (table, back):
        marks = _marks_in_text(table_text(t, trains, tests, 0.05, 0.8), trains, tests)
        assert marks == _marks_in_csv(back)
        assert any(marks.values())
    assert cell_marks({"sig_vs_self": np.bool_(True), "sig_ap_ndcg": np.nan}) == "*"


def test_table_power_patience_and_optimality001(tmp_path, capsys):
    """End to end: marks in table.txt = flags in table.csv; every off-diagonal cell has a
    bootstrap CI around its difference and an MDE; runs stop by patience or the cap; curves mark
    the selected epoch; paper 001's protocol writes its counts, curves and figure."""
    out = tmp_path / "res"
    figs = tmp_path / "figs"
    args = ["--dataset", "artificial", "--n-queries", "120", "--docs-per-query", "8", "--n-features", "5",
            "--epochs", "6", "--patience", "2", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG,P@10",
            "--test-metrics", "AP,P@10,nDCG@10", "--mc-directions", "5", "--mc-weights", "3", "--n-boot", "500",
            "--workers", "1", "--no-progress", "--parts", "table,curves,optimality,optimality001",
            "--out", str(out), "--figures-dir", str(figs)]
    assert main(args) == 0
    stdout = capsys.readouterr().out
    assert "minimum detectable effect" in stdout and "Paper 001" in stdout
    table = pd.read_csv(out / "table.csv")
    text = (out / "table.txt").read_text()
    assert _marks_in_text(text, ["AP", "nDCG", "P@10"], ["AP", "P@10", "nDCG@10"]) == _marks_in_csv(table)
    off = table[(table.train != table.test) & table.test.isin(["AP", "P@10"])]
    assert len(off) == 4 and (off.ci_low <= off.diff_vs_self + 1e-9).all() and (off.diff_vs_self <= off.ci_high + 1e-9).all()
    assert (off.mde >= 0).all() and (off.mde > 0).any() and ((off.mde == 0) == (off.sd_diff == 0)).all()
    assert set(table.stop_reason) <= {"patience", "epoch_cap"} and (table.epoch <= table.stopped_epoch).all()
    # the convergence lines of table.txt count the run records (oracle: runs/*.json read here)
    import json
    import re
    recs = [json.loads(p.read_text()) for p in (out / "runs").glob("table__*.json")]
    n_pat = sum(r["stop_reason"] == "patience" for r in recs)
    m = re.search(r"training runs: (\d+) stopped by patience \(2 epochs\), (\d+) hit the epoch cap \(6\)", text)
    assert m and (int(m[1]), int(m[2])) == (n_pat, len(recs) - n_pat) and len(recs) == 3
    m = re.search(r"validation selections \(cell x fold x seed\): (\d+), (\d+) kept epoch 0 .*chosen: 0.05: (\d+)", text)
    assert m and int(m[1]) == int(m[3]) == len(table) == 9
    assert int(m[2]) == int((table.epoch == 0).sum())     # one fold: the CSV's selected epochs
    # claims.csv: paper 000's AP-vs-P@10 claim is the table's off-diagonal cell (same difference, p-values)
    claims = pd.read_csv(out / "claims.csv")
    c = claims[claims.claim == "train AP > train P@10 on test P@10"].iloc[0]
    cell = table[(table.train == "AP") & (table.test == "P@10")].iloc[0]
    assert c["diff"] == pytest.approx(cell.diff_vs_self) and c.p_t == pytest.approx(cell.p_t, nan_ok=True)
    assert set(claims.verdict) <= {"reproduces", "reversed", "not significant"}
    # Holm over the table's claims, on the largest of each claim's three p-values (oracle: Holm's
    # step-down written out: the k-th smallest p times (m - k + 1), running maximum, capped at 1)
    pmax = claims[["p_t", "p_wilcoxon", "p_sign"]].max(axis=1).to_numpy()
    assert np.allclose(claims.p_max, pmax, equal_nan=True)
    order, m, holm, run = np.argsort(pmax, kind="stable"), len(pmax), np.empty(len(pmax)), 0.0
    for k, j in enumerate(order):
        run = max(run, min(1.0, (m - k) * pmax[j]))
        holm[j] = run
    assert np.allclose(claims.p_holm, holm, equal_nan=True) and (claims.p_holm >= claims.p_max - 1e-15).all()
    assert (claims.verdict_holm == np.where(claims.p_holm < 0.05, claims.verdict, "not significant")).all()
    curves = pd.read_csv(out / "curves.csv")
    for _, d in curves.groupby(["train", "test"]):
        assert d.epoch.max() == d.stopped_epoch.iloc[0] and d.selected_epoch.iloc[0] <= d.epoch.max()
        # the selected epoch is the best validation value of the test metric (first on ties)
        assert d.selected_epoch.iloc[0] == d.epoch.iloc[int(d.test_metric_on_valid.values.argmax())]
    counts = pd.read_csv(out / "optimality001_counts.csv")
    assert set(counts.train_metric) == {"AP", "nDCG", "P@10"}
    assert set(counts.directions) == {"random", "weights"}
    assert (counts[counts.directions == "weights"].n_directions == 6).all()
    assert (counts.improved <= counts.n_directions).all() and (counts.improved_eps <= counts.improved).all()
    for name in ("optimality001.png", "optimality001.csv", "curves.png"):
        assert (figs / name).stat().st_size > 0


def test_folds_pool_every_query_once(tmp_path):
    """k-fold: the test groups partition the queries; train, validation and test are disjoint;
    the table pools the test queries of all folds (n_queries = all of them)."""
    import numpy as np

    from analysis.learning import fold_split
    from maxent.letor import make_artificial

    data = make_artificial(31, 5, 3, seed=0)
    tests = []
    for k in range(4):
        tr, va, te = fold_split(data, 4, k, seed=1)
        assert not (set(tr.qids) & set(va.qids)) and not (set(tr.qids) & set(te.qids)) and not (set(va.qids) & set(te.qids))
        assert tr.n_queries + va.n_queries + te.n_queries == 31
        tests.extend(te.qids)
    assert sorted(tests) == sorted(data.qids)
    out = tmp_path / "f"
    assert main(["--dataset", "artificial", "--n-queries", "45", "--docs-per-query", "6", "--n-features", "4",
                 "--epochs", "2", "--folds", "3", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG",
                 "--test-metrics", "AP,nDCG", "--parts", "table", "--n-boot", "200", "--workers", "1",
                 "--no-progress", "--out", str(out)]) == 0
    table = pd.read_csv(out / "table.csv")
    assert (table.n_queries == 45).all()
    assert len(list((out / "runs").glob("*fold*of3.json"))) == 2 * 3
    assert main(["--dataset", "yahoo", "--folds", "3", "--out", str(out), "--no-progress"]) == 1


def test_paper002_grid_and_best_restart(tmp_path):
    """Paper 002's protocol: alpha x beta grid and K restarts, all chosen on validation. Oracle:
    brute force over the run files: the table cell is the test mean of the run with the best
    validation value of the test metric (first in job order on ties)."""
    import json

    import numpy as np

    out = tmp_path / "p2"
    assert main(["--dataset", "artificial", "--n-queries", "40", "--docs-per-query", "6", "--n-features", "4",
                 "--epochs", "2", "--learning-rates", "0.05", "--objective", "approxrank",
                 "--approx-alpha", "10,50", "--approx-beta", "5", "--seeds", "0,1", "--best-restart",
                 "--train-metrics", "AP,nDCG", "--test-metrics", "AP,nDCG", "--parts", "table", "--n-boot", "100",
                 "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    table = pd.read_csv(out / "table.csv")
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    assert len(runs) == 2 * 2 * 2 and {r["alpha"] for r in runs} == {10, 50}
    order = {(a, s): i for i, (s, a) in enumerate((s, a) for s in (0, 1) for a in (10, 50))}   # job order
    for r in table.itertuples():
        cand = sorted((x for x in runs if x["train"] == r.train), key=lambda x: order[(x["alpha"], x["seed"])])
        best = max(cand, key=lambda x: x["selected"][r.test]["valid"])   # max keeps the first on ties
        assert r.value == pytest.approx(100 * np.mean(best["selected"][r.test]["test"]))
        assert (r.alpha, r.seed) == (best["alpha"], best["seed"])


def test_approx_error_part(tmp_path):
    """approx_error on two bundled runs: the error shrinks as alpha grows (paper 002 theorems
    1-2) and the true mean equals the library's metric on the same lists."""
    from pathlib import Path

    runs = sorted((Path(__file__).resolve().parents[1] / "trec_runs" / "runs").glob("*.gz"))[:2]
    out = tmp_path / "ae"
    assert main(["--dataset", "artificial", "--n-queries", "20", "--parts", "approx_error", "--approx-runs",
                 *map(str, runs), "--approx-alphas", "1,30,3000", "--approx-depth", "20", "--no-progress",
                 "--out", str(out), "--figures-dir", str(tmp_path / "figs")]) == 0
    df = pd.read_csv(out / "approx_error.csv")
    assert set(df.metric) == {"nDCG", "nDCG@10", "P@10", "AP"} and (df.n_lists == 60).all()
    for _, d in df.groupby("metric"):
        err = d.sort_values("alpha").mean_abs_error.values
        assert err[-1] < err[0] and err[-1] < 0.01
    assert (tmp_path / "figs" / "approx_error.png").stat().st_size > 0


def test_pairs_part(tmp_path):
    """pairs (paper 001 Fig. 5): one row per (training metric, size); effective pairs bounded by the
    candidate pairs; MRR learns from fewer pairs than nDCG; the training size grows with --fractions."""
    out = tmp_path / "pairs"
    assert main(["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "4",
                 "--epochs", "2", "--learning-rates", "0.05", "--fractions", "0.5,1", "--parts", "pairs",
                 "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    df = pd.read_csv(out / "pairs.csv")
    assert len(df) == 4 * 2 and (df.effective_pairs <= df.candidate_pairs).all()
    for _, d in df.groupby("fraction"):
        e = d.set_index("train").effective_pairs
        assert e["RR"] < e["nDCG"]
    assert df.groupby("fraction").n_train_queries.first().is_monotonic_increasing
    assert (out / "pairs.png").stat().st_size > 0


def test_runs_saved_as_they_finish(tmp_path, monkeypatch, capsys):
    """A crash in the third training run keeps the two finished records on disk (they used to be
    written only after the last run), and --resume then trains only the missing ones."""
    import analysis.learning as learning

    out = tmp_path / "crash"
    args = ["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "4",
            "--epochs", "2", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG,P@10",
            "--test-metrics", "AP,P@10", "--workers", "1", "--no-progress", "--parts", "table", "--out", str(out)]
    real, calls = learning.run_job, []

    def failing(job):
        calls.append(job["name"])
        if len(calls) == 3:
            raise RuntimeError("worker died")
        return real(job)

    monkeypatch.setattr(learning, "run_job", failing)
    with pytest.raises(RuntimeError, match="worker died"):
        learning.body(learning.build_parser().parse_args(args))
    saved = sorted(p.stem for p in (out / "runs").glob("*.json"))
    assert saved == sorted(calls[:2])
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    calls.clear()
    assert main(args + ["--resume"]) == 0
    assert len(calls) == 1 and calls[0] not in saved                # only the missing run is trained
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json") if p.name in stamps} == stamps
