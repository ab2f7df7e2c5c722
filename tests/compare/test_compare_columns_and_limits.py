"""maxent.compare: each column is its measure, names are escaped, resampling is checked and
bounded in memory, topics are keyed by their qid bytes."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from maxent.compare import MAX_BOOTSTRAP, MAX_PERMUTATIONS, compare, compare_values
from maxent.errors import ParameterError
from maxent.evaluate import aggregate, evaluate
from maxent.metrics.ap import MIN_GEO_MEAN
from maxent.trec import read_run

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = ROOT / "trec_runs" / "runs"
THREE = [RUNS / "T5R1.gz", RUNS / "bm25_baseline.gz", RUNS / "run1.gz"]
FAST = {"n_permutations": 200, "n_bootstrap": 200}


# ------------------------------------------------------------ every column is its measure
def test_gm_map_and_sums_are_the_aggregates_of_evaluate():
    measures = ["gm_map", "num_rel_ret", "map"]
    res = compare(QRELS, THREE, measures, **FAST)
    want = aggregate(evaluate(QRELS, THREE, measures, complete=True))
    means = res.means()
    assert len(want) == 9
    for run, m, v in want[["run", "measure", "value"]].itertuples(index=False):
        assert means.loc[run, m] == pytest.approx(v, rel=1e-13, abs=0)
    gm, ap = str(res.measures[0]), str(res.measures[2])
    assert not np.allclose(means[gm], means[ap])                  # gm_map is not MAP
    # the pairs' means are the same summaries; gm_map's tests are those of ln max(AP, 1e-5)
    per = evaluate(QRELS, THREE, ["AP"], complete=True)
    v = {r: g["value"].to_numpy() for r, g in per.groupby("run", sort=False)}
    for row in res.pairs.itertuples(index=False):
        assert row.mean_a == pytest.approx(means.loc[row.run_a, row.measure], rel=1e-12)
        assert row.mean_b == pytest.approx(means.loc[row.run_b, row.measure], rel=1e-12)
        if row.measure == gm:
            la, lb = (np.log(np.maximum(v[r], MIN_GEO_MEAN)) for r in (row.run_a, row.run_b))
            assert row.p_t == pytest.approx(stats.ttest_rel(la, lb).pvalue, rel=1e-10)
            assert row.diff == pytest.approx(np.log(row.mean_a / row.mean_b), rel=1e-10)
        if row.measure == "NumRelRet":
            assert row.diff == pytest.approx(row.mean_a - row.mean_b, abs=1e-9)
            assert row.diff_lo <= row.diff <= row.diff_hi
    doc_text = res.format("terminal")
    assert f"{means.loc['T5R1', gm]:.4f}" in doc_text
    assert "ln max(value, 1e-5)" in res.details()


# --------------------------------------------------------------------- escaped run names
LATEX_NAMES = ["d$1", "b{r}", "ti~lde", "ca^ret", "a&b", "pct%", "h#sh", "under_s", "back\\slash"]


def _renamed(names):
    base = [read_run(p) for p in (THREE * 4)[:len(names)]]
    return [dataclasses.replace(r, name=n) for r, n in zip(base, names)]


def _unescaped(line: str, char: str) -> int:
    """Occurrences of ``char`` not preceded by a backslash (escaped backslashes dropped first)."""
    line = line.replace("\\textbackslash{}", "")
    return len(re.findall(r"(?<!\\)" + re.escape(char), line))


def test_latex_escapes_every_special_character():
    res = compare(QRELS, _renamed(LATEX_NAMES), ["AP"], **FAST)
    rows = [ln for ln in res.format("latex").splitlines() if ln.endswith("\\\\")][1:]
    assert len(rows) == len(LATEX_NAMES)
    want = {"d$1": "d\\$1", "b{r}": "b\\{r\\}", "ti~lde": "ti\\textasciitilde{}lde",
            "ca^ret": "ca\\textasciicircum{}ret", "a&b": "a\\&b", "pct%": "pct\\%", "h#sh": "h\\#sh",
            "under_s": "under\\_s", "back\\slash": "back\\textbackslash{}slash"}
    for name, row in zip(LATEX_NAMES, rows):
        cells = row[:-2].split(" & ")
        assert cells[1].strip() == want[name]
        assert _unescaped(row, "&") == 2                             # letter & run & AP
        for c in "$%#_~":
            assert _unescaped(row.split("$^{")[0], c) == 0
        assert row.count("{") - row.count("\\{") == row.count("}") - row.count("\\}")


def test_markdown_escapes_the_pipe():
    names = ["a|b", "plain", "|edge|"]
    res = compare(QRELS, _renamed(names), ["AP"], **FAST)
    for text in (res.format("markdown"), res.details("markdown")):
        table = [ln for ln in text.splitlines() if ln.startswith("|")]
        widths = {_unescaped(ln, "|") for ln in table}
        assert len(widths) == 1, table                               # every row: the same cells
    assert "a\\|b" in res.format("markdown") and "\\|edge\\|" in res.details("markdown")


# ------------------------------------------------------------ checked resampling arguments
@pytest.mark.parametrize("kwargs, name", [
    ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"), ({"seed": True}, "seed"),
    ({"n_permutations": 0}, "n_permutations"), ({"n_permutations": MAX_PERMUTATIONS + 1}, "n_permutations"),
    ({"n_permutations": 1e3}, "n_permutations"), ({"n_bootstrap": MAX_BOOTSTRAP + 1}, "n_bootstrap"),
    ({"n_bootstrap": -5}, "n_bootstrap")])
def test_api_names_the_bad_argument(kwargs, name):
    with pytest.raises(ParameterError, match=f"^{name} must"):
        compare(QRELS, THREE, ["AP"], **kwargs)
    with pytest.raises(ParameterError, match=f"^{name} must"):
        compare_values(np.random.default_rng(0).random((2, 5)), ["a", "b"], **kwargs)


def test_large_counts_are_accepted_and_streamed():
    # the largest counts are allowed; memory does not grow with them (checked at a moderate size)
    v = np.random.default_rng(1).random((2, 40))
    out = compare_values(v, ["a", "b"], n_permutations=300_000, n_bootstrap=300, seed=2 ** 70)
    assert 0 <= out["p_randomisation"].iloc[0] <= 1


# ----------------------------------------------------------------------- bounded memory
def test_block_loop_is_used_and_equals_one_block(monkeypatch):
    import maxent.stats.bootstrap as bootstrap
    from maxent.stats import effect_sizes, paired_bootstrap_asl, randomisation_test

    rng = np.random.default_rng(5)
    v = rng.random((3, 3000))
    d = v[[0, 0, 1]] - v[[1, 2, 2]]
    whole = {"rand": randomisation_test(d, 1500, seed=4, block=1500),
             "asl": paired_bootstrap_asl(d, 1500, seed=4, block=1500),
             "eff": effect_sizes(d, 1500, seed=4, block=1500)}
    calls = []
    real = bootstrap.resample_topics

    def spy(*args, **kwargs):
        for block in real(*args, **kwargs):
            calls.append(len(block))
            yield block

    monkeypatch.setattr(bootstrap, "BLOCK_ELEMENTS", 2 ** 20)     # 349 rows of 3000 topics
    monkeypatch.setattr(bootstrap, "resample_topics", spy)
    assert bootstrap.block_rows(3000, 1500) == 349
    out = compare_values(v, ["a", "b", "c"], n_permutations=1500, n_bootstrap=1500, seed=4)
    assert calls == [349, 349, 349, 349, 104] * 2                 # effect sizes, then Sakai's test
    assert np.array_equal(out["p_randomisation"], whole["rand"])
    assert np.array_equal(out["p_bootstrap"], whole["asl"])
    for k in ("diff_lo", "diff_hi", "d_lo", "d_hi"):
        assert np.array_equal(out[k], whole["eff"][k])


MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from maxent.compare import compare
    n, root = int(sys.argv[1]), sys.argv[2]
    with open(root + "/qrels", "w") as f:
        f.writelines(f"{t} 0 d{t} 1\\n{t} 0 e{t} 0\\n" for t in range(n))
    coin = (np.random.default_rng(0).random((2, n)) < 0.5).astype(int).tolist()
    for k, name in enumerate("ab"):
        with open(root + "/" + name, "w") as f:
            f.writelines(f"{t} Q0 {'de'[c]}{t} 1 2 {name}\\n{t} Q0 {'ed'[c]}{t} 2 1 {name}\\n"
                         for t, c in enumerate(coin[k]))
    res = compare(root + "/qrels", [root + "/a", root + "/b"], ["AP"])
    assert res.settings["topics"] == n and res.settings["bootstrap"] == 10000
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


@pytest.mark.slow
def test_200000_topics_with_defaults_stay_under_2_gb(tmp_path):
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, "200000", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    peak_kib = int(out.stdout.split()[-1])
    assert peak_kib < 2 * 1024 ** 2, f"peak {peak_kib / 1024:.0f} MiB"


# ------------------------------------------------------------------- qids keyed by bytes
def _write_bytes_pair(tmp_path):
    (tmp_path / "qrels").write_bytes(b"q\xff1 0 d1 1\nq\xfe1 0 d2 1\nq\xff1 0 d3 0\nplain 0 d1 1\n")
    (tmp_path / "a").write_bytes(b"q\xff1 Q0 d1 1 2.0 a\nq\xff1 Q0 d3 2 1.0 a\nq\xfe1 Q0 d2 1 1.0 a\n"
                                 b"plain Q0 d1 1 1 a\n")
    (tmp_path / "b").write_bytes(b"q\xff1 Q0 d3 1 2.0 b\nq\xff1 Q0 d1 2 1.0 b\nq\xfe1 Q0 d9 1 1.0 b\n")
    return tmp_path / "qrels", [tmp_path / "a", tmp_path / "b"]


def test_non_utf8_qids_stay_distinct(tmp_path):
    qrels, runs = _write_bytes_pair(tmp_path)
    res = compare(qrels, runs, ["AP"], **FAST)
    # a: AP 1 on all three topics; b: 0.5 on q\xff1, 0 on q\xfe1, nothing for plain (0 with -c)
    assert res.settings["topics"] == 3
    assert res.means().loc["a", "AP"] == pytest.approx(1.0)
    assert res.means().loc["b", "AP"] == pytest.approx(0.5 / 3)
    row = res.pairs.iloc[0]
    assert row["diff"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert row.p_t == pytest.approx(stats.ttest_rel([1, 1, 1], [0.5, 0, 0]).pvalue, rel=1e-12)
    # --common-topics: the two qids b retrieved for, still two topics
    common = compare(qrels, runs, ["AP"], complete=False, **FAST)
    assert common.settings["topics"] == 2
    assert common.pairs.iloc[0].mean_b == pytest.approx(0.25)
