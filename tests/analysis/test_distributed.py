"""--scheduler: the analyses on a Dask cluster write the same bytes as a local run.

Oracle: the local (single-process) run of the same command; every output file is compared
byte for byte (CSV, JSON and PNG; learning's per-job records without their wall-clock field).
"""
from __future__ import annotations

import json
import sys

import pytest

from analysis._cli import BUNDLED_QRELS, BUNDLED_RUNS

RUNS = [str(BUNDLED_RUNS / f) for f in ("T5R1.gz", "run1.gz", "bm25_baseline.gz")]


@pytest.fixture(scope="module")
def cluster():
    """An existing cluster, as a user would start one: a LocalCluster of two worker processes."""
    distributed = pytest.importorskip("dask.distributed", reason="the 'distributed' extra is not installed")
    c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    yield c.scheduler_address
    c.close()


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_maxent_on_cluster_is_byte_identical(tmp_path, cluster):
    from analysis import maxent

    common = ["--runs", *RUNS, "--qrels", str(BUNDLED_QRELS), "--metrics", "AP,nDCG", "--no-progress"]
    assert maxent.main(common + ["--out", str(tmp_path / "local")]) == 0
    assert maxent.main(common + ["--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    local, dask = _files(tmp_path / "local"), _files(tmp_path / "dask")
    assert len(local) >= 10 and local == dask


def test_gap_thresholds_on_cluster_is_byte_identical(tmp_path, cluster):
    from analysis import gap_thresholds

    common = ["--runs", *RUNS[:2], "--qrels", str(BUNDLED_QRELS), "--step", "0.5", "--min-relevant", "1", "--bootstrap", "100", "--no-progress"]
    assert gap_thresholds.main(common + ["--out", str(tmp_path / "local")]) == 0
    assert gap_thresholds.main(common + ["--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    local, dask = _files(tmp_path / "local"), _files(tmp_path / "dask")
    assert "sweep.csv" in local and "asl.csv" in local and local == dask


def test_scheduler_local_starts_its_own_cluster(tmp_path):
    """--scheduler local: a LocalCluster of --workers processes started (and closed) by the command."""
    pytest.importorskip("dask.distributed", reason="the 'distributed' extra is not installed")
    from analysis import maxent

    common = ["--runs", *RUNS[:2], "--qrels", str(BUNDLED_QRELS), "--metrics", "AP", "--threshold", "1", "--no-progress"]
    assert maxent.main(common + ["--out", str(tmp_path / "local")]) == 0
    assert maxent.main(common + ["--out", str(tmp_path / "dask"), "--scheduler", "local", "--workers", "2"]) == 0
    assert _files(tmp_path / "local") == _files(tmp_path / "dask")


def test_learning_on_cluster_same_records(tmp_path, cluster):
    from analysis import learning

    small = ["--dataset", "artificial", "--n-queries", "40", "--docs-per-query", "6", "--n-features", "4",
             "--epochs", "2", "--learning-rates", "0.01,0.1", "--train-metrics", "AP,nDCG",
             "--test-metrics", "AP,nDCG", "--no-progress", "--parts", "table"]
    assert learning.main(small + ["--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert learning.main(small + ["--out", str(tmp_path / "dask"), "--scheduler", cluster]) == 0
    for name in ("table.csv",):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
    recs = sorted((tmp_path / "local" / "runs").glob("*.json"))
    assert len(recs) == 4
    for p in recs:
        a = json.loads(p.read_text())
        b = json.loads((tmp_path / "dask" / "runs" / p.name).read_text())
        a.pop("seconds"), b.pop("seconds")                  # wall clock differs by nature
        assert a == b


def test_without_dask_scheduler_says_how_to_install(tmp_path, monkeypatch, capsys):
    from analysis import maxent

    monkeypatch.setitem(sys.modules, "dask.distributed", None)   # import fails as if not installed
    args = ["--runs", RUNS[0], "--qrels", str(BUNDLED_QRELS), "--metrics", "AP", "--no-progress", "--out", str(tmp_path)]
    assert maxent.main(args + ["--scheduler", "local"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --scheduler needs dask.distributed") and 'pip install -e ".[distributed]"' in err
    assert maxent.main(args + ["--workers", "2"]) == 0          # the process pool still works
