"""The measures of maxent.metrics.trec_extra against live trec_eval 9.0.7 and 10.0 (the
``trec_eval`` fixture builds NIST's sources): every line trec_eval prints for them, per topic
(-q) and ``all``, with -l 2 and -c too, must be in our output unchanged, and no other line of
theirs. Inputs: trec_eval's own test files, the bundled TREC-COVID sample (3 runs) and a small
collection written here (ties, unjudged documents, grades 0-2, a topic without relevant
documents, a topic missing from the run and one missing from the qrels).
"""
from __future__ import annotations

import contextlib
import gzip
import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from maxent.cli.evaluate import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = ("BITEM_df", "BRPHJ_NLP1", "T5R1")

# trec_eval's names of the measures (a trailing "_": a family with a parameter suffix)
OURS = ("infAP", "gm_bpref", "Rprec_mult_", "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg",
        "relative_P_", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
        "rbp", "rbp_resid", "unj_")   # the last three: trec_eval 10.0 only
OPTIONS = ([], ["-q"], ["-q", "-l", "2"], ["-q", "-c"])


def _ours(name: str, skip=()) -> bool:
    if name in skip:
        return False
    return any(name == p or (p.endswith("_") and name.startswith(p)) for p in OURS)


def _lines(text: str, skip=()) -> set[str]:
    """Lines of our measures."""
    out = set()
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and _ours(parts[0].strip(), skip):
            out.add(line)
    return out


def _run_ours(argv: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return buf.getvalue()


def _run_trec_eval(binary: Path, argv: list[str]) -> str:
    done = subprocess.run([str(binary), *argv], capture_output=True, text=True, check=True)
    return done.stdout


def _synthetic(tmp: Path) -> tuple[Path, Path]:
    """A small qrels/run pair with the cases where these measures branch."""
    rng = np.random.default_rng(7)
    qrels, run = [], []
    for t in range(1, 13):
        docs = [f"d{t}_{i:02d}" for i in range(40)]
        if t == 1:      # no relevant document: all judged non-relevant
            grades = {d: 0 for d in docs[:10]}
        elif t == 2:    # grade 1 only: nothing relevant at -l 2
            grades = {d: 1 for d in docs[:3]} | {d: 0 for d in docs[3:8]}
        elif t == 3:    # R+ = 3, run of R+ + 1 documents (Rndcg's end term), relevant at rank 1
            grades = {docs[0]: 2, docs[1]: 1, docs[5]: 1, docs[2]: 0}
        else:
            judged = rng.choice(40, size=int(rng.integers(5, 30)), replace=False)
            grades = {docs[i]: int(rng.choice(3, p=[0.5, 0.3, 0.2])) for i in judged}
        qrels += [f"{t} 0 {d} {g}" for d, g in sorted(grades.items())]
        if t == 12:     # in the qrels only (-c)
            continue
        n = 4 if t == 3 else int(rng.integers(1, 40))
        ranked = docs[:n] if t == 3 else list(rng.permutation(docs)[:n])
        scores = np.round(rng.uniform(0, 3, size=n), 0 if t % 2 else 1)   # many ties
        if t == 3:
            scores = np.array([4.0, 3.0, 2.0, 1.0])
        run += [f"{t} Q0 {d} {r + 1} {s:g} synth" for r, (d, s) in enumerate(zip(ranked, scores))]
    run += [f"99 Q0 x{i} {i + 1} {10 - i} synth" for i in range(5)]   # not in the qrels
    (tmp / "qrels.txt").write_text("\n".join(qrels) + "\n")
    # trec_eval 10.0 stops on a qrels topic the run lacks unless -c: the same without topic 12
    (tmp / "qrels_no12.txt").write_text("\n".join(q for q in qrels if not q.startswith("12 ")) + "\n")
    (tmp / "run.txt").write_text("\n".join(run) + "\n")
    return tmp / "qrels.txt", tmp / "run.txt"


@pytest.fixture(scope="module")
def inputs(shared_data, tmp_path_factory):
    """[(name, qrels, run)]: one trec_eval call per run."""
    tmp = tmp_path_factory.mktemp("live")
    d = shared_data / "trec_eval_test"
    out = [("trec_eval_test", d / "qrels.test", d / "results.test")]
    for name in SAMPLE_RUNS:
        run = tmp / name
        with gzip.open(REPO / "trec_runs" / "runs" / f"{name}.gz", "rb") as f:
            run.write_bytes(f.read())
        out.append((name, REPO / "trec_runs" / "qrels-rnd1.txt", run))
    out.append(("synthetic", *_synthetic(tmp)))
    return out


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "all")
def test_same_lines_as_trec_eval_9(trec_eval, inputs, options):
    for name, qrels, run in inputs:
        argv = ["-m", "all_trec", *options, str(qrels), str(run)]
        expected = _lines(_run_trec_eval(trec_eval["9.0.7"], argv))
        got = _lines(_run_ours(argv))
        assert expected, name
        assert got == expected, (name, sorted(expected - got)[:5], sorted(got - expected)[:5])


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "all")
def test_same_lines_as_trec_eval_10(trec_eval, inputs, options):
    """As trec_eval 10.0 (``--score-precision double``, which gives 11pt_avg 10.0's rounding of
    recall levels, ``rule=10``)."""
    for name, qrels, run in inputs:
        if name == "synthetic" and "-c" not in options:
            qrels = qrels.with_name("qrels_no12.txt")   # 10.0 stops on a topic the run lacks
        argv = ["-m", "all_trec", *options, str(qrels), str(run)]
        # with -q -c 10.0 prints lines for the qrels topics a run lacks, and so do we
        expected = _lines(_run_trec_eval(trec_eval["10.0"], argv))
        got = _lines(_run_ours(["--score-precision", "double", *argv]))
        assert expected, name
        assert got == expected, (name, sorted(expected - got)[:5], sorted(got - expected)[:5])


