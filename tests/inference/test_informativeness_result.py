"""maxent.informativeness: its result is the pair (instances, summary) also by index, and the
counts of its lists add up (status_counts; the counts of summary.csv, analysis.tables).

Oracles: the per-instance ``status`` and ``eligible`` columns counted here, the command's
summary layout (:func:`analysis.tables.summarize`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import maxent
from maxent.errors import ParameterError
from maxent.informativeness import Informativeness, error_summary, status_counts

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"
COUNTS = ["metric", "threshold", "lists", "solved", "undefined", "not solved", "instances", "excluded"]


@pytest.fixture(scope="module")
def bundled():
    """The bundled sample (20 runs, 30 topics, grades 0-2) at the command's defaults."""
    return maxent.informativeness(BUNDLED / "qrels-rnd1.txt", BUNDLED / "runs")


def test_result_is_the_pair_by_index_and_by_name(bundled):
    res = bundled
    assert isinstance(res, Informativeness) and len(res) == 2
    assert res[0] is res.instances and res[1] is res.summary
    assert res[-1] is res.summary and res[-2] is res.instances
    first, second = res[:]
    assert first is res.instances and second is res.summary
    inst, summary = res
    assert inst is res.instances and summary is res.summary
    assert [x is y for x, y in zip(res, (res.instances, res.summary))] == [True, True]
    with pytest.raises(IndexError):
        res[2]
    assert res.settings.metrics == ("AP", "nDCG", "GAP")


def test_counts_add_up_on_the_bundled_sample(bundled):
    inst, summary = bundled
    counts = bundled.counts
    assert list(counts.columns) == COUNTS
    assert (counts["lists"] == counts["solved"] + counts["undefined"] + counts["not solved"]).all()
    assert (counts["solved"] == counts["instances"] + counts["excluded"]).all()
    # every (run, topic) list once per metric and threshold
    assert (counts["lists"] == inst["run"].nunique() * inst["topic"].nunique()).all()
    # instances are those the errors are averaged over: the summary's
    merged = counts.merge(summary, on=["metric", "threshold"], suffixes=("", " summary"))
    np.testing.assert_array_equal(merged["instances"], merged["instances summary"])
    # the sample: nothing undefined or unsolved; lists without a relevant document retrieved
    # at the threshold are solved but have no PR point, so they are excluded from the means
    assert counts["undefined"].sum() == 0 and counts["not solved"].sum() == 0
    assert (counts["excluded"] > 0).all()
    ok = inst["status"].isin(["optimal", "boundary"])
    no_point = inst[ok & (inst["n_points"] == 0)].groupby(["metric", "threshold"], sort=False).size()
    np.testing.assert_array_equal(counts.set_index(["metric", "threshold"])["excluded"],
                                  no_point.reindex(counts.set_index(["metric", "threshold"]).index).fillna(0))


def test_counts_are_those_of_the_command_summary(bundled):
    """summary.csv's solved / undefined / not solved are status_counts'; its instances the
    eligible ones, smaller than solved by the excluded lists."""
    from analysis.tables import summarize

    paper = summarize(bundled.instances, bundled.settings)
    counts = bundled.counts
    for c in ("instances", "solved", "undefined", "not solved"):
        np.testing.assert_array_equal(paper[c], counts[c], err_msg=c)
    np.testing.assert_array_equal(paper["solved"] - paper["instances"], counts["excluded"])


def test_counts_of_every_status(bundled):
    """A frame with each status (and an eligible flag only where solved) is partitioned."""
    inst = bundled.instances.head(8).copy()
    inst["metric"], inst["threshold"] = "AP", 1
    inst["status"] = ["optimal", "boundary", "undefined", "infeasible", "not_converged", "optimal",
                      "boundary", "undefined"]
    inst["eligible"] = [True, True, False, False, False, False, True, False]
    got = status_counts(inst).iloc[0]
    assert (got["lists"], got["solved"], got["undefined"], got["not solved"], got["instances"],
            got["excluded"]) == (8, 4, 2, 2, 3, 1)
    assert error_summary(inst)["instances"].iloc[0] == 3


def test_given_metrics_are_held_beside_each_metric():
    import glob

    runs = sorted(glob.glob(str(BUNDLED / "runs" / "*")))[:2]
    kw = dict(threshold=1, depth=100)
    alone = maxent.informativeness(BUNDLED / "qrels-rnd1.txt", runs, metrics=["AP"], **kw)
    held = maxent.informativeness(BUNDLED / "qrels-rnd1.txt", runs, metrics=["AP"], given=["P@10"],
                                  predict=["P@10"], **kw)
    assert set(held.instances["metric"]) == {"AP + P@10"}
    ok = held.instances["status"].isin(["optimal", "boundary"])
    assert ok.all()
    # P@10 is held, so it is predicted exactly
    i = held.instances
    np.testing.assert_allclose(i["pred P@10"], i["actual P@10"], atol=1e-9)
    # holding P@10 as well reconstructs these PR curves better than AP alone
    assert held.summary["rms"].iloc[0] < alone.summary["rms"].iloc[0]
    with pytest.raises(ParameterError, match="held once"):
        maxent.informativeness(BUNDLED / "qrels-rnd1.txt", runs, metrics=["AP"], given=["AP"], **kw)
