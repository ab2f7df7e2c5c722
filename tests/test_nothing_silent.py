"""Nothing silently wrong: each case of tests/data/bad/README.md's second table,
with its outcome asserted (an error naming file and line, or the value trec_eval gives).

Oracles: pytrec_eval (an independent build of trec_eval 9) on the same files, or a hand
calculation written beside the number.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from maxent.errors import InputWarning

from maxent import (InputError, MeasureNameError, ParameterError, evaluate, parse_measure,
                    rank_runs, read_qrels, read_run, solve)
from maxent.cli.evaluate import main as evaluate_main
from maxent.trec import LONG_TOKEN, MAX_GRADE

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"


def _pytrec(qrels: Path, run: Path, measures: set[str]) -> dict:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with open(qrels) as fq, open(run) as fr:
        q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
    return pytrec_eval.RelevanceEvaluator(q, measures).evaluate(r)


def _values(frame) -> dict[str, float]:
    return dict(zip(frame["measure"], frame["value"]))


# ------------------------------------------------------------------- 1. silent wrong numbers
@pytest.mark.parametrize("name, line, token", [
    ("qrels_grade_40000.txt", 1, "40000"),                   # int16 storage would wrap it to -25536
    ("qrels_grade_overflow.txt", 1, "99999999999999999999"),  # not an OverflowError
    ("qrels_grade_3e9.txt", 2, "3000000000"),                 # counts per grade would need 24 GB
])
def test_grades_out_of_range_are_refused(name, line, token, capsys):
    with pytest.raises(InputError) as exc:
        read_qrels(BAD / name)
    assert (exc.value.path, exc.value.line) == (str(BAD / name), line)
    assert f"grade '{token}' is out of range" in exc.value.reason and str(MAX_GRADE) in exc.value.reason
    assert evaluate_main([str(BAD / name), str(BAD / "run_d1_first.txt"), "-m", "map"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {BAD / name}:{line}: grade") and "Traceback" not in err


def test_largest_grade_and_huge_negative_grade_are_exact():
    # d1 graded 255 (the largest accepted), d2 0, d3 -1e20 (non-relevant, as any negative
    # grade in trec_eval); d1 is ranked first: map 1, ndcg 1
    # (hand: the only relevant document is first, so AP = 1 and DCG = IDCG; pytrec_eval
    # cannot read the -1e20 grade: its parser overflows)
    got = _values(evaluate(BAD / "qrels_grade_255.txt", BAD / "run_d1_first.txt", ["map", "ndcg", "num_rel"]))
    assert got == {"AP": 1.0, "nDCG": 1.0, "NumRel": 1.0}
    assert read_qrels(BAD / "qrels_grade_255.txt").max_grade == 255


def test_grades_beyond_int16_never_wrap_in_ranked_lists():
    with pytest.raises(ParameterError, match="above the largest supported"):
        from maxent import RankedLists
        RankedLists.from_grades([[40000, 0]], [[1, 0]])


def test_byte_order_mark_is_read_through(capsys):
    # qrels: d1, d2 relevant; run ranks d1, d2: AP = (1/1 + 2/2) / 2 = 1 (hand). A BOM read
    # as part of topic "1" on the first line would drop one judgement (map 0.5) and, in a
    # run, the first line, silently.
    # trec_eval 9 keeps the mark in the first qid and drops that line: a warning says so
    with pytest.warns(InputWarning, match="qrels_bom.txt: starts with a UTF-8 byte-order mark.*"
                                          "trec_eval 9 drops this line"):
        q = read_qrels(BAD / "qrels_bom.txt")
    assert q.topics == ["1"] and q.docnos["1"].tolist() == [b"d1", b"d2"]
    with pytest.warns(InputWarning, match="run_bom.txt"):
        r = read_run(BAD / "run_bom.txt")
    assert r.qid.tolist() == [b"1", b"1"] and r.line.tolist() == [1, 2]
    with pytest.warns(InputWarning):
        assert _values(evaluate(BAD / "qrels_bom.txt", BAD / "run_bom.txt", ["map"])) == {"AP": 1.0}
        assert _values(evaluate(BAD / "qrels_bom.txt", BAD / "run_d1_first.txt", ["map"])) == {"AP": 1.0}
    assert evaluate_main([str(BAD / "qrels_bom.txt"), str(BAD / "run_bom.txt"), "-m", "map"]) == 0
    out = capsys.readouterr()
    assert "map                   \tall\t1.0000" in out.out
    err = out.err.splitlines()
    assert len(err) == 2 and all(e.startswith("warning: ") and "trec_eval 9 drops this line" in e for e in err)
    assert "qrels_bom.txt" in err[0] and "run_bom.txt" in err[1]


def test_cli_reports_run_topics_it_ignores(tmp_path, capsys):
    # a run line whose topic the qrels lack is not silently dropped: stderr says so
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n7 Q0 d1 1 2.0 r\n")
    assert evaluate_main([str(BAD / "qrels_bom.txt"), str(run), "-m", "map"]) == 0
    assert "warning: run run.txt: 1 topic(s) not in the qrels, ignored: 7" in capsys.readouterr().err


def test_gap_weight_on_a_grade_the_qrels_lack_is_refused():
    q = read_qrels(BAD / "qrels_graded_0_2.txt")
    lists = rank_runs([read_run(BAD / "run_d1_first.txt")], q)
    with pytest.raises(ParameterError, match=r"weight g_3 on grade 3, but the qrels' grades go up to 2"):
        parse_measure("GAP(g=0,0,1)").value(lists)
    # weights on grades the qrels have are fine: g = (0, 1) is AP at threshold 2; d1 (grade 2)
    # is ranked first and is the only grade-2 document: 1 (hand)
    assert parse_measure("GAP(g=0,1)").value(lists).tolist() == [1.0]


# ------------------------------------------------------------------ 2. crashes and memory
def test_long_docnos_keep_memory_bounded_and_values_exact():
    # two 1001-byte docnos tie on score 97 at ranks 4-5; trec_eval puts 'b...' (relevant)
    # first (docno descending): AP = (1/1 + 2/4) / 3 = 0.5 (hand; pytrec_eval agrees)
    run, qrels = BAD / "run_long_docno.txt", BAD / "qrels_long_docno.txt"
    r = read_run(run)
    assert r.docno.dtype.itemsize <= LONG_TOKEN + 9
    got = _values(evaluate(qrels, run, ["map", "ndcg", "P_5"]))
    ref = _pytrec(qrels, run, {"map", "ndcg", "P_5"})["1"]
    assert got["AP"] == 0.5 == ref["map"]
    assert abs(got["nDCG"] - ref["ndcg"]) < 1e-12 and got["P@5"] == ref["P_5"] == 0.4


def test_one_huge_docno_does_not_multiply_memory(tmp_path):
    # 30,000 lines and one 100 KB docno: plain fixed-width storage would need 3 GB (30,000 x 100 KB)
    lines = [f"1 Q0 d{i} {i + 1} {30000 - i} r" for i in range(30000)]
    lines[5] = f"1 Q0 {'x' * 100_000} 6 29995 r"
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        r = read_run(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(r) == 30000 and r.docno.dtype.itemsize == LONG_TOKEN + 9
    assert peak < 40 * size  # about 16 MB for this 1 MB file, not the 3 GB of plain fixed width


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
    assert capsys.readouterr().out == "runid                 \tall\ttag\nnum_q                 \tall\t1\n"
    assert evaluate_main([str(BAD / "qrels_ok.txt"), str(BAD / "run_ok.txt"), "-m", "num_q",
                          "-m", "map"]) == 0
    # D1 (relevant) ranked first, R = 1: map 1 (hand)
    assert capsys.readouterr().out.endswith("map                   \tall\t1.0000\n")


def test_solve_accepts_a_name_and_refuses_other_objects():
    lists = rank_runs([read_run(BAD / "run_ok.txt")], read_qrels(BAD / "qrels_ok.txt"))
    by_name = solve("AP", [1.0], lists)
    by_object = solve(parse_measure("AP"), [1.0], lists)
    assert np.array_equal(by_name.p, by_object.p) and by_name.status.tolist() == by_object.status.tolist()
    with pytest.raises(ParameterError, match="expected a Metric object or a measure name, got int 3"):
        solve(3, [1.0], lists)


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


# ------------------------------------------------- 1 and 5: output folders of the analyses
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Two bundled runs cut to three topics, with their qrels (a fast analysis)."""
    import gzip

    d = tmp_path_factory.mktemp("small")
    (d / "runs").mkdir()
    topics = {"1", "2", "3"}
    for name in ("BITEM_df", "T5R1"):
        lines = gzip.open(ROOT / "trec_runs" / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in topics) + "\n")
    qrels = (ROOT / "trec_runs" / "qrels-rnd1.txt").read_text().splitlines()
    (d / "qrels.txt").write_text("\n".join(l for l in qrels if l.split()[0] in topics) + "\n")
    return d


