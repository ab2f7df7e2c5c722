"""Every option of ``maxent compare`` (maxent.cli.compare) changes the output as it says.

Each test passes one option and checks its effect on the output against an independent
computation (the API with the same setting, Holm / Benjamini-Hochberg written out here, the
marks recomputed from the printed p-values), so that a command ignoring the option fails.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from maxent.cli.compare import main as compare_main
from maxent.errors import InputError
from maxent.evaluate import aggregate, evaluate
from maxent.cli.evaluate import main as evaluate_main

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = ROOT / "trec_runs" / "runs"
THREE = [RUNS / "T5R1.gz", RUNS / "bm25_baseline.gz", RUNS / "run1.gz"]
FAST = ["--permutations", "200", "--bootstrap", "200"]


def _run(main, argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _compare_json(*extra, runs=THREE, measures=("AP",)) -> dict:
    m = sum((["-m", x] for x in measures), [])
    code, out, err = _run(compare_main, [QRELS, *runs, *m, *FAST, "--format", "json", *extra])
    assert code == 0, err
    return json.loads(out)


def _holm(p):
    p = np.asarray(p, float)
    order = np.argsort(p)
    adj = np.maximum.accumulate(np.minimum(1, (len(p) - np.arange(len(p))) * p[order]))
    out = np.empty_like(adj)
    out[order] = adj
    return out


def _bh(p):
    p = np.asarray(p, float)
    n = len(p)
    order = np.argsort(p)[::-1]
    adj = np.minimum.accumulate(np.minimum(1, p[order] * n / np.arange(n, 0, -1)))
    out = np.empty_like(adj)
    out[order] = adj
    return out


def _marks_from_pairs(doc, test, alpha):
    """The superscript marks recomputed from the pairs' printed corrected p-values."""
    letters = {r["run"]: r["letter"] for r in doc["runs"]}
    marks = {(r["run"], m): [] for r in doc["runs"] for m in r["better_than"]}
    for p in doc["pairs"]:
        if test == "paper000":
            sig = all(p[f"p_{t}_adj"] < alpha for t in ("t", "wilcoxon", "sign"))
        else:
            sig = p[f"p_{test}_adj"] < alpha
        if sig and p["mean_a"] != p["mean_b"]:
            win, lose = (p["run_a"], p["run_b"]) if p["mean_a"] > p["mean_b"] else (p["run_b"], p["run_a"])
            marks[(win, p["measure"])].append(letters[lose])
    return {k: sorted(v) for k, v in marks.items()}


def _printed_marks(doc):
    return {(r["run"], m): sorted(v) for r in doc["runs"] for m, v in r["better_than"].items()}


# ---------------------------------------------------------------------------- the options
@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_compare_correction(correction):
    doc = _compare_json("--correction", correction)
    assert doc["settings"]["correction"] == correction
    for t in ("t", "wilcoxon", "sign"):
        raw = [p[f"p_{t}"] for p in doc["pairs"]]
        adj = [p[f"p_{t}_adj"] for p in doc["pairs"]]
        want = {"holm": _holm, "bh": _bh, "none": np.asarray}[correction](raw)
        np.testing.assert_allclose(adj, want, rtol=1e-7, atol=1e-15)   # JSON: 15 digits


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign", "randomisation", "bootstrap", "paper000"])
def test_compare_test_sets_the_marks(test):
    runs = sorted(RUNS.iterdir())[:6]
    doc = _compare_json("--test", test, "--alpha", "0.2", runs=runs)
    assert doc["settings"]["test"] == test
    assert _printed_marks(doc) == _marks_from_pairs(doc, test, 0.2)
    # on these runs the sign test's marks differ from the t-test's: the option is used
    if test == "sign":
        assert _printed_marks(doc) != _marks_from_pairs(doc, "t", 0.2)


def test_compare_tests_and_alpha_change_the_marks():
    # on these runs the tests disagree at some alpha: the marks must follow the option
    marks = {(t, a): _printed_marks(_compare_json("--test", t, "--alpha", a, runs=sorted(RUNS.iterdir())[:6]))
             for t in ("t", "sign") for a in ("0.001", "0.3")}
    assert marks[("t", "0.001")] != marks[("t", "0.3")]
    assert marks[("t", "0.3")] != marks[("sign", "0.3")] or marks[("t", "0.001")] != marks[("sign", "0.001")]
    for (t, a), got in marks.items():
        doc = _compare_json("--test", t, "--alpha", a, runs=sorted(RUNS.iterdir())[:6])
        assert got == _marks_from_pairs(doc, t, float(a))


