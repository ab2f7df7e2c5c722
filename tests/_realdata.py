"""Shared-collection loader for the solver and expectation tests (cached for the whole test run).

The data live outside the repository at ``<project>/../shared/data`` and are never copied
into it; tests using them skip with a reason when the folder is absent.
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
COLLECTIONS = ("robust03", "trec_covid_r1", "trec_dl19_passage")
BINARY_THRESHOLD = {"robust03": 1, "trec_covid_r1": 1, "trec_dl19_passage": 2}
"""trec_dl19_passage: binary measures use threshold 2 (data README)."""


def require_data():
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")


@functools.lru_cache(maxsize=None)
def ranked(collection: str):
    """RankedLists of every run and topic of a shared collection (depth 1000)."""
    require_data()
    from maxent.ranked import rank_runs
    from maxent.trec import read_qrels, read_runs

    folder = DATA / collection
    qrels = sorted((folder / "qrels").iterdir())[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TopicWarning: runs lacking a topic
        return rank_runs(read_runs(folder / "runs"), read_qrels(qrels))
