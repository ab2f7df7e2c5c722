"""``python -m analysis.report``: regenerate the documentation's tables from the committed evidence.

Every table in README.md and ``docs/**/*.md`` sits between ``<!-- report:NAME -->`` and
``<!-- /report:NAME -->`` (NAME in :data:`TABLES`) and is built only from the small files under
``results/``. ``--check`` rewrites nothing, prints a diff and exits 1 if a file would change.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis import _cli
from analysis._cli import md_table as _md
from analysis._provenance import RESULTS
from maxent.errors import InputError

NAMES = {"trec_runs": "bundled sample (TREC-COVID r1, 20 runs)", "trec_covid_r1": "TREC-COVID round 1",
         "robust03": "Robust 2003", "trec_dl19_passage": "TREC DL 2019 passage"}
ORDER = tuple(NAMES)
_MARK = re.compile(r"<!--\s*(/?)report:([A-Za-z0-9_-]+)\s*-->")


def _read(results: Path, *parts: str, **kw) -> pd.DataFrame:
    path = results.joinpath(*parts)
    if not path.exists():
        raise InputError(path, None, "evidence file missing; run `python -m analysis.evidence` "
                                     "and `python -m analysis.significance`")
    return pd.read_csv(path, keep_default_na=False, na_values=[""], **kw)


def _ci(x, lo, hi, digits=4) -> str:
    return f"{x:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _p(p: float) -> str:
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def _thr(t) -> str:
    return f">= {int(t)}"


def _present(results: Path, analysis: str, name: str) -> list[str]:
    """The collections, in :data:`ORDER`, whose ``results/<analysis>/<d>/<name>`` exists."""
    return [d for d in ORDER if (results / analysis / d / name).exists()]


def _short(metric: str) -> str:
    """AP(rel=2) -> AP: the threshold column already says which relevance AP binarises at."""
    return re.sub(r"\(rel=\d+\)", "", metric)


def headline(results: Path) -> str:
    """PR-curve RMS by metric on the four collections (threshold 1; DL 2019 at 2), 95% intervals."""
    t1 = _read(results, "significance", "all", "table1.csv")
    rows = []
    for d in ORDER:
        g = t1[t1["dataset"] == d]
        t = g["threshold"].min()
        g = g[g["threshold"] == t].assign(metric=lambda x: x["metric"].map(_short)).set_index("metric")
        rows.append([NAMES[d], _thr(t), int(g["lists"].iloc[0])]
                    + [_ci(g.loc[m, "rms"], g.loc[m, "rms_lo"], g.loc[m, "rms_hi"]) for m in ("AP", "nDCG", "GAP")])
    return _md(["collection", "relevant", "lists", "AP", "nDCG", "GAP(uniform g)"], rows)


def table1(results: Path) -> str:
    """Yilmaz & Robertson (2010) Table 1 analogue per collection, with P@10 prediction."""
    t1 = _read(results, "significance", "all", "table1.csv")
    rows = []
    for d in ORDER:
        s = _read(results, "maxent", d, "summary.csv")
        for i, r in enumerate(s.to_dict("records")):
            c = t1[(t1["dataset"] == d) & (t1["metric"] == r["metric"]) & (t1["threshold"] == r["threshold"])].iloc[0]
            rows.append([NAMES[d] if i == 0 else "",
                         _short(r["metric"]), _thr(r["threshold"]), int(r["instances"]),
                         _ci(c["rms"], c["rms_lo"], c["rms_hi"]), f"{r['mae']:.4f}",
                         f"{r['P@10 rms (topics)']:.4f}", f"{r['P@10 rms (runs)']:.4f}", f"{r['P@10 tau (runs)']:.3f}",
                         int(r["not solved"])])
    return _md(["collection", "metric", "relevant", "lists", "PR RMS [95% CI]", "PR MAE", "P@10 RMS (topics)",
                "P@10 RMS (runs)", "P@10 tau (runs)", "not solved"], rows)


def _paired(results: Path, quantities: tuple[str, ...]) -> str:
    p = _read(results, "significance", "all", "paired.csv")
    p = p[p["quantity"].isin(quantities)]
    rows = [[NAMES[d], r["quantity"] + f" (per {r['unit']})", _thr(r["threshold"]), f"{r['a']} - {r['b']}",
             int(r["units"]), _ci(r["diff"], r["diff_lo"], r["diff_hi"]), _p(r["p_t_holm"]),
             _p(r["p_wilcoxon_holm"]), _p(r["p_sign_holm"]), r["verdict"]]
            for d in ORDER for r in p[p["dataset"] == d].to_dict("records")]
    return _md(["collection", "quantity", "relevant", "difference", "n", "mean difference [95% CI]",
                "t (Holm)", "Wilcoxon (Holm)", "sign (Holm)", "verdict"], rows)


def paired_pr(results: Path) -> str:
    """Paired tests over topics of the per-list PR-curve RMS."""
    return _paired(results, ("PR RMS",))


def paired_p10(results: Path) -> str:
    """Paired tests of the P@10 prediction errors, per topic and per run."""
    return _paired(results, ("P@10 abs error", "P@10 run-mean abs error"))


def protocol(results: Path) -> str:
    """P@10 inferred from AP and nDCG under each count constraint and gain, on common lists."""
    pr = _read(results, "significance", "all", "protocol.csv")
    rows = [[NAMES[d], _thr(r["threshold"]), int(r["lists"]), r["metric"], r["count"],
             f"{r['rms_topics']:.4f}", f"{r['rms_runs']:.4f}", f"{r['tau_runs']:.3f}"]
            for d in ORDER for r in pr[pr["dataset"] == d].to_dict("records")]
    return _md(["collection", "relevant", "lists", "inferred from", "count constraint", "P@10 RMS (topics)",
                "P@10 RMS (runs)", "P@10 tau (runs)"], rows)


def protocol_tests(results: Path) -> str:
    """Per-run paired tests of AP against nDCG under each count constraint (Holm over collections)."""
    p = _read(results, "significance", "all", "protocol_tests.csv")
    rows = [[NAMES[r["dataset"]], f"{r['a']} - {r['b']}", int(r["units"]), int(r["lists"]),
             _ci(r["diff"], r["diff_lo"], r["diff_hi"]), _p(r["p_t_holm"]), r["verdict"]]
            for d in ORDER for r in p[p["dataset"] == d].to_dict("records")]
    return _md(["collection", "run-mean absolute P@10 error", "runs", "lists", "mean difference [95% CI]", "t (Holm)",
                "verdict"], rows)


def alignment(results: Path) -> str:
    """PR RMS with recall- and rank-aligned errors; the inferred P@10 does not depend on it."""
    a = _read(results, "significance", "all", "alignment.csv")
    rows = [[NAMES[r["dataset"]], _short(r["metric"]), _thr(r["threshold"]), int(r["lists"]),
             f"{r['rms_recall']:.4f}", f"{r['rms_rank']:.4f}", f"{r['max_abs_diff_pred_p10']:.1e}"]
            for d in ORDER for r in a[a["dataset"] == d].to_dict("records")]
    return _md(["collection", "metric", "relevant", "lists", "PR RMS, recall-aligned", "PR RMS, rank-aligned",
                "max change of inferred P@10"], rows)


def gap_sweep(results: Path) -> str:
    """Robertson, Kanoulas & Yilmaz (2010) Fig. 2 analogue: best g, uniform g, AP, nDCG per threshold."""
    rows = []
    for d in _present(results, "gap_thresholds", "sweep.csv"):
        s = _read(results, "gap_thresholds", d, "sweep.csv", dtype={"g": str})
        gap = s[s["metric"] == "GAP"]
        c = len(gap["g"].iloc[0].split(","))
        for t in sorted(s["threshold"].unique()):
            g = gap[gap["threshold"] == t]
            best = g.loc[g["rms"].idxmin()]
            uni = g[g["g"].map(lambda x: all(abs(float(v) - 1 / c) < 1e-9 for v in x.split(",")))]
            ap = g[g["g"].map(lambda x: [float(v) for v in x.split(",")] == [1.0 if j == t - 1 else 0.0 for j in range(c)])]
            ref = s[(s["metric"] != "GAP") & (s["threshold"] == t)].iloc[0]
            rows.append([NAMES[d], _thr(t), int(best["instances"]), f"({best['g']}): {best['rms']:.4f}",
                         f"{uni['rms'].iloc[0]:.4f}" if len(uni) else "(not on the grid)",
                         f"{ap['rms'].iloc[0]:.4f}" if len(ap) else "", f"{ref['rms']:.4f}"])
    return _md(["collection", "PR curve at", "lists", "best g: RMS", "GAP(uniform g)", "AP at that threshold",
                "nDCG"], rows)


def discriminative(results: Path) -> str:
    """Share of run pairs significant (paired bootstrap, alpha 0.05) with Wilson 95% intervals."""
    dp = _read(results, "significance", "all", "discriminative.csv")
    rows = []
    for d in ORDER:
        for r in dp[dp["dataset"] == d].to_dict("records"):
            tested = not pd.isna(r.get("p_mcnemar"))
            rows.append([NAMES[d], _gname(r["metric"]), f"{int(r['significant'])} / {int(r['pairs'])}",
                         _ci(r["fraction"], r["lo"], r["hi"], 3),
                         f"{int(r['only_this'])} / {int(r['only_nDCG'])}" if tested else "",
                         _p(r["p_mcnemar_holm"]) if tested else "",
                         _gname(r["verdict"]) if tested else ""])
    return _md(["collection", "metric", "significant pairs", "fraction [Wilson 95%]",
                "significant only under this / only under nDCG", "McNemar p (Holm)", "verdict"], rows)


def _gname(text: str) -> str:
    """GAP(g=0.333333333333,...) -> GAP(g=0.333,...): three significant digits."""
    return re.sub(r"\d+\.\d{4,}", lambda m: f"{float(m.group()):.3g}", text)


ACTIVE_BUDGETS = {"trec_runs": (5, 10, 20), "trec_covid_r1": (5, 10, 20), "robust03": (10, 20, 40),
                  "trec_dl19_passage": (5, 10, 20)}


def _saved(r) -> str:
    if pd.isna(r["saved"]):
        return "whole pool labelled"
    if r["saved_side"] == ">":
        return f">= {100 * r['saved']:+.0f}%"
    if r["saved_side"] == "<":
        return f"<= {100 * r['saved']:+.0f}%"
    return f"{100 * r['saved']:+.0f}% [{100 * r['saved_lo']:+.0f}, {100 * r['saved_hi']:+.0f}]"


def active(results: Path) -> str:
    """Labelling effort active evaluation saves against passive at equal error (read off the curves)."""
    rows = []
    for d in _present(results, "active_eval", "summary.csv"):
        s = _read(results, "active_eval", d, "summary.csv", dtype={"saved_side": str}).fillna({"saved_side": ""})
        s = s[s["budget"].isin(ACTIVE_BUDGETS[d])]
        for (exp, metric), g in s.groupby(["experiment", "metric"], sort=False):
            cells = [f"{b:g}: {_saved(r)}" for b, r in zip(g["budget"], g.to_dict("records"))]
            rows.append([NAMES[d], exp, metric, "; ".join(cells)])
    return _md(["collection", "experiment", "metric", "budget: effort saved [95% interval]"], rows)


def active_pool(results: Path) -> str:
    """How much of the pool each budget labels: distinct queries judged (mean over repetitions)."""
    rows = []
    for d in _present(results, "active_eval", "summary.csv"):
        s = _read(results, "active_eval", d, "summary.csv")
        for exp, metric in (("errors", s["metric"].iloc[0]), ("selection", s["metric"].iloc[0])):
            g = s[(s["experiment"] == exp) & (s["metric"] == metric) & s["budget"].isin(ACTIVE_BUDGETS[d])]
            n = int(g["pool_queries"].iloc[0])
            cells = [f"{b:g}: {r['queries_passive']:.1f} ({r['queries_passive'] / n:.0%}) / "
                     f"{r['queries_active']:.1f} ({r['queries_active'] / n:.0%})"
                     for b, r in zip(g["budget"], g.to_dict("records"))]
            rows.append([NAMES[d], n, exp, metric, "; ".join(cells)])
    return _md(["collection", "pool queries", "experiment", "metric",
                "budget: distinct queries labelled, passive / active (share of the pool)"], rows)


def evidence(results: Path) -> str:
    """Every evidence folder with the command that made it and its wall time."""
    rows = []
    for prov in sorted(results.rglob("PROVENANCE.json")):
        p = json.loads(prov.read_text())
        wall = f"{p['wall_time_s']:.0f} s" + (" (last, resumed pass)" if p.get("resumed") else "")
        rows.append([f"`{prov.parent.relative_to(results).as_posix()}`", f"`{p['command']}`", wall, p["date"][:10]])
    return _md(["results/", "command", "wall time", "date"], rows)


def _machine(results: Path, *parts: str) -> str:
    p = json.loads(results.joinpath(*parts, "PROVENANCE.json").read_text())
    m = p["machine"]
    return f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Python {m['python']}"


def bench_throughput(results: Path) -> str:
    """The compiled solver per problem, by metric, list length and threads, with its ratio to
    nDCG: one row per configuration, over the benchmark's runs."""
    t = _read(results, "benchmarks", "solver", "bench_solver", "throughput.csv")
    key = ["collection", "N", "threads", "metric"]
    g = t.groupby(key, sort=False)
    s = g.agg(problems=("problems", "max"), runs=("seconds", "size"), ms_lo=("ms_per_problem", "min"),
              ms_hi=("ms_per_problem", "max"), fast=("ratio_to_nDCG", "median"),
              paired=("paired_ratio_to_nDCG", "median"), paired_lo=("paired_ratio_to_nDCG", "min"),
              paired_hi=("paired_ratio_to_nDCG", "max"), nit=("mean_nit", "median"),
              method=("method", "last"), not_converged=("not_converged", "max"))
    rows = [[c, int(n), m, int(w), int(r["problems"]), int(r["runs"]), f"{r['ms_lo']:.3f}-{r['ms_hi']:.3f}",
             f"{r['fast']:.2f}", f"{r['paired']:.2f} ({r['paired_lo']:.2f}-{r['paired_hi']:.2f})",
             f"{r['nit']:.2f}", r["method"], int(r["not_converged"])]
            for (c, n, w, m), r in s.iterrows()]
    return (f"Machine: {_machine(results, 'benchmarks', 'solver', 'bench_solver')}.\n\n"
            + _md(["lists from", "N", "metric", "threads", "problems", "runs", "ms / problem: range over the runs",
                   "x nDCG: median", "x nDCG, paired: median (range)", "mean iterations", "method",
                   "not converged (most in a run)"], rows))


