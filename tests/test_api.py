"""The package's public API (maxent/__init__.py): misuse ends in a library error naming the
argument; importing it and the trec command's path load neither pandas nor scipy, and every
lazy export resolves.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from maxent import evaluate, parse_measure, read_qrels, read_run, solve
from maxent.errors import MaxEntError, MeasureNameError, ParameterError
from maxent.ranked import rank_runs

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"


# -------------------------------------------------------------------------- API misuse
API_MISUSE = [
    # call, error class, words the message must contain (the argument's name)
    (lambda q, r: evaluate(q, r, ["AP"], depth=2.5), ParameterError, "depth"),
    (lambda q, r: evaluate(q, r, ["AP"], depth=0), ParameterError, "depth"),
    (lambda q, r: evaluate(q, r, ["AP"], depth=True), ParameterError, "depth"),
    (lambda q, r: evaluate(q, r, None), MeasureNameError, "measures"),
    (lambda q, r: evaluate(q, r, 42), MeasureNameError, "measures"),
    (lambda q, r: evaluate(q, r, ["AP", 3]), MeasureNameError, "measures"),
    (lambda q, r: evaluate(q, r, ["AP"], rel=-1), ParameterError, "rel"),
    (lambda q, r: evaluate(q, r, ["AP"], rel=1.5), ParameterError, "rel"),
    (lambda q, r: evaluate(q, None), ParameterError, "runs"),
    (lambda q, r: evaluate(42, r), ParameterError, "qrels"),
    (lambda q, r: parse_measure(None), MeasureNameError, "measure"),
    (lambda q, r: parse_measure(42), MeasureNameError, "measure"),
    (lambda q, r: rank_runs([r], q, depth="10"), ParameterError, "depth"),
    (lambda q, r: rank_runs([r], None), ParameterError, "qrels"),
    (lambda q, r: solve("AP", [0.5], None), ParameterError, "lists"),
]


@pytest.mark.parametrize("call, error, words", API_MISUSE, ids=range(len(API_MISUSE)))
def test_api_misuse_raises_a_library_error_naming_the_argument(call, error, words):
    q, r = read_qrels(BAD / "qrels_ok.txt"), read_run(BAD / "run_ok.txt")
    with pytest.raises(error) as e:
        call(q, r)
    assert isinstance(e.value, MaxEntError) and words in str(e.value)
    # a ParameterError is also a TypeError and a ValueError (scikit-learn's convention)
    if error is ParameterError:
        assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)


# ------------------------------------------------------------------------------ start-up
def test_import_and_trec_cli_path_load_neither_pandas_nor_scipy():
    code = ("import sys, maxent, maxent.evaluate\n"
            "from maxent.cli.evaluate import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main([{str(BAD / 'qrels_ok.txt')!r}, {str(BAD / 'run_ok.txt')!r}, '-m', 'map'])\n"
            "print(sorted(m for m in ('pandas', 'scipy', 'maxent.solver', 'maxent.inference') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    from maxent import evaluate as fn  # the function, not the submodule of the same name
    assert callable(fn) and fn.__module__ == "maxent.evaluate"
    import maxent

    for name in maxent.__all__:  # every lazy export resolves to the object of its module
        obj = getattr(maxent, name)
        assert obj is not None and not isinstance(obj, type(maxent)), name
    with pytest.raises(AttributeError):
        maxent.no_such_name


def test_aggregate_names_a_frame_of_the_wrong_kind():
    import pandas as pd

    from maxent import aggregate
    from maxent.errors import ParameterError

    with pytest.raises(ParameterError, match=r"aggregate: expected the frame evaluate\(\) returns .* "
                                             r"without column\(s\) topic, value"):
        aggregate(pd.DataFrame({"run": ["a"], "measure": ["AP"], "score": [0.5]}))
    with pytest.raises(ParameterError, match="got dict"):
        aggregate({"run": ["a"]})