def test_compare_seed_permutations_bootstrap():
    a = _compare_json("--seed", "1")
    b = _compare_json("--seed", "1")
    c = _compare_json("--seed", "2")
    assert a == b
    assert [p["diff_lo"] for p in a["pairs"]] != [p["diff_lo"] for p in c["pairs"]]
    # --permutations: randomisation p-values on a grid of 1/(P + 1) (Monte Carlo with P draws,
    # the observed sign vector counted), unless 2^topics is smaller than P (exact)
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", "--permutations", "9", "--bootstrap", "50",
                                       "--format", "json"])
    ps = [p["p_randomisation"] for p in json.loads(out)["pairs"]]
    assert all(abs(p * 10 - round(p * 10)) < 1e-9 for p in ps), ps
    # --bootstrap: the intervals are resampled: other B, other bounds
    d = _compare_json("--bootstrap", "50")
    assert [p["diff_lo"] for p in d["pairs"]] != [p["diff_lo"] for p in a["pairs"]]
    assert d["settings"]["bootstrap"] == 50


def test_compare_baseline_and_common_topics():
    doc = _compare_json("--baseline", "run1")
    assert {(p["run_a"], p["run_b"]) for p in doc["pairs"]} == {("T5R1", "run1"), ("bm25_baseline", "run1")}
    full = _compare_json()
    common = _compare_json("--common-topics")
    assert common["settings"]["complete"] is False and full["settings"]["complete"] is True
    # the bundled runs retrieve for every topic: the same topics either way
    assert common["settings"]["topics"] == full["settings"]["topics"] == 30


def test_compare_baseline_wins_ties_losses_in_every_format():
    """--baseline: W/T/L columns in the tables, wins/ties/losses in csv and json, counted per
    topic (higher, equal, lower than the baseline), as pt.Experiment's baseline columns."""
    doc = _compare_json("--baseline", "bm25_baseline", measures=("AP", "P@10"))
    rows = {(p["measure"], p["run_a"]): (p["wins"], p["ties"], p["losses"]) for p in doc["pairs"]}
    wide = evaluate(QRELS, THREE, ["AP", "P@10"]).pivot(index=["measure", "run"], columns="topic", values="value")
    for (m, run), got in rows.items():
        a, b = wide.loc[(m, run)].to_numpy(), wide.loc[(m, "bm25_baseline")].to_numpy()
        assert got == (int((a > b).sum()), int((a == b).sum()), int((a < b).sum())), (m, run)
    assert len(rows) == 4
    for m in ("AP", "P@10"):
        code, out, err = _run(compare_main, [QRELS, *THREE, "-m", m, *FAST, "--format", "csv", "--baseline",
                                             "bm25_baseline"])
        assert code == 0 and out.splitlines()[0].count(",wins,ties,losses,") == 1
        for line in out.splitlines()[1:]:
            cells = line.split(",")
            assert tuple(int(x) for x in cells[12:15]) == rows[(m, cells[1])]
    code, out, err = _run(compare_main, [QRELS, *THREE, "-m", "AP", "-m", "P@10", *FAST, "--baseline",
                                         "bm25_baseline"])
    assert code == 0
    head, _, *body = out.splitlines()
    assert head.split()[2:] == ["AP", "AP", "W/T/L", "P@10", "P@10", "W/T/L"]
    for line in body[:3]:
        run = line.split()[1]
        wtl = re.findall(r"\b(\d+)/(\d+)/(\d+)\b", line)
        if run == "bm25_baseline":
            assert wtl == []
        else:
            assert [tuple(map(int, x)) for x in wtl] == [rows[("AP", run)], rows[("P@10", run)]]
            assert sum(rows[("AP", run)]) == 30
    # P@10 ties are frequent: ties are counted apart from wins and losses
    assert rows[("P@10", "T5R1")][1] > 0
    # without --baseline: no such columns
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--format", "csv"])
    assert "wins" not in out.splitlines()[0]
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST])
    assert "W/T/L" not in out


@pytest.mark.parametrize("option, value, api", [("-l", "2", {"rel": 2}), ("-M", "10", {"depth": 10}),
                                                ("--score-precision", "double", {"score_precision": "double"})])
def test_compare_ranking_options_change_the_means(option, value, api):
    doc = _compare_json(option, value, measures=("AP",))
    base = _compare_json(measures=("AP",))
    want = aggregate(evaluate(QRELS, THREE, ["AP"], complete=True, **api)).set_index("run")["value"]
    key = [k for k in doc["runs"][0] if k.startswith("AP")][0]      # AP, or AP(rel=2) with -l 2
    got = {r["run"]: r[key] for r in doc["runs"]}
    for run, v in got.items():
        assert v == pytest.approx(want[run], abs=1e-12)
    if option != "--score-precision":   # the bundled runs' scores do not tie in single precision
        assert got != {r["run"]: r["AP"] for r in base["runs"]}