def bench_engines(results: Path) -> str:
    """The compiled engine's builds against the former numba kernels, same problems, one
    process, alternating; the build the import chose first."""
    t = _read(results, "benchmarks", "solver", "engines", "engines.csv")
    key = ["collection", "N", "metric", "threads"]
    w = t.pivot_table(index=key, columns="engine", values="cpu_ms_per_problem", aggfunc="min").reset_index()
    chosen = t.loc[t.chosen.astype(bool), "engine"].iloc[0]
    builds = [chosen] + [b for b in ("avx512", "avx2", "baseline") if b in w.columns and b != chosen]
    rows = [[r["collection"], int(r["N"]), r["metric"], int(r["threads"]), f"{r['numba']:.4f}"]
            + [f"{r[b]:.4f}" for b in builds] + [f"{r[b] / r['numba']:.2f}" for b in builds]
            for r in w.to_dict("records")]
    return (f"Machine: {_machine(results, 'benchmarks', 'solver', 'engines')}.\n\n"
            + _md(["lists from", "N", "metric", "threads", "numba CPU ms / problem"]
                  + [b + " (chosen)" * (b == chosen) for b in builds] + [f"{b} / numba" for b in builds], rows))


def bench_startup(results: Path) -> str:
    """Import and first solve in a fresh process; single and batched solves against cvxpy; the main
    job and single calls against the numba engine's checkout."""
    st = _read(results, "benchmarks", "solver", "bench_solver", "startup.csv")
    ps = _read(results, "benchmarks", "solver", "bench_solver", "per_solve.csv")
    mj = _read(results, "benchmarks", "solver", "main_job", "main_job.csv")
    rows = [["fresh process: import maxent and solve each metric once (s)",
             f"{st['process_wall'].min():.2f}-{st['process_wall'].max():.2f}"]]
    for (metric, N), g in ps.groupby(["metric", "N"], sort=False):     # one row per benchmark run
        runs = f" over {len(g)} runs" if len(g) > 1 else ""
        rows.append([f"{metric} at N = {int(N)}: single call (ms), x faster than cvxpy",
                     f"{g['single_ms'].min():.3f}-{g['single_ms'].max():.3f} ms, "
                     f"{g['single_ratio'].min():.0f}-{g['single_ratio'].max():.0f}x{runs}"])
        rows.append([f"{metric} at N = {int(N)}: batched, ms per problem, x faster than cvxpy",
                     f"{g['batched_ms'].min():.4f}-{g['batched_ms'].max():.4f} ms, "
                     f"{g['batched_ratio'].min():.0f}-{g['batched_ratio'].max():.0f}x{runs}"])
    this = mj[mj["checkout"] == "this"]["seconds"]
    rows.append(["`python -m analysis.maxent` on the bundled sample, wall time (s)",
                 f"{this.min():.1f}-{this.max():.1f} over {len(this)} runs"])
    other = mj[mj["checkout"] == "against"]["seconds"]
    if len(other):
        rows.append(["the same job of the former numba engine's checkout, runs alternating (s)",
                     f"{other.min():.1f}-{other.max():.1f} over {len(other)} runs"])
    sc = _read(results, "benchmarks", "solver", "single_call", "single_call.csv")
    for (metric, N), g in sc.groupby(["metric", "N"], sort=False):
        ours, numba = g[g["checkout"] == "this"]["median_ms"], g[g["checkout"] == "against"]["median_ms"]
        rows.append([f"{metric} at N = {int(N)}, one list per call, the whole solver in a fresh process "
                     f"(median over {int(g['problems'].iloc[0])} lists, ms): this checkout; the numba "
                     "engine's checkout, runs alternating",
                     f"{ours.min():.3f}-{ours.max():.3f} (median {ours.median():.3f}); "
                     f"{numba.min():.3f}-{numba.max():.3f} (median {numba.median():.3f}) over {len(ours)} runs"])
    return (f"Machine: {_machine(results, 'benchmarks', 'solver', 'bench_solver')}.\n\n"
            + _md(["what", "measured"], rows))


