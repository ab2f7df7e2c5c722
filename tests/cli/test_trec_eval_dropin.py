"""``maxent evaluate`` as a drop-in for trec_eval: the same arguments give the same lines.

Oracle: NIST's trec_eval 9.0.7 (our default) and 10.0 (``--score-precision double``), built
from source by the ``trec_eval`` fixture and run live on trec_eval's own test inputs and on the
bundled sample (3 runs, gunzipped for trec_eval). Only lines of measures we implement are
compared; every such line trec_eval prints must be ours, identical.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import subprocess
from pathlib import Path

import pytest

from maxent.cli.evaluate import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = ("BITEM_df", "T5R1", "CincyMedIR-run2")
VERSIONS = {"9.0.7": [], "10.0": ["--score-precision", "double"]}


def _ours(name: str) -> bool:
    """Whether a trec_eval line name is of a measure family implemented here (the longest
    trec_eval family name it starts with is one of ours)."""
    from maxent.cli.evaluate import TREC_EVAL_ORDER
    from maxent.metrics.names import trec_names

    if name.startswith("Z") and name[1:2].isalpha() and name not in trec_names():
        name = name[1:]
    fam = max((f for f in TREC_EVAL_ORDER if name == f or name.startswith(f + "_")), key=len, default=None)
    return fam in ("runid", "num_q") or fam in trec_names()


@pytest.fixture(scope="module")
def inputs(shared_data, tmp_path_factory):
    d = shared_data / "trec_eval_test"
    tmp = tmp_path_factory.mktemp("runs")
    runs = []
    for name in SAMPLE_RUNS:
        out = tmp / name
        out.write_bytes(gzip.decompress((REPO / "trec_runs" / "runs" / f"{name}.gz").read_bytes()))
        runs.append(out)
    return {"test": (d / "qrels.test", [d / "results.test"]),
            "sample": (REPO / "trec_runs" / "qrels-rnd1.txt", runs), "dir": d}


def _live(binary, args, qrels, run) -> list[str]:
    done = subprocess.run([str(binary), *args, str(qrels), str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _mine(args, *, stderr=False):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    assert code == 0, err.getvalue()
    return (out.getvalue(), err.getvalue()) if stderr else out.getvalue().splitlines()


def _same(trec_eval, version, args, data, *, qrels=None, run=None):
    qrels_path, runs = data
    for r in ([run] if run else runs):
        want = [ln for ln in _live(trec_eval[version], args, qrels or qrels_path, r)
                if _ours(ln.split("\t")[0].strip())]
        got = _mine([*args, *VERSIONS[version], qrels or qrels_path, r])
        assert got == want, (version, args, r.name)


FAMILIES = [["-m", "P"], ["-m", "recall"], ["-m", "ndcg_cut"], ["-m", "map_cut"], ["-m", "success"],
            ["-m", "iprec_at_recall"], ["-m", "P.5,10"], ["-m", "P.5", "-m", "P.10"],
            ["-m", "official", "-m", "P.20,7"], ["-m", "iprec_at_recall..10,.25,.5", "-m", "ndcg_cut.23.4,5"],
            ["-m", "Rprec_mult"], ["-m", "relative_P"], ["-m", "all_trec"]]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("args", FAMILIES, ids=" ".join)
def test_families_expand_as_trec_eval(trec_eval, inputs, version, args):
    from maxent.metrics.names import trec_names

    fam = args[-1].split(".")[0]
    if fam in ("Rprec_mult", "relative_P") and fam not in trec_names():
        pytest.skip(f"{fam} is not implemented here yet")
    _same(trec_eval, version, ["-q", *args], inputs["test"])
    _same(trec_eval, version, args, inputs["sample"])


FLAGS = [[], ["-q"], ["-q", "-c"], ["-q", "-c", "-l", "2"], ["-c", "-J", "-M", "100"], ["-q", "-l", "2"], ["-q", "-M", "20"], ["-M", "99999999999999999999"],
         ["-q", "-J"], ["-q", "-J", "-M", "30"], ["-q", "-n"], ["-n"], ["-N", "1000"],
         ["-R", "qrels", "-T", "trec_results"]]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: " ".join(f) or "none")
def test_flags_as_trec_eval(trec_eval, inputs, version, flags):
    _same(trec_eval, version, [*flags, "-m", "all_trec"], inputs["sample"])
    # results.trunc lacks topics: with -c, 10.0 prints a line per missing topic as well
    _same(trec_eval, version, [*flags, "-m", "all_trec"], inputs["test"],
          run=inputs["dir"] / ("results.trunc" if "-c" in flags else "results.test"))


def test_nothing_judged_divides_zero_by_zero(trec_eval, inputs, tmp_path):
    # -J leaves topic 302 empty: trec_eval prints iprec_at_recall_0.00 and 11pt_avg as -nan
    qrels, (run,) = inputs["test"]
    lines = [ln for ln in run.read_text().splitlines() if not ln.startswith("302")]
    made = tmp_path / "one_unjudged"
    made.write_text("\n".join([*lines, "302\tQ0\tnot_judged_doc\t1\t1.0\tx"]) + "\n")
    for version in VERSIONS:
        want = _live(trec_eval[version], ["-q", "-J", "-m", "all_trec"], qrels, made)
        assert sum("-nan" in ln for ln in want) == 4
        _same(trec_eval, version, ["-q", "-J", "-m", "all_trec"], inputs["test"], run=made)


def test_graded_relevance_level(trec_eval, inputs):
    # infAP (maxent.metrics.trec_extra) differs on this qrels' grade -1 lines: not compared here
    d = inputs["dir"]
    for version in VERSIONS:
        _same(trec_eval, version, ["-q", "-l", "2", "-m", "official", "-m", "ndcg_cut", "-m", "success"], inputs["test"], qrels=d / "qrels.rel_level")
        _same(trec_eval, version, ["-q", "-J", "-m", "official", "-m", "recall"], inputs["test"],
              qrels=d / "qrels.rel_level")


def test_zscores_as_trec_eval(trec_eval, inputs):
    d = inputs["dir"]
    for version in VERSIONS:
        _same(trec_eval, version, ["-q", "-m", "official", "-m", "ndcg_cut", "-Z", d / "zscores_file"],
              inputs["test"])


def test_iprec_rule_differs_between_versions(trec_eval, inputs):
    # the one m_*.c rule that differs: (long)(x R + 0.9) in 9.0.7, lround(x R) in 10.0;
    # topic 1 of the sample: both trec_eval outputs differ, and each matches its mode
    qrels, runs = inputs["sample"]
    te9 = _live(trec_eval["9.0.7"], ["-q", "-m", "iprec_at_recall"], qrels, runs[0])
    te10 = _live(trec_eval["10.0"], ["-q", "-m", "iprec_at_recall"], qrels, runs[0])
    assert te9 != te10
    assert _mine(["-q", "-m", "iprec_at_recall", qrels, runs[0]]) == te9
    assert _mine(["-q", "-m", "iprec_at_recall", "--score-precision", "double", qrels, runs[0]]) == te10


def test_order_matches_out_test_a(inputs):
    d = inputs["dir"]
    want = [ln.split("\t")[0].strip() for ln in (d / "out.test.a").read_text().splitlines()]
    # out.test.a is trec_eval 10.0's: its all_trec (with rbp, rbp_resid, unj) is our double mode's
    got = [ln.split("\t")[0].strip() for ln in _mine(["-m", "all_trec", *VERSIONS["10.0"],
                                                      *inputs["test"][0:1], *inputs["test"][1]])]
    assert got == [m for m in want if _ours(m)]
    nine = [ln.split("\t")[0].strip() for ln in _mine(["-m", "all_trec", *inputs["test"][0:1], *inputs["test"][1]])]
    assert nine == [m for m in got if not m.startswith(("rbp", "unj_"))]


def test_labels_never_borrow_a_trec_eval_name(inputs):
    qrels, runs = inputs["test"]
    got = [ln.split("\t")[0].strip() for ln in _mine(["-m", "AP(rel=2)", "-m", "nDCG@10(gain=exp)", "-m", "RR@10",
                                                      "-m", "IPrec(rule=10)@0.1", "-m", "map", qrels, *runs])]
    assert got == ["map", "map(rel=2)", "recip_rank(cutoff=10)", "iprec_at_recall_0.10(rule=10)",
                       "ndcg_cut_10(gain=exp)"]
    got = [ln.split("\t")[0].strip() for ln in _mine(["-l", "2", "-m", "AP", qrels, *runs])]
    assert got == ["map"]   # -l 2: trec_eval's map is AP(rel=2)


@pytest.mark.parametrize("flag, value", [("-R", "prefs"), ("-T", "foo")])
def test_other_formats_are_refused_by_name(inputs, flag, value, capsys):
    qrels, runs = inputs["test"]
    assert main([flag, value, str(qrels), str(runs[0])]) == 1
    err = capsys.readouterr().err
    assert f"{flag} {value}: unsupported" in err and err.count("\n") == 1


def test_csv_and_json_carry_all_rows_file_name_and_tag(inputs, tmp_path):
    qrels, runs = inputs["test"]
    twin = tmp_path / "twin"
    twin.write_bytes(runs[0].read_bytes())          # same tag (STANDARD), another file
    text = "\n".join(_mine(["-m", "map", "-m", "P.10", "--format", "csv", qrels, runs[0], twin]))
    lines = text.splitlines()
    assert lines[0] == "run,topic,measure,value,tag"
    alls = [ln for ln in lines if ",all," in ln]
    assert len(alls) == 4 and {ln.split(",")[0] for ln in alls} == {"results.test", "twin"}
    assert all(ln.endswith(",STANDARD") for ln in lines[1:])
    te = {ln.split("\t")[0].strip(): ln.split("\t")[2] for ln in _mine(["-m", "map", qrels, runs[0]])}
    assert f"{float(alls[0].split(',')[3]):6.4f}" == te["map"]
    doc = json.loads("\n".join(_mine(["-m", "map", "--format", "json", qrels, runs[0], twin])))
    assert [(r["run"], r["tag"], r["num_q"]) for r in doc["runs"]] == [("results.test", "STANDARD", 3),
                                                                          ("twin", "STANDARD", 3)]
    assert f"{doc['runs'][0]['all']['AP']:6.4f}" == te["map"] and len(doc["runs"][1]["topics"]) == 3


def test_repeated_warning_folded_and_quiet(inputs, tmp_path):
    qrels, runs = inputs["test"]
    extra = tmp_path / "extra"
    extra.write_text(runs[0].read_text() + "999\tQ0\tdoc1\t1\t1.0\tSTANDARD\n")
    twin = tmp_path / "extra2"
    twin.write_bytes(extra.read_bytes())
    out, err = _mine(["-m", "map", qrels, extra, twin], stderr=True)
    assert err.count("\n") == 1 and "2 runs (extra, extra2)" in err and "999" in err
    out, err = _mine(["--quiet", "-m", "map", qrels, extra, twin], stderr=True)
    assert err == ""


@pytest.mark.parametrize("version", VERSIONS)
def test_per_topic_order_is_strcmp_of_the_qid_bytes(trec_eval, tmp_path, version):
    """-q lists topics as trec_eval's strcmp orders their bytes; a qid that is not UTF-8
    prints escaped (\\xff) but keeps its place (0xff sorts after every ASCII byte, although
    its printed backslash sorts before ']' and 'a')."""
    qids = [b"\xff1", b"]", b"a", b"\\x", b"Z", b"\xc3\xa9", b"\xe9"]
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(b"".join(t + b" 0 d%d %d\n" % (d, d % 2) for t in qids for d in range(4)))
    run.write_bytes(b"".join(t + b" Q0 d%d %d %f run\n" % (d, d, 1.0 / (d + 1 + i))
                             for i, t in enumerate(qids) for d in range(4)))
    done = subprocess.run([str(trec_eval[version]), "-q", "-m", "map", "-m", "P.5", str(qrels), str(run)],
                          capture_output=True, check=True)
    want = [ln.decode("utf-8", "backslashreplace") for ln in done.stdout.splitlines()]
    got = _mine(["-q", "-m", "map", "-m", "P.5", *VERSIONS[version], qrels, run])
    assert got == want
    assert [ln.split("\t")[1] for ln in got[::2]] == ["Z", "\\x", "]", "a", "é", "\\xe9", "\\xff1", "all"]
