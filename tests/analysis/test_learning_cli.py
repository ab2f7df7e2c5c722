"""``python -m analysis.learning`` end to end on small artificial data (in-process main())."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.learning import main

SMALL = ["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "5",
         "--epochs", "2", "--learning-rates", "0.01,0.1", "--fractions", "0.5,1", "--features", "2,all",
         "--mc-directions", "3", "--workers", "1", "--no-progress", "--parts", "table,curves,sweep,optimality"]


def test_all_parts_and_resume(tmp_path, capsys, monkeypatch):
    from maxent.cli import progress

    monkeypatch.setattr(progress, "AFTER", 0.0)      # every step "long": each is said on stderr
    out = tmp_path / "res"
    figs = tmp_path / "figs"
    assert main(SMALL + ["--out", str(out), "--figures-dir", str(figs)]) == 0
    stdout, stderr = capsys.readouterr()
    assert "Tables 2-4" in stdout and "Fig. 4" in stdout and "Table 5" in stdout
    # without a terminal: each part and its training runs counted to their totals (the grids below)
    for line in ("reading the data: done in ", "part table: done in ", "table runs: 12/12 done in ",
                 "part sweep: done in ", "sweep runs: 16/16 done in ", "part optimality: done in "):
        assert line in stderr, stderr
    table = pd.read_csv(out / "table.csv")
    assert len(table) == 6 * 5                                # rows x columns
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
    assert len(stamps) == 6 * 2 + 2 * 2 * 4 + 4               # table grid + sweep grid + Table 5's optimum runs
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
    """Regression: numpy booleans once printed no marks. A table whose flags are numpy
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
    the selected epoch; Donmez et al.'s protocol writes its counts, curves and figure."""
    out = tmp_path / "res"
    figs = tmp_path / "figs"
    args = ["--dataset", "artificial", "--n-queries", "120", "--docs-per-query", "8", "--n-features", "5",
            "--epochs", "6", "--patience", "2", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG,P@10",
            "--test-metrics", "AP,P@10,nDCG@10", "--mc-directions", "5", "--mc-weights", "3", "--n-boot", "500",
            "--optimum-epochs", "40",
            "--workers", "1", "--no-progress", "--parts", "table,curves,optimality,optimality001",
            "--out", str(out), "--figures-dir", str(figs)]
    assert main(args) == 0
    stdout = capsys.readouterr().out
    assert "minimum detectable effect" in stdout and "Donmez et al. 2009" in stdout
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
    # claims.csv: Yilmaz & Robertson's AP-vs-P@10 claim is the table's off-diagonal cell (same difference, p-values)
    claims = pd.read_csv(out / "claims.csv")
    c = claims[claims.claim == "train AP > train P@10 on test P@10"].iloc[0]
    cell = table[(table.train == "AP") & (table.test == "P@10")].iloc[0]
    assert c["diff"] == pytest.approx(cell.diff_vs_self) and c.p_t == pytest.approx(cell.p_t, nan_ok=True)
    # the one verdict rule: paired t, Holm over the run's claims (oracle: Holm's step-down written
    # out: the k-th smallest p times (m - k + 1), running maximum, capped at 1)
    p = claims.p_t.to_numpy()
    order, m, holm, run = np.argsort(p, kind="stable"), len(p), np.empty(len(p)), 0.0
    for k, j in enumerate(order):
        run = max(run, min(1.0, (m - k) * p[j]))
        holm[j] = run
    assert np.allclose(claims.p_holm, holm, equal_nan=True)
    for r in claims.itertuples():
        want = ("reproduces" if r.diff > 0 else "reversed") if r.p_holm < 0.05 else f"undecided (MDE {r.mde:.2f})"
        assert r.verdict == want
    # n_test_queries and the family MDE (Holm's most stringent level alpha / m)
    from maxent.stats import minimum_detectable_effect
    assert (claims.n_test_queries == 24).all() and (claims.n_claims == len(claims)).all()
    for r in claims.itertuples():
        assert r.mde == pytest.approx(minimum_detectable_effect(r.sd_diff, 24, alpha=0.05 / len(claims)))
    assert (claims.ci_excludes_zero == ((claims.ci_low > 0) | (claims.ci_high < 0))).all()
    power = pd.read_csv(out / "power.csv")
    assert list(power.claim) == list(claims.claim) and (power.target_mde == 0.5).all()
    # every model: selected epoch, weight norm, checksum; equal checksums only for equal weights
    models = pd.read_csv(out / "models.csv")
    recs = {r["name"]: r for r in recs}
    for r in models[models.run.str.startswith("table")].itertuples():
        th = np.asarray(recs[r.run]["thetas"]["final" if r.selection == "final" else r.selection])
        assert r.norm == pytest.approx(np.linalg.norm(th))
    opt = pd.read_csv(out / "optimality.csv")
    assert set(opt.split) == {"train", "test"} and set(opt.weights) == {"optimum", "selected"}
    assert len(opt) == 3 * 2 * 2              # (AP, P@10), (P@10, P@10), (nDCG, nDCG@10) x weights x split
    # the training optimum: the last epoch of a run ended by the convergence rule (oracle: the rule
    # applied here to the optimum run's recorded training objective), else its best training epoch
    from analysis.learning.jobs import fingerprint
    opt_recs = {r["train"]: r for r in (json.loads(p.read_text()) for p in (out / "runs").glob("optimum__*.json"))}
    assert len(opt_recs) == 3 and all("__conv0.001w5e40" in r["name"] for r in opt_recs.values())
    for r in opt[opt.weights == "optimum"].itertuples():
        rec = opt_recs[r.train_metric]
        # the first "train:" entry of a history row is the training objective
        obj = np.array([next(v for k, v in h.items() if k.startswith("train:")) for h in rec["history"]])
        seg = np.array([h["restarts"] for h in rec["history"]])
        vals = obj[seg == seg[-1]]
        rule = len(vals) > 10 and abs(vals[-5:].mean() - vals[-10:-5].mean()) < 1e-3
        assert r.converged == rule == (rec["stop_reason"] == "converged") and r.epochs_run == rec["stopped_epoch"]
        assert r.epochs_run == len(rec["history"]) - 1 <= 40
        key = "final" if r.converged else "best_train"
        assert r.checksum == fingerprint(rec["thetas"][key])["checksum"]
        assert r.epoch == (r.epochs_run if r.converged else rec["best_train_epoch"])
    assert opt.converged[opt.weights == "optimum"].any()      # the rule fires on this set
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
    assert (counts.improved <= counts.not_worse).all() and (counts.not_worse <= counts.n_directions).all()
    assert set(counts.weights) == {"optimum", "selected"}
    for name in ("optimality001.png", "optimality001.csv", "curves.png"):
        assert (figs / name).stat().st_size > 0