def bench_build(results: Path) -> str:
    """``pip install --no-deps`` of the checkout into a fresh venv, against another checkout."""
    t = _read(results, "benchmarks", "install", "build.csv")
    rows = []
    for label, g in t.groupby("checkout", sort=False):
        name = "this commit" if label == "this" else "the checkout compared, runs alternating"
        rows.append([name, f"{g['seconds'].min():.0f}-{g['seconds'].max():.0f}",
                     f"{g['cpu_seconds'].min():.0f}-{g['cpu_seconds'].max():.0f}", len(g)])
    return (f"Machine: {_machine(results, 'benchmarks', 'install')}.\n\n"
            + _md(["build of", "wall s", "CPU s", "runs"], rows))


def bench_install(results: Path) -> str:
    """README's install (``pip install -e ".[test]"``, dependencies included, empty pip cache) of
    a fresh clone, against another checkout's."""
    t = _read(results, "benchmarks", "install", "readme", "install.csv")
    this = t[t["checkout"] == "this"].reset_index(drop=True)
    other = t[t["checkout"] == "against"].reset_index(drop=True)

    def split(r):
        return f"{r['seconds']:.0f} ({r['download_s']:.0f} / {r['build_s']:.0f} / {r['install_s']:.0f})"

    rows = [[int(a["run"]), split(a), split(b), f"{a['seconds'] / b['seconds']:.2f}"]
            for a, b in zip(this.to_dict("records"), other.to_dict("records"))]
    return (f"Machine: {_machine(results, 'benchmarks', 'install', 'readme')}.\n\n"
            + _md(["run", "this commit, wall s (download / build / install)",
                   "the checkout compared, wall s (download / build / install)", "ratio"], rows))


