"""What the commands say (maxent.cli and the analyses' command lines): warnings for what they
ignore, a closed pipe without a traceback, clear errors, readable --help and --describe, and
--score-precision everywhere runs are ranked.

Oracles: a hand calculation written beside the number; the parsers' own actions.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from maxent import InputError, MeasureNameError, evaluate
from maxent.cli.evaluate import main as evaluate_main

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


# ------------------------------------------------------------------- 1. silent wrong numbers
def test_cli_reports_run_topics_it_ignores(tmp_path, capsys):
    # a run line whose topic the qrels lack is not silently dropped: stderr says so
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n7 Q0 d1 1 2.0 r\n")
    assert evaluate_main([str(BAD / "qrels_bom.txt"), str(run), "-m", "map"]) == 0
    assert "warning: run run.txt: 1 topic(s) not in the qrels, ignored: 7" in capsys.readouterr().err


# ------------------------------------------------------------------ 2. crashes and memory
def test_broken_pipe_is_quiet():
    # ``python -m maxent.evaluate ... -q | head -1``: the reader leaves early; no traceback
    cmd = [sys.executable, "-m", "maxent.evaluate", str(ROOT / "trec_runs" / "qrels-rnd1.txt"),
           str(ROOT / "trec_runs" / "runs"), "-q"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"num_ret")
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_no_measures_and_no_runs_are_clear_errors(capsys):
    with pytest.raises(MeasureNameError, match="no measure given"):
        evaluate(BAD / "qrels_ok.txt", BAD / "run_ok.txt", [])
    with pytest.raises(InputError, match="no run given"):
        evaluate(BAD / "qrels_ok.txt", [])
    assert evaluate_main([str(BAD / "qrels_ok.txt"), str(BAD / "run_ok.txt"), "-m", ""]) == 1
    assert capsys.readouterr().err == "error: empty measure name\n"


# ---------------------------------------------------------------------------- 5. friction
def test_num_q_and_runid_are_accepted(capsys):
    assert evaluate_main([str(BAD / "qrels_ok.txt"), str(BAD / "run_ok.txt"), "-m", "num_q"]) == 0
    assert capsys.readouterr().out == "num_q                 \tall\t1\n"       # as trec_eval: what -m names
    assert evaluate_main([str(BAD / "qrels_ok.txt"), str(BAD / "run_ok.txt"), "-m", "num_q",
                          "-m", "map"]) == 0
    # D1 (relevant) ranked first, R = 1: map 1 (hand)
    assert capsys.readouterr().out.endswith("map                   \tall\t1.0000\n")


@pytest.mark.parametrize("module", ["maxent.cli.evaluate", "maxent.cli.compare", "analysis.maxent",
                                    "analysis.gap_thresholds", "analysis.learning", "analysis.figures",
                                    "analysis.active_eval"])
def test_help_is_readable(module, capsys):
    import importlib

    main = importlib.import_module(module).main
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    flat = " ".join(text.split())
    assert "(default: None)" not in flat and "(default: False)" not in flat
    assert not re.search(r"\(default[^()]*\)\s*\(default", flat)  # never two defaults in a row
    assert "``" not in text and ".. math::" not in text
    if "examples:" in text:  # epilog lines are kept, one command per line
        assert "examples:\n  python -m " in text


@pytest.mark.parametrize("name", ["AP", "nDCG", "GAP", "ERR", "Bpref", "P@10"])
def test_describe_is_plain_text(name, capsys):
    assert evaluate_main(["--describe", name]) == 0
    text = capsys.readouterr().out
    assert ".. math::" not in text and "``" not in text and ":math:" not in text and "\\frac" not in text


def test_every_cli_offers_score_precision():
    from analysis import figures, gap_thresholds, maxent as mx
    from maxent.cli.compare import _parser as compare_parser
    from maxent.cli.evaluate import _parser

    # (analysis.learning ranks by model scores, not run files: no such option there)
    for parser in (_parser(), compare_parser("maxent compare"), mx._parser(), gap_thresholds._parser(), figures._parser()):
        action = next(a for a in parser._actions if "--score-precision" in a.option_strings)
        assert action.default == "single" and tuple(action.choices) == ("single", "double")