def _values(text: str) -> set[tuple[str, str]]:
    """(topic, value) of the 11pt_avg lines, under its trec_eval or its own label."""
    return {(p[1], p[2]) for p in (line.split("\t") for line in text.splitlines())
            if len(p) == 3 and p[0].strip().startswith(("11pt_avg", "ElevenPtAvg"))}


@pytest.mark.parametrize("options", [["-q"], ["-q", "-l", "2"]], ids=" ".join)
def test_11pt_avg_rule_10_is_trec_eval_10s(trec_eval, inputs, options):
    for name, qrels, run in inputs:
        if name == "synthetic":
            qrels = qrels.with_name("qrels_no12.txt")
        expected = _values(_run_trec_eval(trec_eval["10.0"], ["-m", "11pt_avg", *options, str(qrels), str(run)]))
        got = _values(_run_ours(["--score-precision", "double", "-m", "ElevenPtAvg(rule=10)", *options,
                                 str(qrels), str(run)]))
        assert expected and got == expected, name


def test_nine_rule_differs_from_ten_somewhere(inputs):
    """The two rules are not the same measure on these inputs (so the test above tests something)."""
    name, qrels, run = inputs[1]
    a = _values(_run_ours(["-q", "-m", "11pt_avg", str(qrels), str(run)]))
    b = _values(_run_ours(["-q", "-m", "ElevenPtAvg(rule=10)", str(qrels), str(run)]))
    assert a and b and a != b



@pytest.mark.parametrize("name", ["P.inf", "P.-inf", "P.nan", "P_inf", "recall.5,inf", "P.0x10", "P.0"])
def test_non_finite_cutoff_is_an_error_as_in_trec_eval(trec_eval, inputs, name):
    """trec_eval's atol reads "inf"/"nan" as 0 and rejects the cutoff (``Cannot initialize
    measure``); we raise a MeasureNameError naming the measure (not an OverflowError)."""
    from maxent import MeasureNameError, parse_measures

    _, qrels, run = inputs[0]
    for version in ("9.0.7", "10.0"):
        if name.startswith("P_"):
            continue   # trec_eval's -m takes name.params only
        done = subprocess.run([str(trec_eval[version]), "-m", name, str(qrels), str(run)],
                              capture_output=True, text=True)
        assert done.returncode != 0 and "Cannot initialize measure" in done.stderr, (version, done.stderr)
    with pytest.raises(MeasureNameError, match=re.escape(name)) as err:
        parse_measures(name)
    bad = name.replace("_", ".").split(".", 1)[1].split(",")[-1]
    assert f"'{bad}'" in str(err.value) or "got 0" in str(err.value)


@pytest.mark.parametrize("name", ["ndcg_cut.1e999", "P.1e3", "P.5abc", "P.+7", "P. 8", "ndcg_cut.10,20,23.4"])
def test_integer_cutoffs_read_as_trec_eval_atol(trec_eval, inputs, name):
    """An integer cutoff is its leading integer, as trec_eval's atol reads it."""
    _, qrels, run = inputs[0]
    for version in ("9.0.7", "10.0"):
        argv = ["-q", "-m", name, str(qrels), str(run)]
        expected = _run_trec_eval(trec_eval[version], argv)
        got = _run_ours((["--score-precision", "double"] if version == "10.0" else []) + argv)
        assert expected and got == expected, version