def test_compare_measures_digits_details_formats():
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "P@10", "-m", "nDCG", *FAST, "--digits", "2"])
    table = out.splitlines()
    assert "P@10" in table[0] and "nDCG" in table[0] and "AP" not in table[0]
    numbers = [re.match(r"\d+\.(\d*)", w).group(1) for ln in table[2:5] for w in ln.split() if w[:1].isdigit()]
    assert numbers and all(len(d) == 2 for d in numbers), numbers
    code, out6, _ = _run(compare_main, [QRELS, *THREE, "-m", "P@10", *FAST, "--digits", "6"])
    assert all(len(re.match(r"\d+\.(\d*)", w).group(1)) == 6 for ln in out6.splitlines()[2:5]
               for w in ln.split() if w[:1].isdigit())
    code, plain, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST])
    code, details, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--details"])
    assert details.startswith(plain) and "d_z [95% CI]" in details and "d_z" not in plain
    code, md, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--format", "markdown"])
    assert md.splitlines()[0].startswith("|") and md != plain
    code, tex, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--format", "latex"])
    assert "\\begin{tabular}" in tex
    code, csv, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--format", "csv"])
    assert csv.splitlines()[0].startswith("measure,run_a,run_b") and len(csv.splitlines()) == 4


@pytest.mark.parametrize("argv, words", [
    (["--digits", "-3"], "--digits: must be from 0 to 17, got -3"),
    (["--alpha", "1.5"], "--alpha: must be in (0, 1), got 1.5"),
    (["--permutations", "0"], "--permutations: must be >= 1, got 0"),
    (["--bootstrap", "-1"], "--bootstrap: must be >= 1, got -1"),
    (["-M", "0"], "-M: the depth must be >= 1"),
    (["-l", "-2"], "-l: the relevance level must be >= 0, got -2"),
    (["--seed", "-1"], "--seed: must be an integer >= 0, got -1"),
    (["--seed", "x"], "--seed: must be an integer, got 'x'"),
    (["--permutations", "1.5"], "--permutations: must be an integer, got '1.5'"),
    (["--permutations", "1e10"], "--permutations: must be at most 1e9 (1000000000), got 10000000000"),
    (["--bootstrap", "1e8"], "--bootstrap: must be at most 1e7 (10000000), got 100000000"),
    (["--bootstrap", "inf"], "--bootstrap: must be an integer, got 'inf'"),
])
def test_compare_bad_values_name_the_option(argv, words):
    code, out, err = _run(compare_main, [QRELS, *THREE, "-m", "AP", *argv])
    assert code == 1 and out == "" and err.startswith(f"error: {words}") and err.count("\n") == 1


def test_debug_shows_the_traceback():
    with pytest.raises(InputError):
        _run(compare_main, [QRELS, ROOT / "tests" / "data" / "bad" / "run_score_nan.txt", *THREE[:1], "--debug"])
    with pytest.raises(InputError):
        _run(evaluate_main, [QRELS, ROOT / "tests" / "data" / "bad" / "run_score_nan.txt", "--debug"])
    code, _, err = _run(evaluate_main, [QRELS, ROOT / "tests" / "data" / "bad" / "run_score_nan.txt"])
    assert code == 1 and err.count("\n") == 1


def test_compare_accepts_the_smallest_valid_values():
    code, out, err = _run(compare_main, [QRELS, *THREE, "-m", "P@10", "-l", "0", "--permutations", "1",
                                         "--bootstrap", "1", "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["settings"]["permutations"] == 1 and doc["settings"]["bootstrap"] == 1
    want = aggregate(evaluate(QRELS, THREE, ["P@10"], rel=0, complete=True)).set_index("run")["value"]
    key = doc["pairs"][0]["measure"]                  # P@10 at relevance level 0
    assert {r["run"]: r[key] for r in doc["runs"]} == pytest.approx(want.to_dict(), abs=1e-12)


# ------------------------------------------------------------- details of the output's form
def test_compare_legend_and_markdown_details():
    names = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
             "randomisation": "Fisher's randomisation test", "bootstrap": "Sakai's paired bootstrap test"}
    for test, words in names.items():
        code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--test", test])
        assert f"({words}, all pairs, Holm-Bonferroni correction, alpha 0.05, 30 topics)" in out
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--baseline", "run1"])
    assert "against baseline run1" in out
    code, out, _ = _run(compare_main, [QRELS, *THREE, "-m", "AP", *FAST, "--format", "markdown", "--details"])
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| measure | run a"))
    assert lines[head + 1] == "|---|---|---|" + "---:|" * 8
    assert all(ln.startswith("| AP | ") and ln.endswith(" |") for ln in lines[head + 2: head + 5])


def test_compare_counts_in_scientific_notation_and_large_seeds():
    doc = _compare_json("--permutations", "3e2", "--bootstrap", "2e2", "--seed", str(2 ** 70))
    assert doc["settings"]["permutations"] == 300 and doc["settings"]["bootstrap"] == 200
    assert doc["settings"]["seed"] == 2 ** 70