def bench_scale(results: Path) -> str:
    """``maxent.evaluate`` against the pytrec_eval script on MS MARCO-shaped synthetic data."""
    t = _read(results, "benchmarks", "scale", "scale.csv")
    rows = [[int(r["topics"]), int(r["run_lines"]), r["command"], f"{r['ours_s']:.2f}",
             f"{r['ours_mib']:.0f}"]
            + ([f"{r['pytrec_eval_s']:.2f}", f"{r['pytrec_eval_mib']:.0f}", f"{r['speedup']:.1f}x"]
               if pd.notna(r.get("pytrec_eval_s")) else ["-"] * 3) for r in t.to_dict("records")]
    return (f"Machine: {_machine(results, 'benchmarks', 'scale')}.\n\n"
            + _md(["topics", "run lines", "command", "wall s", "MiB", "pytrec_eval wall s", "pytrec_eval MiB",
                   "speed-up"], rows))


def trec_eval_lines(results: Path) -> str:
    """``maxent evaluate -q`` beside trec_eval 9.0.7 and 10.0: lines identical per flag set,
    summed over the collections checked."""
    t = _read(results, "trec_eval", "lines.csv")
    g = t.groupby(["flags", "version"], sort=False).agg(
        collections=("collection", "nunique"), runs=("runs", "sum"), lines=("trec_eval_lines", "sum"),
        identical=("identical", "sum"), whole=("outputs_identical", "sum"))
    rows = [[f"`-q -m {flags}`" if flags != "families" else "`-q`, the bare families", version, int(r["collections"]),
             int(r["runs"]), int(r["lines"]), int(r["identical"]), f"{int(r['whole'])} / {int(r['runs'])}"]
            for (flags, version), r in g.iterrows()]
    return _md(["flags", "trec_eval", "collections", "runs", "lines printed", "identical lines",
                "identical outputs"], rows)