def test_folds_pool_every_query_once(tmp_path):
    """k-fold: the test groups partition the queries; train, validation and test are disjoint;
    the table pools the test queries of all folds (n_queries = all of them)."""
    import numpy as np

    from analysis.learning import fold_split
    from maxent.synthetic import artificial, make_synthetic

    data = make_synthetic(31, **artificial(5, 3), seed=0)
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
    """Qin et al.'s (2010) protocol: alpha x beta grid and K restarts, all chosen on validation. Oracle:
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
    """approx_error on two bundled runs: the error shrinks as alpha grows (Qin et al. 2010 theorems
    1-2) and the true mean equals the library's metric on the same lists."""
    from pathlib import Path

    runs = sorted((Path(__file__).resolve().parents[2] / "trec_runs" / "runs").glob("*.gz"))[:2]
    out = tmp_path / "ae"
    assert main(["--dataset", "artificial", "--n-queries", "20", "--parts", "approx_error", "--approx-runs",
                 *map(str, runs), "--approx-alphas", "1,30,3000", "--approx-depth", "20", "--no-progress",
                 "--approx-beta", "10,100", "--out", str(out), "--figures-dir", str(tmp_path / "figs")]) == 0
    df = pd.read_csv(out / "approx_error.csv")
    assert set(df.metric) == {"nDCG", "nDCG@10", "P@10", "AP"} and (df.n_lists == 60).all()
    assert set(df.beta) == {10, 100} and len(df) == 4 * 2 * 3          # every beta of the grid
    for _, d in df.groupby(["metric", "beta"]):
        err = d.sort_values("alpha").mean_abs_error.values
        assert err[-1] < err[0] and err[-1] < 0.01
    assert (tmp_path / "figs" / "approx_error.png").stat().st_size > 0