def _analysis(small, out, *extra):
    from analysis import maxent as mx

    return mx.main(["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--out", str(out),
                    "--no-progress", "--depth", "100", "--metrics", "AP", "--threshold", "1", *extra])


def test_second_analysis_on_a_folder_in_use_is_refused(small, tmp_path, capsys):
    from analysis import _cli

    with _cli.own_output(tmp_path, ()):                 # as a first analysis running there
        assert _analysis(small, tmp_path) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {tmp_path}: output folder in use by another analysis (pid {os.getpid()})")
        assert not (tmp_path / "summary.csv").exists() and not (tmp_path / "chunks").exists()
    assert _analysis(small, tmp_path) == 0              # free again once the first one ends
    assert (tmp_path / "summary.csv").exists()


def test_lock_is_held_by_a_running_process(small, tmp_path):
    # a real concurrent run: the second process is refused while the first holds the folder
    # (the lock dies with its process, so a SIGKILLed run never leaves the folder locked)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from analysis import _cli\n"
         f"with _cli.own_output(__import__('pathlib').Path({str(tmp_path)!r}), ()):\n"
         "    print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = subprocess.run([sys.executable, "-m", "analysis.maxent", "--runs", str(small / "runs"),
                               "--qrels", str(small / "qrels.txt"), "--out", str(tmp_path), "--metrics", "AP"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and f"output folder in use by another analysis (pid {holder.pid})" in proc.stderr
    finally:
        holder.kill()
        holder.wait()
    assert _analysis(small, tmp_path) == 0


