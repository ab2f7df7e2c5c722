"""``python -m analysis.learning`` end to end on small artificial data (in-process main())."""
from __future__ import annotations

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
    assert table.value.between(0, 100).all()
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
