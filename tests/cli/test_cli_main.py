"""The ``maxent`` command and its ``python -m`` forms (maxent.cli): the same output, no
runpy warning, and none of the heavy modules on the evaluate path."""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maxent.cli import main
from maxent.cli.evaluate import main as evaluate_main

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
ARGS = [str(QRELS), *map(str, RUNS[:3]), "-m", "map", "-m", "P_10", "-m", "ndcg", "-q"]


def _in_process(fn, argv) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = fn(argv)
    return rc, buf.getvalue()


@pytest.mark.parametrize("cmd", [[sys.executable, "-W", "error", "-m", "maxent.evaluate"],
                                 [sys.executable, "-W", "error", "-m", "maxent", "evaluate"]])
def test_python_m_forms_print_what_the_function_prints_and_warn_nothing(cmd):
    done = subprocess.run(cmd + ARGS, cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == _in_process(evaluate_main, ARGS)[1] and len(done.stdout) > 5000


def test_console_script_is_installed_and_runs():
    exe = shutil.which("maxent", path=os.path.dirname(sys.executable)) or shutil.which("maxent")
    if exe is None:
        pytest.skip("the console script is not on PATH (the package is not installed with pip)")
    done = subprocess.run([exe, "evaluate", *ARGS], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "") and done.stdout == _in_process(evaluate_main, ARGS)[1]


def test_compare_through_the_dispatcher_equals_python_m(tmp_path):
    argv = [str(QRELS), *map(str, RUNS[:3]), "-m", "AP", "--permutations", "200", "--bootstrap", "200"]
    rc, text = _in_process(main, ["compare", *argv])
    done = subprocess.run([sys.executable, "-W", "error", "-m", "maxent.compare", *argv], cwd=ROOT,
                          capture_output=True, text=True)
    # stderr: nothing but the progress lines of a step that took over 2 s (a slow machine)
    said = [line for line in done.stderr.splitlines() if not line.startswith("reading, evaluating and testing")]
    assert rc == 0 and (done.returncode, said, done.stdout) == (0, [], text)


def test_dispatcher_usage_and_errors(capsys):
    assert main(["--help"]) == 0 and "evaluate" in capsys.readouterr().out
    assert main([]) == 2 and "a command is required" in capsys.readouterr().err
    assert main(["evaluat"]) == 2 and "unknown command 'evaluat'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert capsys.readouterr().out.startswith("usage: maxent evaluate")
    assert main(["evaluate", str(QRELS), "nothere.gz"]) == 1
    assert capsys.readouterr().err == "error: nothere.gz: no such file\n"


_REPORTER = '''import atexit, os, sys
atexit.register(lambda: open(os.environ["MAXENT_TEST_MODULES"], "w").write(repr(sorted(sys.modules))))
'''
NEVER_ON_THE_EVALUATE_PATH = ("pandas", "scipy", "matplotlib", "tqdm", "cvxpy",
                              "maxent.solver", "maxent.inference", "maxent.ltr", "maxent.active")


def test_evaluate_command_loads_no_heavy_module(tmp_path):
    # recorded at the real command's exit by a sitecustomize module: trec output needs none
    # of pandas, scipy, matplotlib or the solver, so its start-up cannot regress silently
    (tmp_path / "sitecustomize.py").write_text(_REPORTER)
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "MAXENT_TEST_MODULES": str(out)}
    subprocess.run([sys.executable, "-m", "maxent.evaluate", *ARGS], cwd=ROOT, env=env,
                   capture_output=True, check=True)
    modules = eval(out.read_text())
    loaded = sorted(m for m in modules if m.split(".")[0] in NEVER_ON_THE_EVALUATE_PATH
                    or m.startswith(NEVER_ON_THE_EVALUATE_PATH))
    assert loaded == [] and "maxent.cli.evaluate" in modules and "numpy" in modules
