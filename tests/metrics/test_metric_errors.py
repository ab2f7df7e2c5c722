"""Measure names and metric parameters that cannot be used end in a library error
(maxent.metrics): a MeasureNameError that suggests a name, or a ParameterError; a GAP weight on
a grade the qrels lack is refused, not silently ignored.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from maxent import MeasureNameError, ParameterError, parse_measure, rank_runs, read_qrels, read_run

BAD = Path(__file__).resolve().parents[2] / "tests" / "data" / "bad"


def test_measure_and_parameter_errors():
    with pytest.raises(MeasureNameError, match="did you mean"):
        parse_measure("nDGC@10")
    with pytest.raises(MeasureNameError):
        parse_measure("P@0")  # a ParameterError inside a name is reported as a name error
    from maxent.metrics import Precision
    with pytest.raises(ParameterError):
        Precision(cutoff=0)


def test_gap_weight_on_a_grade_the_qrels_lack_is_refused():
    q = read_qrels(BAD / "qrels_graded_0_2.txt")
    lists = rank_runs([read_run(BAD / "run_d1_first.txt")], q)
    with pytest.raises(ParameterError, match=r"weight g_3 on grade 3, but the qrels' grades go up to 2"):
        parse_measure("GAP(g=0,0,1)").value(lists)
    # weights on grades the qrels have are fine: g = (0, 1) is AP at threshold 2; d1 (grade 2)
    # is ranked first and is the only grade-2 document: 1 (hand)
    assert parse_measure("GAP(g=0,1)").value(lists).tolist() == [1.0]
