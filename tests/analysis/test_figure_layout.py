"""The figures the analyses write, at their default sizes, on small data made here: no legend
covers data or text, the P@10 grid has no trivial panel and at most four columns, the g sweep of
three thresholds is drawn as points (no line through the simplex), and the titles' statistics
are summary.csv's."""
from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.collections  # noqa: E402
import matplotlib.lines  # noqa: E402
import matplotlib.path  # noqa: E402
import matplotlib.text  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUNS = ("BITEM_df", "T5R1", "sheikh_bm25_manual", "poznan_run1")
TOPICS = {"1", "2", "3", "4"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Four bundled runs cut to four topics, the qrels (grades 0-2) and a 0-3 copy of them
    (half the grade-2 documents, by a hash of their id, promoted to 3)."""
    d = tmp_path_factory.mktemp("layout")
    (d / "runs").mkdir()
    for name in RUNS:
        lines = gzip.open(ROOT / "trec_runs" / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(x for x in lines if x.split()[0] in TOPICS) + "\n")
    qrels = [x for x in (ROOT / "trec_runs" / "qrels-rnd1.txt").read_text().splitlines() if x.split()[0] in TOPICS]
    (d / "qrels.txt").write_text("\n".join(qrels) + "\n")
    four = []
    for line in qrels:
        q, it, doc, g = line.split()
        if g == "2" and hashlib.sha256(doc.encode()).digest()[0] % 2:
            g = "3"
        four.append(" ".join((q, it, doc, g)))
    (d / "qrels4.txt").write_text("\n".join(four) + "\n")
    return d


class Recorder:
    """Stands in for the figure writers: checks each figure before it is saved."""

    def __init__(self, monkeypatch):
        from analysis import _cli
        from analysis.learning import optimality, parts

        self.checked: dict[str, object] = {}
        self.texts: list = []
        save = _cli.save_figure
        draw = matplotlib.text.Text.draw

        def record(text, renderer):
            self.texts.append(text)
            return draw(text, renderer)

        def check(fig, path, **kw):
            self.texts.clear()
            fig.canvas.draw()
            self.checked[Path(path).name] = summary(fig, self.texts)
            save(fig, path, **kw)

        monkeypatch.setattr(matplotlib.text.Text, "draw", record)
        for module in (_cli, parts, optimality):
            monkeypatch.setattr(module, "save_figure", check)


def _legends(fig):
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


def _data_paths(ax):
    """(display-space path, artist) of every data artist drawn on ``ax``: lines and their
    markers, error bars, bands, scatter points."""
    out = []
    for line in ax.get_lines():
        if line.get_visible() and len(line.get_xydata()):
            out.append((line.get_path().transformed(line.get_transform()), line))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, matplotlib.collections.PathCollection):    # scatter: one point per offset
            pts = coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float))
            out.extend((matplotlib.path.Path(p[None, :]), coll) for p in pts if np.isfinite(p).all())
        else:
            out.extend((p.transformed(coll.get_transform()), coll) for p in coll.get_paths())
    return out


def summary(fig, drawn):
    """What a figure shows, once drawn; asserts that no legend overlaps data or text."""
    renderer = fig.canvas.get_renderer()
    legends = _legends(fig)
    for leg in legends:
        box = leg.get_window_extent(renderer)
        own = {id(t) for t in leg.get_texts()} | {id(leg.get_title())}
        for ax in fig.axes:
            inside = Bbox.intersection(box, ax.bbox)     # data is clipped to its axes
            if inside is None or inside.width <= 0 or inside.height <= 0:
                continue
            for path, artist in _data_paths(ax):
                hit = (path.intersects_bbox(inside, filled=False) or
                       any(inside.contains(x, y) for x, y in path.vertices if np.isfinite([x, y]).all()))
                assert not hit, (fig._suptitle and fig._suptitle.get_text(), "legend over", artist)
        for t in drawn:
            if id(t) in own or not t.get_visible() or not t.get_text().strip():
                continue
            assert not box.overlaps(t.get_window_extent(renderer)), ("legend over text", t.get_text())
    columns = len({round(ax.get_position().x0, 3) for ax in fig.axes if ax.get_label() != "<colorbar>"})
    return {"legends": len(legends), "columns": columns,
            "ylabels": [ax.get_ylabel() for ax in fig.axes], "titles": [ax.get_title() for ax in fig.axes],
            "lines": {ax.get_title(): [ln.get_label() for ln in ax.get_lines()] for ax in fig.axes},
            "size": tuple(fig.get_size_inches())}


METRICS = "AP,nDCG,GAP,P@10,RR,ERR@20,nDCG@10,R-prec"


@pytest.fixture(scope="module")
def maxent_figures(small, tmp_path_factory):
    from analysis import maxent

    mp = pytest.MonkeyPatch()
    rec = Recorder(mp)
    out = tmp_path_factory.mktemp("maxent")
    try:
        assert maxent.main(["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--out", str(out),
                            "--no-progress", "--depth", "100", "--metrics", METRICS, "--graded-pr", "uniform"]) == 0
    finally:
        mp.undo()
    return rec.checked, out


def test_maxent_legends_cover_no_data(maxent_figures):
    checked, _ = maxent_figures
    assert sorted(checked) == ["fig_graded_pr_examples.png", "fig_p10_inferred.png", "fig_p10_vs_metric.png",
                               "fig_pr_examples.png", "fig_rms_by_metric.png"]
    for name in ("fig_rms_by_metric.png", "fig_pr_examples.png", "fig_graded_pr_examples.png"):
        assert checked[name]["legends"] == 1, name          # checked against every data artist above


def test_p10_grid_has_no_trivial_panel_and_at_most_four_columns(maxent_figures):
    checked, _ = maxent_figures
    for name in ("fig_p10_inferred.png", "fig_p10_vs_metric.png"):
        fig = checked[name]
        assert fig["columns"] <= 4, name
        assert len(fig["titles"]) == len(METRICS.split(",")) - 1, name      # every metric but P@10 itself
        assert not any(t.startswith("P@10:") for t in fig["titles"]), name
        assert "P@10 inferred from P@10" not in fig["ylabels"]


def test_p10_titles_are_the_summary_statistics(maxent_figures):
    checked, out = maxent_figures
    summary = pd.read_csv(out / "summary.csv")
    t = int(summary["threshold"].min())
    for title in checked["fig_p10_inferred.png"]["titles"]:
        metric = title.split(": RMS")[0]
        row = summary[(summary["metric"] == metric) & (summary["threshold"] == t)].iloc[0]
        assert title == f"{metric}: RMS {row['P@10 rms (runs)']:.3f}, tau {row['P@10 tau (runs)']:.3f}"


def test_pr_examples_say_they_are_rms_quartiles(maxent_figures):
    checked, _ = maxent_figures
    titles = checked["fig_pr_examples.png"]["titles"]
    assert [t.split("\n")[1].split(" of ")[0] for t in titles] == ["lower quartile", "median", "upper quartile"]


def _gap(small, tmp_path, qrels, *extra):
    from analysis import gap_thresholds

    mp = pytest.MonkeyPatch()
    rec = Recorder(mp)
    try:
        assert gap_thresholds.main(["--runs", str(small / "runs"), "--qrels", str(small / qrels), "--out",
                                    str(tmp_path), "--no-progress", "--depth", "100", "--min-relevant", "1",
                                    "--bootstrap", "100", "--graded-pr", "uniform", *extra]) == 0
    finally:
        mp.undo()
    return rec.checked


def test_gap_threshold_figures_on_two_thresholds(small, tmp_path):
    checked = _gap(small, tmp_path, "qrels.txt")
    assert sorted(checked) == ["asl.png", "sweep.png"]
    assert checked["sweep.png"]["titles"][0] == "PR curve at relevance >= 1 (binary level)"
    assert all(checked[n]["legends"] == 1 for n in checked)


def test_simplex_sweep_is_points_at_the_binary_level(small, tmp_path):
    # grades 0-3: three thresholds, the g grid a triangle; no line may join its points
    checked = _gap(small, tmp_path, "qrels4.txt", "--step", "0.25")
    sweep = checked["sweep.png"]
    assert sweep["titles"][:4] == ["PR curve at relevance >= 1", "PR curve at relevance >= 2 (binary level)",
                                   "PR curve at relevance >= 3", "graded PR curve"]
    for title, lines in sweep["lines"].items():
        assert "GAP(g)" not in lines, title          # GAP(g) is a scatter of points there
    assert sweep["columns"] <= 3
    table = pd.read_csv(tmp_path / "sweep.csv", dtype={"g": str})
    labels = table.loc[table["metric"] == "GAP", "g"]
    from analysis.plots import short_g

    assert max(len(short_g(g)) for g in labels) <= len("(0.25, 0.25, 0.5)")


def test_binary_threshold_is_the_collections():
    from analysis.plots import binary_threshold

    assert binary_threshold(2) == 1 and binary_threshold(3) == 2       # Robust/TREC-COVID; TREC DL
    assert binary_threshold(3, (1, 2, 3)) == 2 and binary_threshold(3, (1,)) == 1
    assert binary_threshold(1, (1,)) == 1


def test_active_eval_and_learning_legends_cover_no_data(tmp_path):
    from analysis import active_eval
    from analysis.learning import main as learning

    mp = pytest.MonkeyPatch()
    rec = Recorder(mp)
    try:
        runs = sorted((ROOT / "trec_runs" / "runs").iterdir())[:3]
        assert active_eval.main(["--runs", *map(str, runs), "--qrels", str(ROOT / "trec_runs" / "qrels-rnd1.txt"),
                                 "--depth", "20", "--repetitions", "20", "--folds", "3", "--no-progress",
                                 "--metric", "DCG@10,ERR@10", "--budgets", "3,6", "--seed", "1",
                                 "--out", str(tmp_path / "active")]) == 0
        approx = sorted((ROOT / "trec_runs" / "runs").glob("*.gz"))[:2]
        assert learning(["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features",
                         "5", "--epochs", "2", "--learning-rates", "0.05", "--fractions", "0.5,1", "--features",
                         "2,all", "--train-metrics", "AP,nDCG,P@10", "--test-metrics", "AP,P@10,nDCG@10",
                         "--mc-directions", "3", "--mc-weights", "2", "--optimum-epochs", "5", "--workers", "1",
                         "--no-progress", "--parts", "curves,sweep,optimality001,pairs,approx_error",
                         "--approx-runs", *map(str, approx), "--approx-alphas", "1,30", "--approx-depth", "20",
                         "--out", str(tmp_path / "learn"), "--figures-dir", str(tmp_path / "figs")]) == 0
    finally:
        mp.undo()
    legends = {"errors.png", "selection.png", "update.png", "saved.png", "curves.png", "sweep.png",
               "optimality001.png", "pairs.png", "approx_error.png"}
    assert legends <= set(rec.checked), sorted(rec.checked)
    for name in legends:
        assert rec.checked[name]["legends"] >= 1, name
