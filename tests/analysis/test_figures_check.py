"""``python -m analysis.figures --check``: the committed figures are what the code draws now
(their CSVs byte for byte), and the docs show copies of them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis import figures

ROOT = Path(__file__).resolve().parents[2]


def test_compare_names_every_csv_that_differs(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for d in (old / "maxent", new / "maxent"):
        d.mkdir(parents=True)
    (old / "maxent" / "same.csv").write_text("a,b\n1,2\n")
    (new / "maxent" / "same.csv").write_text("a,b\n1,2\n")
    (old / "maxent" / "moved.csv").write_text("a,b\n1,2\n3,4\n")
    (new / "maxent" / "moved.csv").write_text("a,b\n1,2.5\n3,4\n5,6\n")
    (old / "maxent" / "gone.csv").write_text("a\n")
    (new / "maxent" / "new.csv").write_text("a\n")
    problems = figures.compare(old, new, ["maxent"], docs=None)
    assert problems == ["maxent/gone.csv: committed but no longer written",
                        "maxent/moved.csv: 3 committed rows, 4 regenerated, 2 differ; first at line 2: "
                        "'1,2' -> '1,2.5'",
                        "maxent/new.csv: written but not committed"]


def test_compare_names_docs_images_unlike_their_figures(tmp_path):
    fig, docs = tmp_path / "figures", tmp_path / "docs" / "img"
    (fig / "maxent").mkdir(parents=True)
    docs.mkdir(parents=True)
    (fig / "maxent" / "fig_rms_by_metric.png").write_bytes(b"new")
    (docs / "maxent_rms_by_metric.png").write_bytes(b"old")
    assert figures.compare(fig, fig, ["maxent"], docs) == [
        "docs/img/maxent_rms_by_metric.png: not a copy of maxent/fig_rms_by_metric.png"]
    assert figures._docs_images(fig, ["maxent"], docs) == [docs / "maxent_rms_by_metric.png"]
    assert figures.compare(fig, fig, ["maxent"], docs) == []


def test_committed_maxent_and_gap_threshold_figures_are_current(capsys):
    # seconds: the bundled sample, as analysis.figures runs it
    code = figures.main(["--check", "--only", "maxent,gap_thresholds"])
    assert code == 0, capsys.readouterr().err


def test_check_fails_naming_a_stale_csv(tmp_path, capsys):
    stale = tmp_path / "figures"
    shutil.copytree(ROOT / "figures" / "maxent", stale / "maxent")
    path = stale / "maxent" / "fig_rms_by_metric.csv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("0.1", "0.2", 1)
    path.write_text("\n".join(lines) + "\n")
    assert figures.main(["--check", "--only", "maxent", "--figures", str(stale)]) == 1
    err = capsys.readouterr().err
    assert "maxent/fig_rms_by_metric.csv: " in err and "1 differ; first at line 2" in err
    assert "fig_p10_inferred.csv" not in err


@pytest.mark.slow
def test_committed_learning_and_active_eval_figures_are_current(capsys):
    # minutes: the learning part trains on the shared Yahoo sample
    code = figures.main(["--check", "--only", "learning,active_eval"])
    assert code == 0, capsys.readouterr().err