@pytest.mark.parametrize("level", ["1", "2", "3"])
def test_infap_counts_negative_grades_as_pooled_unjudged(trec_eval, shared_data, level):
    """qrels.rel_level grades 304 documents of topic 303 -1: trec_eval's infAP counts them as
    in the pool but unjudged (m_infap.c, RELVALUE_UNJUDGED), every other measure as unjudged."""
    d = shared_data / "trec_eval_test"
    argv = ["-q", "-l", level, "-m", "all_trec", str(d / "qrels.rel_level"), str(d / "results.test")]
    for version, extra in (("9.0.7", []), ("10.0", ["--score-precision", "double"])):
        expected = {line for line in _run_trec_eval(trec_eval[version], argv).splitlines()
                    if line.startswith("infAP")}
        got = {line for line in _run_ours(extra + argv).splitlines() if line.startswith("infAP")}
        assert len(expected) == 4 and got == expected, version


def test_pooled_unjudged_flags_only_negative_grades(shared_data):
    from maxent import rank_runs, read_qrels, read_runs

    d = shared_data / "trec_eval_test"
    lists = rank_runs(read_runs([d / "results.test"]), read_qrels(d / "qrels.rel_level"))
    assert lists.pooled_unjudged.sum(axis=1).tolist() == [0, 0, 69]   # 69 of the 304 retrieved
    assert (lists.grades[lists.pooled_unjudged] == -1).all()
    assert rank_runs(read_runs([d / "results.test"]), read_qrels(d / "qrels.test")).pooled_unjudged is None
    assert lists.take([2]).pooled_unjudged.shape == (1, lists.depth)
    assert lists.truncate(10).pooled_unjudged.shape == (3, 10)


@pytest.mark.parametrize("args", [
    ["-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75"],
    ["-m", "utility.1,-1,0,0", "-m", "11pt_avg.0.5", "-l", "2"],
    ["-m", "11pt_avg", "-m", "11pt_avg.0,.3,1", "-m", "utility.2,-1,.5,0.25", "-N", "3000"],
    ["-m", "official", "-m", "utility", "-m", "utility.3,-2,0,0"],
], ids=" ".join)
def test_float_parameter_lists_as_trec_eval(trec_eval, inputs, args):
    """utility's four coefficients and 11pt_avg's recall levels (trec_eval's float params:
    the first -m with parameters applies to the family; printed with the text as given)."""
    for name, qrels, run in inputs[:2]:
        for version, extra in (("9.0.7", []), ("10.0", ["--score-precision", "double"])):
            argv = ["-q", *args, str(qrels), str(run)]
            expected = _run_trec_eval(trec_eval[version], argv)
            assert "utility_" in expected or "11pt_avg_" in expected
            assert _run_ours(extra + argv) == expected, (name, version)


def test_utility_needs_four_coefficients():
    from maxent import MeasureNameError, parse_measures

    with pytest.raises(MeasureNameError, match="utility.1,2: utility takes 4"):
        parse_measures("utility.1,2")
    (m,) = parse_measures("11pt_avg..25,.5,.75")
    assert m.levels == (0.25, 0.5, 0.75) and m.trec_name() == "11pt_avg_.25,.5,.75"
    assert str(m) == "ElevenPtAvg(levels=0.25,0.5,0.75)"


@pytest.mark.parametrize("args", [
    ["-m", "rbp.p=0.8", "-m", "unj.5,7", "-m", "rbp_resid.p=0.5"],
    ["-m", "all_trec", "-m", "unj.3", "-m", "rbp.p=0.95"],
    ["-m", "rbp.p=1", "-m", "rbp_resid.p=0", "-l", "2"],
], ids=" ".join)
def test_trec_eval_10_additions(trec_eval, shared_data, inputs, args):
    """rbp, rbp_resid and unj (trec_eval 10.0's all_trec) with their parameters, on graded
    qrels (rbp's gain scaling) too; 9.0.7 has none of them, nor does our 9.0.7 all_trec."""
    d = shared_data / "trec_eval_test"
    for qrels, run in ((d / "qrels.rel_level", d / "results.test"), inputs[1][1:]):
        argv = ["-q", *args, str(qrels), str(run)]
        expected = _run_trec_eval(trec_eval["10.0"], argv).rstrip("\n")
        assert _run_ours(["--score-precision", "double", *argv]).rstrip("\n") == expected
    nine = _run_ours(["-m", "all_trec", str(d / "qrels.rel_level"), str(d / "results.test")])
    assert not any(line.startswith(("rbp", "unj")) for line in nine.splitlines())
    assert "rbp" not in _run_trec_eval(trec_eval["9.0.7"], ["-m", "all_trec", str(d / "qrels.rel_level"),
                                                              str(d / "results.test")])