def test_stale_outputs_are_removed(small, tmp_path, monkeypatch, capsys):
    from analysis import _instances as mx  # the per-run job of the analyses' shared plumbing

    # an informativeness.csv of an earlier --predict all run must not survive a later run
    (tmp_path / "informativeness.csv").write_text("from,threshold\nold,1\n")
    (tmp_path / "fig_old.png").write_bytes(b"old")
    assert _analysis(small, tmp_path) == 0
    assert not (tmp_path / "informativeness.csv").exists() and not (tmp_path / "fig_old.png").exists()
    # a re-run with other settings killed before its tables: no old table beside its config
    real = mx._job
    monkeypatch.setattr(mx, "_job", lambda job: (_ for _ in ()).throw(KeyboardInterrupt))
    assert _analysis(small, tmp_path, "--alignment", "rank") == 130
    assert '"alignment": "rank"' in (tmp_path / "config.json").read_text()
    assert not any((tmp_path / f).exists() for f in ("instances.csv", "summary.csv", "fig_p10_inferred.png"))
    # --resume with settings other than the folder's is refused before anything is deleted
    monkeypatch.setattr(mx, "_job", real)
    assert _analysis(small, tmp_path, "--alignment", "rank") == 0
    assert _analysis(small, tmp_path, "--resume") == 1
    assert "other settings" in capsys.readouterr().err and (tmp_path / "summary.csv").exists()


def test_resume_says_what_it_skipped(small, tmp_path, monkeypatch, capsys):
    from analysis import _instances as mx  # the per-run job of the analyses' shared plumbing

    real, calls = mx._job, {"n": 0}

    def second_fails(job):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(mx, "_job", second_fails)
    assert _analysis(small, tmp_path) == 130
    monkeypatch.setattr(mx, "_job", real)
    capsys.readouterr()
    assert _analysis(small, tmp_path, "--resume") == 0
    assert "resume: 1 of 2 runs already done, skipped: BITEM_df" in capsys.readouterr().err