def test_pairs_part(tmp_path):
    """pairs (Donmez et al. 2009 Fig. 5): one row per (training metric, size); effective pairs bounded by the
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
    import analysis.learning.jobs as jobs

    out = tmp_path / "crash"
    args = ["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "4",
            "--epochs", "2", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG,P@10",
            "--test-metrics", "AP,P@10", "--workers", "1", "--no-progress", "--parts", "table", "--out", str(out)]
    real, calls = jobs.run_job, []

    def failing(job):
        calls.append(job["name"])
        if len(calls) == 3:
            raise RuntimeError("worker died")
        return real(job)

    monkeypatch.setattr(jobs, "run_job", failing)        # _run_training looks it up there
    with pytest.raises(RuntimeError, match="worker died"):
        learning.body(learning.build_parser().parse_args(args))
    saved = sorted(p.stem for p in (out / "runs").glob("*.json"))
    assert saved == sorted(calls[:2])
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    calls.clear()
    assert main(args + ["--resume"]) == 0
    assert len(calls) == 1 and calls[0] not in saved                # only the missing run is trained
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json") if p.name in stamps} == stamps


def test_approx_part_grid_restarts_and_comparison(tmp_path):
    """approx (Qin et al. 2010): one ApproxRank run per (metric, alpha, beta, restart); the alpha x
    restarts table picks on validation among the first K restarts (oracle: the grid CSV re-read
    here); ApproxAP/ApproxNDCG against LambdaRank and LambdaMART under the one verdict rule."""
    pytest.importorskip("lightgbm")
    out = tmp_path / "ap"
    assert main(["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "4",
                 "--epochs", "2", "--learning-rates", "0.05", "--train-metrics", "AP,nDCG", "--test-metrics",
                 "AP,nDCG@10", "--approx-alpha", "10,100", "--approx-beta", "1,10", "--approx-restarts", "2",
                 "--trees", "5", "--min-data-in-leaf", "2", "--parts", "approx", "--n-boot", "200",
                 "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    grid = pd.read_csv(out / "approx_grid.csv")
    assert len(grid) == 2 * 2 * 2 * 2
    rest = pd.read_csv(out / "approx_restarts.csv")
    assert len(rest) == 2 * 2 * 2 and set(rest.restarts) == {1, 2}
    for r in rest.itertuples():
        pool = grid[(grid.train == r.train) & (grid.alpha == r.alpha) & (grid.restart < r.restarts)]
        best = pool.loc[pool[f"valid_{r.test}"].idxmax()]
        assert r.value == pytest.approx(best[f"test_{r.test}"]) and r.beta == best.beta
    # more restarts never lower the validation value chosen
    for _, d in rest.groupby(["train", "alpha"]):
        assert d.sort_values("restarts").valid.is_monotonic_increasing
    comp = pd.read_csv(out / "approx_compare.csv")
    assert set(comp.versus) == {"lambdarank", "lambdamart"} and len(comp) == 2 * 2 * 2
    assert ((comp.verdict.isin(["reproduces", "reversed"])) | comp.verdict.str.startswith("undecided")).all()
    assert np.allclose(comp["diff"], comp.approx - comp.other)
    assert set(comp.claim.str.split(" ").str[0]) == {"ApproxAP", "ApproxNDCG"}


def test_evidence_copies_the_parts_csvs_with_provenance(tmp_path, monkeypatch):
    """--evidence: the asked parts' small CSVs, identical to the run's, beside a PROVENANCE.json that
    names the exact command and the BLAS thread variables set; no per-run records."""
    import json

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)

    out, ev = tmp_path / "o", tmp_path / "ev"
    assert main(["--dataset", "synthetic", "--n-queries", "60", "--min-docs", "5", "--max-docs", "12", "--epochs", "1",
                 "--learning-rates", "0.05", "--train-metrics", "AP,P@10", "--test-metrics", "AP,P@10",
                 "--parts", "table", "--n-boot", "100", "--workers", "1", "--no-progress", "--out", str(out),
                 "--evidence", str(ev)]) == 0
    assert sorted(p.name for p in ev.iterdir()) == sorted(["PROVENANCE.json", "table.csv", "table.txt", "claims.csv",
                                                           "power.csv", "models.csv"])
    for name in ("table.csv", "claims.csv"):
        assert (ev / name).read_bytes() == (out / name).read_bytes()
    prov = json.loads((ev / "PROVENANCE.json").read_text())
    assert prov["command"].startswith("python -m analysis.learning --dataset synthetic --n-queries 60")
    assert prov["command"].endswith(f"--evidence {ev}") and prov["dataset"] == "synthetic"
    assert {"commit", "date", "wall_time_s", "machine"} <= set(prov)
    assert prov["thread_env"].get("OPENBLAS_NUM_THREADS") == "1" and "MKL_NUM_THREADS" not in prov["thread_env"]


@pytest.mark.parametrize("extra, option", [(["--split-fractions", "0.6,0.2"], "--split-fractions"),
                                           (["--split-fractions", "0.6,0.3,0.3"], "--split-fractions"),
                                           (["--feature-noise", "-1"], "--feature-noise"),
                                           (["--min-docs", "20", "--max-docs", "10"], "--min-docs"),
                                           (["--target-mde", "0"], "--target-mde"),
                                           (["--approx-restarts", "0"], "--approx-restarts")])
def test_new_options_refuse_bad_values(tmp_path, capsys, extra, option):
    assert main(["--dataset", "synthetic", "--n-queries", "30", "--parts", "table", "--no-progress",
                 "--out", str(tmp_path)] + extra) == 1
    err = capsys.readouterr().err
    assert option in err and len(err.strip().splitlines()) == 1


def test_fingerprint_tells_identical_weights_apart():
    """Equal checksums exactly for bit-identical weights; the norm is the Euclidean norm."""
    from analysis.learning.jobs import fingerprint

    w = np.random.default_rng(0).standard_normal(50)
    a, b = fingerprint(w), fingerprint(w.copy())
    assert a == b and a["norm"] == pytest.approx(np.linalg.norm(w))
    w2 = w.copy()
    w2[7] = np.nextafter(w2[7], np.inf)                  # one ulp apart
    assert fingerprint(w2)["checksum"] != a["checksum"]
    assert fingerprint(w.tolist()) == a                  # JSON round trip (lists) gives the same digest


def test_failed_write_leaves_the_finished_result(tmp_path):
    """Under a file-size limit the figures cannot be written: the run fails naming the file,
    and the outputs of the finished run before it are all still there, unchanged."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    argv = [*SMALL[:-1], "table,curves", "--out", str(tmp_path)]
    assert main(argv) == 0
    files = lambda: {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and not p.name.startswith(".")}
    before = files()
    assert {"table.csv", "curves.png", "summary.json"} <= set(before)
    done = subprocess.run(["prlimit", "--fsize=3000", sys.executable, "-m", "analysis.learning", *argv, "--resume"],
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1 and errors[0].startswith(f"error: {tmp_path}/") and "(File too large)" in errors[0]
    assert files() == before
