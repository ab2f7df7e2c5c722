"""as_qrels / as_runs read ir_measures' and ir_datasets' namedtuple iterables."""
from __future__ import annotations

import collections
import gzip
from pathlib import Path

import pytest

import maxent
from maxent.errors import InputError, ParameterError
from maxent.inputs import as_qrels, as_run, as_runs

ROOT = Path(__file__).resolve().parents[2] / "trec_runs"
QRELS = ROOT / "qrels-rnd1.txt"
RUN = sorted((ROOT / "runs").glob("*.gz"))[0]

# ir_datasets' shapes (TrecQrel, GenericScoredDoc), built here: nothing is downloaded
TrecQrel = collections.namedtuple("TrecQrel", "query_id doc_id relevance iteration")
ScoredDoc = collections.namedtuple("GenericScoredDoc", "query_id doc_id score")


def _qrels():
    for line in QRELS.read_text().split("\n"):
        if line.strip():
            q, it, d, g = line.split()
            yield TrecQrel(q, d, int(g), it)


def _run():
    with gzip.open(RUN, "rt") as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            yield ScoredDoc(q, d, float(s))


def _same(a, b):
    assert list(a["topic"]) == list(b["topic"]) and list(a["measure"]) == list(b["measure"])
    assert (a["value"].to_numpy() == b["value"].to_numpy()).all()


def test_ir_datasets_generators_equal_the_files():
    want = maxent.evaluate(str(QRELS), {"run": str(RUN)}, ["AP", "nDCG@10", "GAP@10"])
    _same(maxent.evaluate(_qrels(), {"run": _run()}, ["AP", "nDCG@10", "GAP@10"]), want)
    _same(maxent.evaluate(list(_qrels()), _run(), ["AP", "nDCG@10", "GAP@10"]), want)   # a generator is one run


def test_ir_measures_namedtuples():
    irm = pytest.importorskip("ir_measures")
    qrels = list(irm.read_trec_qrels(str(QRELS)))
    run = list(irm.read_trec_run(str(RUN)))
    want = maxent.evaluate(str(QRELS), str(RUN), ["AP"])
    got = maxent.evaluate(qrels, {RUN.name: run}, ["AP"])
    _same(got, want)
    assert list(got["run"].unique()) == [RUN.name]
    assert as_qrels(iter(qrels)).topics == as_qrels(str(QRELS)).topics


def test_dataset_objects_and_lists_of_runs():
    class Dataset:
        def qrels_iter(self):
            return _qrels()

        def scoreddocs_iter(self):
            return _run()

    want = maxent.evaluate(str(QRELS), str(RUN), ["AP"])
    _same(maxent.evaluate(Dataset(), Dataset(), ["AP"]), want)
    runs = as_runs([list(_run()), list(_run())])           # two runs given as records
    assert [r.name for r in runs] == ["run_1", "run_2"]


def test_bad_records():
    with pytest.raises(InputError, match="no judgement"):
        as_qrels(iter([]))
    with pytest.raises(InputError, match="is empty"):
        as_run([])
    with pytest.raises(ParameterError, match="query_id, doc_id, score"):
        as_run(iter([("1", "a", 1.0)]))
    with pytest.raises(InputError, match="has no field"):
        as_run([ScoredDoc("1", "a", 1.0), TrecQrel("1", "b", 1, "0")])
    with pytest.raises(InputError, match="grades above"):
        as_qrels([TrecQrel("1", "a", 10**9, "0")])
