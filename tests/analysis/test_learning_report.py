"""The learning guide's generated tables equal what the committed evidence gives today."""
from pathlib import Path

import pandas as pd

from analysis.learning.report import BLOCKS, claims_table
from analysis.report import TABLES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "learning.md"


def test_guide_shows_every_learning_table():
    # tests/analysis/test_report.py regenerates every marked table and compares it with the page
    page = PAGE.read_text()
    for name in BLOCKS:
        assert f"learning_{name}" in TABLES and f"<!-- report:learning_{name} -->" in page


def test_claims_table_rows_come_from_the_csvs(tmp_path):
    d = tmp_path / "toy"
    d.mkdir()
    pd.DataFrame([{"claim": "train AP > train P@10 on test P@10", "diff": 1.234, "ci_low": 0.5, "ci_high": 2.0,
                   "n_test_queries": 5000, "mde": 0.41, "p_holm": 0.0001, "verdict": "reproduces"}]
                 ).to_csv(d / "claims.csv", index=False)
    (tmp_path / "toy-pilot").mkdir()
    (tmp_path / "toy-pilot" / "claims.csv").write_text((d / "claims.csv").read_text())
    lines = claims_table(tmp_path).splitlines()
    assert len(lines) == 3                       # header, rule, one row: pilots are left out
    assert lines[2] == ("| toy | train AP > train P@10 on test P@10 | +1.23 [+0.50, +2.00] | 5000 | 0.41 | 0.000 "
                        "| reproduces |")


def test_optimality_table_shows_epochs_run_and_convergence(tmp_path):
    """Rows from optimality.csv: the optimum's run length and whether it converged; evidence written
    before those columns existed shows '-'."""
    from analysis.learning.report import optimality_table

    base = {"train_metric": "AP", "test_metric": "P@10", "alterations": 4590, "improved_eps": 0}
    rows = [dict(base, weights="optimum", split=s, epoch=41, epochs_run=41, converged=True, improved=i)
            for s, i in (("train", 3), ("test", 7))]
    rows += [dict(base, weights="selected", split=s, epoch=4, epochs_run=9, converged=False, improved=i)
             for s, i in (("train", 1), ("test", 2))]
    (tmp_path / "toy").mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / "toy" / "optimality.csv", index=False)
    (tmp_path / "old").mkdir()
    pd.DataFrame(rows).drop(columns=["epochs_run", "converged"]).to_csv(tmp_path / "old" / "optimality.csv",
                                                                         index=False)
    lines = optimality_table(tmp_path).splitlines()[2:]
    assert lines == ["| old | AP | P@10 | optimum (41) | - | 3 | 0 | 7 | 0 | 4590 |",
                     "| old | AP | P@10 | selected (4) | - | 1 | 0 | 2 | 0 | 4590 |",
                     "| toy | AP | P@10 | optimum (41) | 41, converged | 3 | 0 | 7 | 0 | 4590 |",
                     "| toy | AP | P@10 | selected (4) | 9 | 1 | 0 | 2 | 0 | 4590 |"]


def test_donmez_table_counts_models_and_their_run_lengths(tmp_path):
    """Per (data set, weights): models, the range of epochs run, converged optima, and the counts of
    models with no tie-or-rise and no rise over every step (oracle: the toy rows built here)."""
    from analysis.learning.report import donmez_table

    rows = []
    for m, (ran, conv, nw, imp) in enumerate([(12, True, 0, 0), (40, False, 3, 1)]):
        for step in (0.1, 0.2):
            rows.append({"train_metric": f"M{m}", "weights": "optimum", "seed": 0, "fold": 0, "epochs_run": ran,
                         "converged": conv, "directions": "random", "n_directions": 10, "step": step,
                         "not_worse": nw, "improved": imp})
            rows.append(dict(rows[-1], weights="selected", epochs_run=ran // 2, converged=False, not_worse=5,
                             improved=0))
    rows.append(dict(rows[0], directions="weights", not_worse=99))      # per-weight rows are not counted
    (tmp_path / "toy-optimality001").mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / "toy-optimality001" / "optimality001_counts.csv", index=False)
    lines = donmez_table(tmp_path).splitlines()[2:]
    assert lines == ["| toy | optimum | 2 | 12-40, 1 of 2 converged | 10 x 2 | 1 | 1 | 15% |",
                     "| toy | selected | 2 | 6-20 | 10 x 2 | 0 | 2 | 50% |"]