def test_outputs_follow_the_umask(small, tmp_path):
    from analysis import _cli

    old = os.umask(0o022)
    try:
        mode = _cli._umask_mode()
    finally:
        os.umask(old)
    assert mode == 0o644
    saved = _cli._FILE_MODE
    _cli._FILE_MODE = mode
    try:
        assert _analysis(small, tmp_path) == 0
    finally:
        _cli._FILE_MODE = saved
    for f in ("summary.csv", "instances.csv", "config.json", "fig_p10_vs_metric.png"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o644, f  # the umask's mode, not mkstemp's 0600


def test_metric_vs_p10_titles_state_a_correlation(small, tmp_path, monkeypatch):
    # fig_p10_vs_metric plots P@10 against another metric: an "RMS" between two different
    # metrics means nothing; the titles give Kendall's tau with P@10
    from analysis import _cli

    titles = {}
    real = _cli.save_figure

    def keep_titles(fig, path, **kw):
        titles[path.name] = [ax.get_title() for ax in fig.axes]
        real(fig, path, **kw)

    monkeypatch.setattr(_cli, "save_figure", keep_titles)
    assert _analysis(small, tmp_path) == 0
    assert titles["fig_p10_vs_metric.png"] and all(
        t.startswith("AP: Kendall tau with P@10 ") and "RMS" not in t for t in titles["fig_p10_vs_metric.png"])


def test_empty_metric_list_is_a_clear_error(small, tmp_path, capsys):
    assert _analysis(small, tmp_path, "--metrics", "") == 1
    assert capsys.readouterr().err == "error: --metrics and --predict need at least one measure name\n"


def test_analysis_with_a_huge_grade_is_a_clear_error(tmp_path, capsys):
    # qrels `1 0 d1 40000` must stop analysis.maxent with the line, not a MemoryError of many GiB
    from analysis import maxent as mx

    assert mx.main(["--runs", str(BAD / "run_d1_first.txt"), "--qrels", str(BAD / "qrels_grade_40000.txt"),
                    "--out", str(tmp_path), "--no-progress"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {BAD / 'qrels_grade_40000.txt'}:1: grade '40000' is out of range")


# ------------------------------------------------------------------------------ 4. start-up
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


def test_score_parsing_fast_path_equals_float():
    # the vectorised parser (also for 16-19 digit scores, which most of the bundled runs'
    # scores have) must give exactly float(text); oracle: Python's correctly rounded float()
    from tests._trec_numpy import _decimal_fast_path

    rng = np.random.default_rng(13)
    texts = []
    for _ in range(20000):
        nd = int(rng.integers(1, 20))
        digits = "".join(map(str, rng.integers(0, 10, nd)))
        k = int(rng.integers(0, nd + 1))
        t = digits[:k] + "." + digits[k:] if rng.random() < 0.9 else digits
        texts.append(("-" if rng.random() < 0.3 else "") + t)
    # exact half-way cases between two doubles must not be rounded twice
    texts += ["9007199254740993", "0.9007199254740993", "4503599627370497.5", "1.000000000000000111",
              "0.16666666666666666", "-0.48203300482513390", "9999999999999999999"]
    W = max(map(len, texts))
    mat = np.zeros((len(texts), W), dtype=np.uint8)
    for i, t in enumerate(texts):
        b = t.encode()
        mat[i, W - len(b):] = np.frombuffer(b, dtype=np.uint8)
    value, ok = _decimal_fast_path(mat)
    expected = np.array([float(t) if t.strip("-.") else np.nan for t in texts])
    assert ok.mean() > 0.95
    assert np.array_equal(value[ok], expected[ok])
    assert not ok[texts.index("9007199254740993")]  # a half-way case goes to the exact path


def test_analysis_reports_run_topics_it_ignores(tmp_path, capsys):
    from analysis import maxent as mx

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n7 Q0 d1 1 2.0 r\n")
    assert mx.main(["--runs", str(run), "--qrels", str(BAD / "qrels_bom.txt"), "--out", str(tmp_path / "out"),
                    "--no-progress", "--metrics", "AP"]) == 0
    assert "warning: run run.txt: 1 topic(s) not in the qrels, ignored: 7" in capsys.readouterr().err


def test_long_duplicate_docno_is_reported_readably(tmp_path):
    path = tmp_path / "run.txt"
    long = "u" * 300
    path.write_text(f"1 Q0 {long} 1 2.0 r\n1 Q0 d2 2 1.0 r\n1 Q0 {long} 3 0.5 r\n")
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert exc.value.line == 3
    assert exc.value.reason == f"duplicate docno '{'u' * LONG_TOKEN}...' in topic 1 (first at line 1)"


def test_learning_clears_stale_outputs_and_keeps_records(tmp_path, capsys):
    from analysis.learning import main as learning_main

    out = tmp_path / "res"
    out.mkdir()
    (out / "claims.csv").write_text("old\n")                 # from an earlier run's other parts
    (out / "pairs.png").write_bytes(b"old")
    args = ["--dataset", "artificial", "--n-queries", "30", "--docs-per-query", "6", "--n-features", "3",
            "--epochs", "1", "--learning-rates", "0.1", "--train-metrics", "AP", "--test-metrics", "AP",
            "--workers", "1", "--no-progress", "--parts", "table", "--out", str(out)]
    assert learning_main(args) == 0
    assert not (out / "claims.csv").exists() or (out / "claims.csv").read_text() != "old\n"
    assert not (out / "pairs.png").exists() and (out / "table.csv").exists()
    records = sorted(p.name for p in (out / "runs").glob("*.json"))
    capsys.readouterr()
    assert learning_main(args + ["--resume"]) == 0            # records survive, and are reported
    assert sorted(p.name for p in (out / "runs").glob("*.json")) == records
    assert f"resume: {len(records)} of {len(records)} training runs already done" in capsys.readouterr().err


def test_active_eval_output_folder_is_locked_too(tmp_path, capsys):
    from analysis import _cli
    from analysis.active_eval import main as active_main

    with _cli.own_output(tmp_path, ()):
        assert active_main(["--out", str(tmp_path), "--no-progress"]) == 1
    assert "output folder in use by another analysis" in capsys.readouterr().err
