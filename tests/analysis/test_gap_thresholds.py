"""``python -m analysis.gap_thresholds``: grid, reductions to AP, end to end on a slice."""
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import gap_thresholds as gt
from maxent.metrics import parse_measure
from maxent.ranked import rank_runs
from maxent.trec import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"


@pytest.mark.parametrize("c, step, n", [(2, 0.1, 11), (2, 0.5, 3), (3, 0.25, 15), (3, 0.1, 66), (1, 0.5, 1)])
def test_grid_covers_simplex(c, step, n):
    grid = gt.simplex_grid(c, step)
    assert len(grid) == n == len(set(grid))  # C(1/step + c - 1, c - 1) points, all distinct
    g = np.array(grid)
    np.testing.assert_allclose(g.sum(axis=1), 1.0)
    assert (g >= 0).all()
    for j in range(c):  # every vertex of the simplex is on the grid
        assert tuple(float(i == j) for i in range(c)) in grid


def test_grid_order_and_bad_step():
    assert gt.simplex_grid(2, 0.5) == [(1.0, 0.0), (0.5, 0.5), (0.0, 1.0)]
    with pytest.raises(Exception, match="step"):
        gt.simplex_grid(2, 0.3)


def test_grid_endpoints_reduce_to_thresholded_ap():
    qrels = read_qrels(BUNDLED / "qrels-rnd1.txt")
    lists = rank_runs(read_runs([BUNDLED / "runs" / "T5R1.gz", BUNDLED / "runs" / "jlbase.gz"]), qrels)
    for g, rel in [((1.0, 0.0), 1), ((0.0, 1.0), 2)]:
        gap = parse_measure(gt.g_name(g)).value(lists)
        ap = parse_measure(f"AP(rel={rel})").value(lists)
        np.testing.assert_allclose(gap, ap, atol=1e-12)


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("gslice")
    (d / "runs").mkdir()
    topics = {str(t) for t in range(1, 9)}
    for name in ["BITEM_df", "T5R1", "bm25_baseline", "jlbase", "run1"]:
        lines = gzip.open(BUNDLED / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in topics) + "\n")
    q = [l for l in (BUNDLED / "qrels-rnd1.txt").read_text().splitlines() if l.split()[0] in topics]
    (d / "qrels.txt").write_text("\n".join(q) + "\n")
    return d


def _run(d, out, *extra):
    return gt.main(["--runs", str(d / "runs"), "--qrels", str(d / "qrels.txt"), "--out", str(out),
                    "--step", "0.25", "--bootstrap", "200", "--top-k", "3", "--no-progress", "--depth", "200", *extra])


def test_end_to_end(slice_dir, tmp_path, capsys):
    assert _run(slice_dir, tmp_path) == 0
    text = capsys.readouterr().out
    assert "threshold >= 1: best g" in text and "threshold >= 2: best g" in text
    sweep = pd.read_csv(tmp_path / "sweep.csv")
    gap = sweep[sweep["metric"] == "GAP"]
    assert len(gap) == 5 * 2 and set(sweep["metric"]) == {"GAP", "nDCG"}
    assert set(gap.loc[gap["reduces_to"].notna(), "reduces_to"]) == {"AP(rel=1)", "AP(rel=2)"}
    # the selection rule is applied: every list counted has >= 5 relevant retrieved at both thresholds
    inst = pd.read_csv(tmp_path / "instances.csv", dtype={"topic": str})
    ok = inst[inst["eligible"]]
    # oracle: relevant retrieved per list counted on the ranked lists (depth 200, as run)
    lists = rank_runs(read_runs(slice_dir / "runs"), read_qrels(slice_dir / "qrels.txt"), depth=200)
    enough = {(r, t): all((lists.grades[b] >= th).sum() >= 5 for th in (1, 2))
              for b, (r, t) in enumerate(zip(lists.runs, lists.topics))}
    assert 0 < sum(enough.values()) < len(enough)          # the rule keeps some lists, not all
    assert len(ok) and all(enough[(r, t)] for r, t in zip(ok["run"], ok["topic"]))
    dropped = [k for k, v in enough.items() if not v]
    assert not inst.set_index(["run", "topic"]).loc[dropped, "eligible"].any()
    power = pd.read_csv(tmp_path / "discriminative.csv")
    assert {"AP", "nDCG"} <= set(power["metric"]) and power["significant"].between(0, 1).all()
    asl = pd.read_csv(tmp_path / "asl.csv")
    assert len(asl) == len(power) * 10  # 5 runs -> 10 pairs per metric
    for f in ["sweep.png", "asl.png"]:
        assert (tmp_path / f).stat().st_size > 1000


def test_deterministic_with_seed(slice_dir, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(slice_dir, a) == 0 and _run(slice_dir, b) == 0
    for f in ["sweep.csv", "asl.csv", "discriminative.csv"]:
        assert (a / f).read_bytes() == (b / f).read_bytes()


def test_binary_qrels_refused(tmp_path, capsys):
    d = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec_eval_test"
    if not d.exists():
        pytest.skip("../shared/data absent: trec_eval's binary qrels not available")
    rc = gt.main(["--runs", str(d / "results.test"), "--qrels", str(d / "qrels.test"), "--out", str(tmp_path)])
    assert rc == 1 and "graded qrels" in capsys.readouterr().err
