"""Options of ``analysis.gap_thresholds``, ``analysis.active_eval`` and ``analysis.figures``
that no other test passes, each checked for its effect on the output."""
from __future__ import annotations

import contextlib
import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import active_eval, figures
from analysis import gap_thresholds as gt

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"


def _quiet(fn, argv):
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        code = fn([str(a) for a in argv])
    return code, so.getvalue(), se.getvalue()


# ------------------------------------------------------------------ analysis.gap_thresholds
@pytest.fixture(scope="module")
def gslice(tmp_path_factory):
    d = tmp_path_factory.mktemp("g")
    (d / "runs").mkdir()
    topics = {str(t) for t in range(1, 7)}
    for name in ["T5R1", "bm25_baseline", "run1"]:
        lines = gzip.open(BUNDLED / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in topics) + "\n")
    q = [l for l in (BUNDLED / "qrels-rnd1.txt").read_text().splitlines() if l.split()[0] in topics]
    (d / "qrels.txt").write_text("\n".join(q) + "\n")
    return d


def _gt(d, out, *extra):
    return _quiet(gt.main, ["--runs", d / "runs", "--qrels", d / "qrels.txt", "--out", out, "--step", "0.5",
                            "--bootstrap", "100", "--top-k", "2", "--no-progress", "--depth", "50",
                            "--min-relevant", "1", *extra])


def test_gap_topics_reference_threshold(gslice, tmp_path):
    code, _, err = _gt(gslice, tmp_path / "a", "--topics", "2-4", "--reference", "AP", "--threshold", "1",
                       "--skip-bootstrap")
    assert code == 0, err
    inst = pd.read_csv(tmp_path / "a" / "instances.csv", dtype={"topic": str})
    assert set(inst["topic"]) == {"2", "3", "4"} and set(inst["threshold"]) == {1}
    sweep = pd.read_csv(tmp_path / "a" / "sweep.csv")
    assert set(sweep["metric"]) == {"GAP", "AP"} and "nDCG" not in set(inst["metric"])
    # --skip-bootstrap: no discriminative-power outputs
    assert not (tmp_path / "a" / "asl.csv").exists() and not (tmp_path / "a" / "discriminative.csv").exists()
    code, _, _ = _gt(gslice, tmp_path / "b", "--topics", "1,5", "--skip-bootstrap")
    inst = pd.read_csv(tmp_path / "b" / "instances.csv", dtype={"topic": str})
    assert code == 0 and set(inst["topic"]) == {"1", "5"} and set(inst["threshold"]) == {1, 2}


def test_gap_bootstrap_g_and_alpha(gslice, tmp_path):
    code, _, err = _gt(gslice, tmp_path / "a", "--bootstrap-g", "1,0;0.5,0.5", "--alpha", "0.5")
    assert code == 0, err
    power = pd.read_csv(tmp_path / "a" / "discriminative.csv")
    names = set(power["metric"])
    assert {"GAP(g=1,0)", "GAP(g=0.5,0.5)", "AP", "nDCG"} <= names or len(names) == 4, names
    asl = pd.read_csv(tmp_path / "a" / "asl.csv")
    # alpha sets the significance the fraction counts: recount it from the pairs' ASL
    col = [c for c in asl.columns if c.lower() in ("asl", "p", "p_value")][0]
    for m, g in asl.groupby("metric"):
        row = power[power["metric"] == m].iloc[0]
        assert row["significant"] == pytest.approx((g[col] < 0.5).mean(), abs=1e-9)
    code, _, _ = _gt(gslice, tmp_path / "b", "--bootstrap-g", "1,0;0.5,0.5", "--alpha", "0.01")
    tight = pd.read_csv(tmp_path / "b" / "discriminative.csv")
    assert (tight["significant"].to_numpy() <= power["significant"].to_numpy() + 1e-12).all()


# --------------------------------------------------------------------- analysis.active_eval
ACTIVE = ["--runs", *sorted((BUNDLED / "runs").iterdir())[:3], "--qrels", BUNDLED / "qrels-rnd1.txt",
          "--depth", "10", "--repetitions", "10", "--folds", "2", "--no-progress", "--metric", "DCG@10",
          "--budgets", "4", "--experiments", "errors", "--seed", "1"]