def bench_deep(results: Path) -> str:
    """Deep runs (and the bundled and 300,000-topic cases beside the checkout before the deep
    reader): ``maxent.evaluate`` against the pytrec_eval script, and where its time goes."""
    t = _read(results, "benchmarks", "deep", "scale.csv").to_dict("records")

    def s(v, fmt="{:.2f}"):
        return fmt.format(v) if pd.notna(v) else "-"

    rows = [[r["case"], int(r["run_lines"]), s(r["ours_s"]), s(r["ours_mib"], "{:.0f}"), s(r["pytrec_eval_s"]),
             s(r["pytrec_eval_mib"], "{:.0f}"), s(r["speedup"], "{:.1f}x"),
             s(r["ours_mib"] / r["pytrec_eval_mib"] if pd.notna(r.get("pytrec_eval_mib")) else None),
             s(r.get("file_ratio")), s(r.get("against_s")), s(r.get("ranx_s"), "{:.1f}"),
             s(r.get("ranx_warm_s"))] for r in t]
    deep = [r for r in t if pd.notna(r.get("read_s"))]
    split = [[r["case"], s(r["run_mb"], "{:.0f}"), s(r["cat_s"], "{:.3f}"), s(r["wc_s"], "{:.3f}"),
              s(r["import_s"]), s(r["qrels_s"]), s(r["read_s"]), s(r["read_mb_s"], "{:.0f}"),
              s(r.get("read_1_mb_s"), "{:.0f}"), s(r["rank_s"]), s(r["evaluate_s"])] for r in deep]
    return (f"Machine: {_machine(results, 'benchmarks', 'deep')}.\n\n"
            + _md(["case", "run lines", "wall s", "MiB", "pytrec_eval wall s", "pytrec_eval MiB", "speed-up",
                   "memory / pytrec_eval's", "memory / run file", "before the deep reader, wall s",
                   "ranx wall s", "ranx warm evaluate s"], rows)
            + "\n\nWhere the time goes, in process (median seconds), beside `cat RUN > /dev/null` and "
            "`wc -l RUN` of the same file:\n\n"
            + _md(["case", "run MB", "cat s", "wc -l s", "import s", "qrels s", "read s", "read MB/s",
                   "read MB/s, one thread", "rank s", "evaluate s"], split))


