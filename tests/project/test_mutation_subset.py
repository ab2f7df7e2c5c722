"""A CI-sized subset of the mutation testing of docs/guide/metrics.md: hand-picked mutants that
make a command ignore an option or a convention, each of which the named tests must kill.

Each mutant is applied to a copy of the project in a temporary folder (one textual
replacement, which must match), and the tests that guard it run there in a subprocess; the
mutant is killed when they fail. The unmutated copy passes the same tests (the control), so
a failure is the mutant's doing. The mutmut run (results/mutation/) samples every kind of
mutant of the four files; this subset keeps mutants that once survived and that matter
(an option or a convention silently ignored, a wrong number in the output).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

# (file, pattern, replacement, tests that must fail)
MUTANTS = {
    "compare ignores --test": ("maxent/cli/compare.py", r"test=args\.test", 'test="t"',
                               "tests/cli/test_compare_options.py::test_compare_test_sets_the_marks"),
    "compare ignores --correction": ("maxent/cli/compare.py", r"correction=args\.correction", 'correction="holm"',
                                     "tests/cli/test_compare_options.py::test_compare_correction"),
    "compare ignores --alpha": ("maxent/cli/compare.py", r"alpha=args\.alpha,", "alpha=0.05,",
                                "tests/cli/test_compare_options.py::test_compare_tests_and_alpha_change_the_marks"),
    "evaluate ignores -M": ("maxent/cli/evaluate.py", r"depth=args\.depth", "depth=None",
                            "tests/cli/test_evaluate_edges.py::test_depth_is_unlimited_by_default_as_trec_eval"),
    "-q -c prints rows of missing topics": ("maxent/cli/evaluate.py", r"rows = rows\[lists\.lengths\[rows\] > 0\]",
                                            "pass",
                                            "tests/cli/test_evaluate_edges.py::test_per_topic_rows_with_complete_as_trec_eval_9"),
    "analysis.maxent ignores --alignment": ("analysis/maxent.py", r"args\.alignment", '"recall"',
                                            "tests/analysis/test_analysis_cli.py::test_alignment_rank_scores_other_errors"),
    "analysis.maxent ignores --count-constraint": ("analysis/maxent.py", r"args\.count\b", '"retrieved"',
                                                   "tests/analysis/test_analysis_cli.py::test_count_constraint_total"),
    "--runs without --qrels accepted": ("analysis/_cli.py", r'if args\.runs is not None and args\.qrels is None:',
                                        "if False:",
                                        "tests/analysis/test_analysis_cli.py::test_bad_values_name_their_option"),
    "pair means over every value": ("maxent/compare/__init__.py", r'"mean_a": v\[ia\]\.mean\(axis=1\)',
                                    '"mean_a": v[ia].mean(axis=None)',
                                    "tests/compare/test_compare.py::test_compare_values_pairs_seeds_and_minimum_topics"),
    "bootstrap test unseeded": ("maxent/compare/__init__.py", r"paired_bootstrap_asl\(d, n_boot=n_bootstrap, seed=seed\)",
                                "paired_bootstrap_asl(d, n_boot=n_bootstrap, seed=None)",
                                "tests/compare/test_compare.py::test_compare_values_pairs_seeds_and_minimum_topics"),
    "compare refuses -l 0": ("maxent/cli/compare.py", r"args\.rel < 0", "args.rel < 1",
                             "tests/cli/test_compare_options.py::test_compare_accepts_the_smallest_valid_values"),
    "lists without a PR point eligible": ("maxent/informativeness.py", r"\(err\.n_points > 0\) & res\.success",
                                          "(err.n_points >= 0) & res.success",
                                          "tests/analysis/test_analysis_cli.py::test_analyse_run_rows_and_expectations"),
    "min-relevant off by one": ("maxent/informativeness.py", r">= settings\.min_relevant", "> settings.min_relevant",
                                "tests/analysis/test_analysis_cli.py::test_analyse_run_rows_and_expectations"),
}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    dst = tmp_path_factory.mktemp("mut") / "project"
    skip = shutil.ignore_patterns("__pycache__", ".git", "out", "mutants", "build", "results", "figures", "docs")
    shutil.copytree(ROOT, dst, ignore=skip)
    return dst


def _pytest(where: Path, tests: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(where)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-m", "",
                           *tests.split()], cwd=where, env=env, capture_output=True, text=True, timeout=900)


def test_control_passes(copy):
    tests = " ".join(sorted({m[3] for m in MUTANTS.values()}))
    done = _pytest(copy, tests)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name, copy):
    path, pattern, replacement, tests = MUTANTS[name]
    target = copy / path
    original = target.read_text()
    mutated, n = re.subn(pattern, replacement, original)
    assert n >= 1, f"{name}: pattern {pattern!r} not found in {path}; update MUTANTS"
    target.write_text(mutated)
    try:
        done = _pytest(copy, tests)
    finally:
        target.write_text(original)
    assert done.returncode != 0, f"mutant survived: {name}\n{done.stdout[-2000:]}"
