"""solve() takes a Metric object or a measure name, and refuses anything else (maxent.solver)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maxent import ParameterError, parse_measure, rank_runs, read_qrels, read_run, solve

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


def test_solve_accepts_a_name_and_refuses_other_objects():
    lists = rank_runs([read_run(BAD / "run_ok.txt")], read_qrels(BAD / "qrels_ok.txt"))
    by_name = solve("AP", [1.0], lists)
    by_object = solve(parse_measure("AP"), [1.0], lists)
    assert np.array_equal(by_name.p, by_object.p) and by_name.status.tolist() == by_object.status.tolist()
    with pytest.raises(ParameterError, match="expected a Metric object or a measure name, got int 3"):
        solve(3, [1.0], lists)