def bench_cli(results: Path) -> str:
    """The bundled runs beside the pytrec_eval script and a checkout of an earlier build,
    alternating fresh processes: medians."""
    t = _read(results, "benchmarks", "cli", "scale.csv").to_dict("records")
    rounds = json.loads(results.joinpath("benchmarks", "cli", "PROVENANCE.json").read_text())["repeat"]
    rows = [[r["case"], int(r["run_lines"]), f"{r['ours_s']:.2f}", f"{r['against_s']:.2f}", f"{r['pytrec_eval_s']:.2f}",
             f"{r['speedup']:.1f}x"] for r in t]
    return (f"Machine: {_machine(results, 'benchmarks', 'cli')}; {rounds} alternating rounds.\n\n"
            + _md(["case", "run lines", "wall s", "earlier build, wall s", "pytrec_eval wall s", "speed-up"], rows))


def mutation(results: Path) -> str:
    """Mutation score per file: killed / (killed + survived) over the sampled mutants."""
    t = _read(results, "mutation", "score.csv")
    rows = [[f"`{r['file']}`", int(r["sampled"]), int(r["killed"]), int(r["survived"]),
             f"{int(r['untested'])} / {int(r['timeout'])}", f"{100 * r['score']:.0f} %"] for r in t.to_dict("records")]
    return _md(["file", "sampled", "killed", "survived", "no test / timeout", "score"], rows)


def _sets(results: Path, name: str) -> pd.DataFrame:
    return _read(results, "metric_sets", "trec_runs", name)


def metric_sets_best(results: Path) -> str:
    """The ten sets with the lowest mean PR-curve RMS on the bundled sample, 95% intervals."""
    s = _sets(results, "sets.csv").sort_values(["pr rms", "set"]).head(10)
    rows = [[f"`{r['set']}`", int(r["size"]), int(r["instances"]), _ci(r["pr rms"], r["pr rms lo"], r["pr rms hi"]),
             f"{r['pool rms']:.4f}", int(r["not solved"])] for r in s.to_dict("records")]
    return _md(["set", "metrics", "lists", "PR RMS [95% CI]", "pool RMS", "not solved"], rows)


def metric_sets_status(results: Path) -> str:
    """The solver's statuses over every (set, list) problem, by the size of the set."""
    from maxent.solver import Status

    s = _sets(results, "sets.csv")
    cols = [x.value for x in Status]
    t = s.groupby("size")[["lists", *cols]].sum()
    rows = [[int(k), int(s["size"].eq(k).sum()), *(int(r[c]) for c in ["lists", *cols])] for k, r in t.iterrows()]
    return _md(["metrics per set", "sets", "problems", *cols], rows)