def test_active_rankers_and_mix(tmp_path):
    names = [p.name.removesuffix(".gz") for p in sorted((BUNDLED / "runs").iterdir())[:3]]
    code, _, err = _quiet(active_eval.main, [*ACTIVE, "--rankers", f"{names[0]},{names[2]}", "--out", tmp_path / "r"])
    assert code == 0, err
    errors = pd.read_csv(tmp_path / "r" / "errors.csv")
    assert set(errors["ranker"]) - {"all"} == {names[0], names[2]}
    code, _, _ = _quiet(active_eval.main, [*ACTIVE, "--out", tmp_path / "a"])
    code, _, _ = _quiet(active_eval.main, [*ACTIVE, "--mix", "1", "--out", tmp_path / "m"])
    plain = pd.read_csv(tmp_path / "a" / "errors.csv")
    mixed = pd.read_csv(tmp_path / "m" / "errors.csv")
    act = lambda f: f[f["method"] == "active"]["rmse"].to_numpy()  # noqa: E731
    pas = lambda f: f[f["method"] == "passive"]["rmse"].to_numpy()  # noqa: E731
    # --mix changes the instrumental distribution of the active methods only
    np.testing.assert_allclose(pas(mixed), pas(plain), rtol=1e-12)
    assert not np.allclose(act(mixed), act(plain))


def test_active_length_feature(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / "letor"
    d.mkdir()
    for name, queries in (("train.txt", 12), ("test.txt", 8)):
        lines = []
        for q in range(queries):
            for _ in range(6):
                x = rng.random(16)
                x[14] = rng.integers(10, 1000)           # document length (MSLR feature 15)
                lines.append(f"{int(rng.integers(0, 3))} qid:{q + 1} "
                             + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)))
        (d / name).write_text("\n".join(lines) + "\n")
    base = ["--letor", d, "--metric", "DCG@5", "--budgets", "3", "--repetitions", "5", "--folds", "2",
            "--experiments", "errors", "--no-progress", "--seed", "2", "--max-pairs", "2"]
    code, _, err = _quiet(active_eval.main, [*base, "--out", tmp_path / "a"])
    assert code == 0, err
    code, _, err = _quiet(active_eval.main, [*base, "--length-feature", "-1", "--out", tmp_path / "b"])
    assert code == 0, err
    lengths = pd.read_csv(tmp_path / "a" / "errors.csv")
    unit = pd.read_csv(tmp_path / "b" / "errors.csv")
    # costs from the length column, or one per document: the budget buys other queries
    key = ["method", "ranker", "budget"]
    a, b = lengths.set_index(key).sort_index(), unit.set_index(key).sort_index()
    assert a.index.equals(b.index)
    assert not np.allclose(a["rmse"], b["rmse"]) or not np.allclose(a["queries"], b["queries"])


# ------------------------------------------------------------------------ analysis.figures
def test_figures_only_and_destination(tmp_path, monkeypatch):
    # the analyses themselves are tested elsewhere: stand-ins write one figure each
    from analysis import gap_thresholds, maxent

    calls = []

    def fake(tool):
        def main(argv):
            out = Path(argv[argv.index("--out") + 1])
            out.mkdir(parents=True, exist_ok=True)
            (out / f"fig_{tool}.png").write_bytes(b"png")
            (out / f"fig_{tool}.csv").write_text("x\n1\n")
            (out / "notes.txt").write_text("not copied")
            calls.append((tool, argv))
            return 0
        return main

    monkeypatch.setattr(maxent, "main", fake("maxent"))
    monkeypatch.setattr(gap_thresholds, "main", fake("gap"))
    monkeypatch.chdir(tmp_path)
    code, out, err = _quiet(figures.main, ["--only", "maxent", "--figures", tmp_path / "figs", "--workers", "2"])
    assert code == 0, err
    assert [c[0] for c in calls] == ["maxent"] and "--workers" in calls[0][1] and "2" in calls[0][1]
    assert sorted(p.name for p in (tmp_path / "figs" / "maxent").iterdir()) == ["PROVENANCE.json", "fig_maxent.csv", "fig_maxent.png"]
    assert not (tmp_path / "figs" / "gap_thresholds").exists()
    code, out, err = _quiet(figures.main, ["--only", "gap_thresholds,maxent", "--figures", tmp_path / "f2"])
    assert code == 0 and sorted(p.name for p in (tmp_path / "f2").iterdir()) == ["gap_thresholds", "maxent"]