def metric_sets_singles(results: Path) -> str:
    """Every single metric of the pool and its best partner, on the bundled sample."""
    s = _sets(results, "sets.csv")
    one = s[s["size"] == 1].sort_values(["pr rms", "set"])
    rows = []
    for r in one.to_dict("records"):
        pairs = s[(s["size"] == 2) & s["set"].str.split(" + ", regex=False).map(lambda m, x=r["set"]: x in m)]
        best = pairs.sort_values(["pr rms", "set"]).iloc[0] if len(pairs) else None
        rows.append([f"`{r['set']}`", _ci(r["pr rms"], r["pr rms lo"], r["pr rms hi"]), f"{r['pool rms']:.4f}",
                     "" if best is None else f"`{best['set']}`",
                     "" if best is None else _ci(best["pr rms"], best["pr rms lo"], best["pr rms hi"]),
                     int(r["not solved"]) + (0 if best is None else int(best["not solved"]))])
    return _md(["metric", "PR RMS [95% CI]", "pool RMS", "best pair with it", "its PR RMS [95% CI]",
                "not solved (both)"], rows)


def metric_sets_greedy(results: Path) -> str:
    """Greedy forward selection by PR-curve RMS and by the pool RMS, on the bundled sample."""
    g = _sets(results, "greedy.csv")
    rows = [[r["criterion"], int(r["size"]), f"`{r['set']}`", f"`{r['added']}`", f"{r['value']:.4f}",
             _ci(r["pr rms"], r["pr rms lo"], r["pr rms hi"])] for r in g.to_dict("records")]
    return _md(["criterion", "size", "set", "added", "criterion value", "PR RMS [95% CI]"], rows)


def metric_sets_marginal(results: Path) -> str:
    """What adding a metric to one metric changes in the PR-curve RMS: the verdicts counted,
    and the five largest decided reductions."""
    m = _sets(results, "marginal.csv")
    lower = m["verdict"] == m["with"] + " lower"
    higher = m["verdict"] == m["set"] + " lower"
    head = (f"{len(m)} tests (Holm over all of them): adding the metric lowers the RMS in {int(lower.sum())}, "
            f"raises it in {int(higher.sum())}, undecided in {int((~lower & ~higher).sum())}.\n\n")
    top = m[lower].sort_values("diff").head(5)
    rows = [[f"`{r['set']}`", f"`{r['added']}`", int(r["topics"]), f"{r['pr rms set']:.4f}",
             f"{r['pr rms with']:.4f}", _ci(r["diff"], r["diff lo"], r["diff hi"]), _p(r["p_holm"]), r["verdict"]]
            for r in top.to_dict("records")]
    return head + _md(["set", "added", "topics", "PR RMS of the set", "with the metric", "difference [95% CI]",
                       "t (Holm)", "verdict"], rows)


def metric_sets_gupta(results: Path) -> str:
    """MaxEnt against the regression of Gupta et al. (2019) on system means: the paired test over
    the targets' means over sets, and the per-set tests' verdicts counted."""
    t = _sets(results, "gupta_tests.csv")
    g = _sets(results, "gupta.csv")
    train = ", ".join(sorted({c for x in g["train collections"].dropna() for c in x.split(",")}))
    pooled = t["set"].str.startswith("all sets")
    rows = [[r["quantity"], int(r["targets"]), f"{r['maxent']:.4f}", f"{r['ols']:.4f}", f"{r['diff']:+.4f}",
             _p(r["p_t"]), f"{r['mde']:.4f}", r["verdict"]] for r in t[pooled].to_dict("records")]
    lines = []
    for q, part in t[~pooled].groupby("quantity", sort=False):
        decided = part[~part["verdict"].str.startswith("undecided")]["verdict"].value_counts()
        lines.append(f"- per set, {q} (Holm over {len(part)} sets): "
                     + "".join(f"{v} in {int(n)}, " for v, n in decided.items())
                     + f"undecided in {int(len(part) - decided.sum())}")
    return (f"Trained on {train}; {len(g)} (set, target) pairs. Paired t-test over the targets, each the mean "
            "over the sets that predict it:\n\n"
            + _md(["quantity", "targets", "MaxEnt", "regression", "difference", "p (t)", "MDE", "verdict"], rows)
            + "\n\n" + "\n".join(lines))


def metric_sets_webber(results: Path) -> str:
    """Webber et al. (2008)'s question across topic halves, on the bundled sample."""
    w = _sets(results, "webber.csv")
    t = _sets(results, "webber_tests.csv")
    rows = [[f"`{r['metric']}`", int(r["splits"]), int(r["topics per half"]),
             _ci(r["tau"], r["tau lo"], r["tau hi"], 3)] for r in w.to_dict("records")]
    tests = [[f"`{r['metric']}` - `{r['target']}`", _ci(r["diff"], r["diff lo"], r["diff hi"], 3),
              f"{100 * r['share higher']:.0f} %", r["verdict"]] for r in t.to_dict("records")]
    p = _sets(results, "predictions.csv")
    p = p[p["set"].isin([m for m in w["metric"] if m != "P@10"]) & (p["target"] == "P@10")]
    ours = [[f"`{r['set']}`", int(r["lists"]), f"{r['rms (topics)']:.4f}", f"{r['rms (runs)']:.4f}",
             f"{r['tau (runs)']:.3f}"] for r in p.to_dict("records")]
    return (_md(["ranks systems on one half", "splits", "topics per half",
                 "tau with P@10 on the other half [central 95% of splits]"], rows) + "\n\n"
            + _md(["difference of tau", "mean [central 95% of splits]", "splits where higher", "verdict"], tests)
            + "\n\nThe same-topic form: P@10 inferred per list from the list's own value, then averaged per "
            "system:\n\n"
            + _md(["inferred from", "lists", "P@10 RMS (lists)", "P@10 RMS (runs)", "P@10 tau (runs)"], ours))


TABLES: dict[str, Callable[[Path], str]] = {
    "headline": headline, "table1": table1, "paired_pr": paired_pr, "paired_p10": paired_p10,
    "protocol": protocol, "protocol_tests": protocol_tests, "alignment": alignment, "gap_sweep": gap_sweep,
    "discriminative": discriminative, "active": active, "active_pool": active_pool, "evidence": evidence,
    "bench_throughput": bench_throughput, "bench_engines": bench_engines, "bench_startup": bench_startup,
    "bench_build": bench_build, "bench_install": bench_install, "bench_scale": bench_scale, "mutation": mutation,
    "bench_deep": bench_deep, "bench_cli": bench_cli,
    "trec_eval_lines": trec_eval_lines,
    "metric_sets_best": metric_sets_best, "metric_sets_singles": metric_sets_singles,
    "metric_sets_status": metric_sets_status,
    "metric_sets_greedy": metric_sets_greedy, "metric_sets_marginal": metric_sets_marginal,
    "metric_sets_gupta": metric_sets_gupta, "metric_sets_webber": metric_sets_webber,
}
"""The registered tables: NAME -> function of the results folder returning Markdown."""


def _learning_tables() -> None:
    from analysis.learning import report as learning

    for name, fn in learning.BLOCKS.items():
        TABLES[f"learning_{name}"] = lambda results, fn=fn: fn(results / "learning")


_learning_tables()


def regenerate(text: str, path: Path, results: Path = RESULTS) -> str:
    """``text`` with every marked table rebuilt; unknown or unclosed markers raise InputError."""
    out, pos, cache = [], 0, {}
    marks = list(_MARK.finditer(text))
    i = 0
    while i < len(marks):
        m = marks[i]
        line = text.count("\n", 0, m.start()) + 1
        closing, name = m.group(1) == "/", m.group(2)
        if closing:
            raise InputError(path, line, f"closing marker for {name!r} without its opening marker")
        if name not in TABLES:
            raise InputError(path, line, f"unknown report table {name!r}; registered: {', '.join(TABLES)}")
        if i + 1 >= len(marks) or marks[i + 1].group(1) != "/" or marks[i + 1].group(2) != name:
            raise InputError(path, line, f"marker report:{name} is not closed by <!-- /report:{name} -->")
        end = marks[i + 1]
        if name not in cache:
            cache[name] = TABLES[name](results)
        out += [text[pos:m.end()], "\n", cache[name], "\n"]
        pos = end.start()
        i += 2
    out.append(text[pos:])
    return "".join(out)


def documents(root: Path) -> list[Path]:
    """README.md and every docs/**/*.md that contains a report marker."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [f for f in files if f.exists() and _MARK.search(f.read_text())]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.report", description=_cli.describe(__doc__.splitlines()[0]),
                                formatter_class=_cli.HelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; print a diff and exit 1 if a table is stale")
    p.add_argument("--root", type=Path, default=_cli.ROOT, help="project root whose README.md and docs/ are read")
    p.add_argument("--results", type=Path, default=None, help="evidence folder (default ROOT/results)")
    p.add_argument("--list", action="store_true", help="print the registered tables and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _body(args) -> int:
    if args.list:
        for name, fn in TABLES.items():
            print(f"{name}: {fn.__doc__.splitlines()[0]}")
        return 0
    results = args.results or args.root / "results"
    stale = 0
    for path in documents(args.root):
        old = path.read_text()
        new = regenerate(old, path, results)
        if new == old:
            continue
        stale += 1
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       str(path), str(path) + " (regenerated)"))
        else:
            _cli.atomic_write_text(path, new)
            print(f"updated {path}")
    if args.check and stale:
        print(f"{stale} file(s) differ from the committed evidence; run python -m analysis.report", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
