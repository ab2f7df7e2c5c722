"""``python -m analysis.maxent``: how informative are AP, nDCG and GAP? (paper [000] §3, [004] §5)

For every (run, topic) and every metric: infer the maximum-entropy distribution of relevance
from the metric's value alone (plus the list's count side information), reconstruct the
precision-recall curve and predict P@10 (or any metric), and score them against the truth.
With no arguments it analyses the bundled TREC-COVID round-1 sample in ``trec_runs/``.

Writes to ``out/maxent/<dataset>/``: instances.csv (one row per run, topic, metric,
threshold), summary.csv (paper 000 Table 1 layout, plus P@10 prediction RMS and Kendall tau),
informativeness.csv (with ``--predict all``), figures (PNG + the CSV behind each).
Work is done one run at a time and each run's rows are written atomically to
``chunks/``; ``--resume`` skips finished runs, so an interrupted analysis loses nothing.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli
from analysis._instances import (Settings, analyse_run, graded_summary, infer, parse_graded_pr,  # noqa: F401
                                 run_instances, split_names)
from maxent._feedback import phase
from maxent.errors import ParameterError
from maxent.inference import (expected_pr_curve, graded_pr_points, inferred_graded_pr_curve, kendall_tau,
                              real_pr_curve, rms, threshold_probabilities)
from maxent.metrics import parse_measure
from maxent.ranked import rank_runs
from maxent.solver import HAS_SOLUTION, Status, solve
from maxent.trec import read_qrels, read_runs

OUTPUTS = ("instances.csv", "summary.csv", "informativeness.csv", "fig_*.csv", "fig_*.png")
"""Final outputs (cleared at the start of every run, see _cli.own_output)."""
DEFAULT_METRICS = "AP,nDCG,GAP"
ALL_PREDICT = ["P@10", "P@5", "P@20", "R-prec", "RR", "AP", "nDCG", "nDCG@10", "GAP"]


# ------------------------------------------------------------------ summaries and figures
_SOLVED = {s.value for s in HAS_SOLUTION}


def summarize(inst: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Paper 000 Table 1 layout: per metric and threshold, mean RMS / MAE of the inferred
    PR curves, and P@10 prediction RMS per topic, RMS and Kendall tau of per-run means."""
    rows = []
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    for (metric, t), g in inst.groupby(["metric", "threshold"], sort=False):
        e = g[g["eligible"]]
        runs = e.groupby("run")[[f"actual {p10}", f"pred {p10}"]].mean()
        rows.append({
            "metric": metric, "threshold": t, "instances": len(e),
            "rms": e["rms"].mean(), "mae": e["mae"].mean(),
            f"{p10} rms (topics)": rms(e[f"actual {p10}"], e[f"pred {p10}"]),
            f"{p10} rms (runs)": rms(runs.iloc[:, 0], runs.iloc[:, 1]),
            f"{p10} tau (runs)": kendall_tau(runs.iloc[:, 0], runs.iloc[:, 1]),
            "solved": int(g["status"].isin(_SOLVED).sum()),
            "undefined": int((g["status"] == Status.UNDEFINED.value).sum()),
            "not solved": int((~g["status"].isin(_SOLVED | {Status.UNDEFINED.value})).sum()),
            **(graded_summary(g, "graded PR ") if "graded rms" in g else {}),
        })
    return pd.DataFrame(rows)


def informativeness(inst: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """RMS of predicting metric X (columns) from metric Y's value (rows), per threshold."""
    rows = []
    for (metric, t), g in inst.groupby(["metric", "threshold"], sort=False):
        e = g[g["eligible"]]
        row = {"from": metric, "threshold": t}
        for x in settings.predict:
            row[x] = rms(e[f"actual {x}"], e[f"pred {x}"])
        rows.append(row)
    return pd.DataFrame(rows)


def _figures(inst, settings, runs, qrels, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    t0 = settings.thresholds[0]
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    e = inst[inst["eligible"] & (inst["threshold"] == t0)]
    metrics = list(dict.fromkeys(e["metric"]))

    # paper 000 Fig. 3: inferred vs actual P@10, per-run means
    per_run = e.groupby(["metric", "run"])[[f"actual {p10}", f"pred {p10}"]].mean().reset_index()
    _cli.atomic_write_csv(out / "fig_p10_inferred.csv", per_run)
    fig, axes = plt.subplots(1, max(len(metrics), 1), figsize=(4 * max(len(metrics), 1), 4), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        d = per_run[per_run["metric"] == m]
        a, p = d[f"actual {p10}"], d[f"pred {p10}"]
        ax.scatter(a, p, s=14)
        lim = [0, max(1e-3, float(max(a.max(), p.max()))) * 1.05]
        ax.plot(lim, lim, "k:", lw=0.8)
        ax.set(xlim=lim, ylim=lim, xlabel=f"actual {p10} (mean over topics)",
               ylabel=f"{p10} inferred from {m}",
               title=f"{m}: RMS {rms(a, p):.3f}, tau {kendall_tau(a, p):.3f}")
    fig.suptitle(f"{p10} inferred from each metric (threshold {t0})")
    _cli.save_figure(fig, out / "fig_p10_inferred.png")
    plt.close(fig)
    written.append(out / "fig_p10_inferred.png")

    # paper 000 Fig. 1: P@10 against AP and against nDCG per run
    firsts = e.drop_duplicates(["run", "topic", "metric"])
    wide = firsts.pivot_table(index="run", columns="metric", values="value", aggfunc="mean")
    wide[p10] = e.drop_duplicates(["run", "topic"]).groupby("run")[f"actual {p10}"].mean()
    wide = wide.reset_index()
    _cli.atomic_write_csv(out / "fig_p10_vs_metric.csv", wide)
    others = [m for m in metrics if m in wide.columns]
    fig, axes = plt.subplots(1, max(len(others), 1), figsize=(4 * max(len(others), 1), 4), squeeze=False)
    for ax, m in zip(axes[0], others):
        ax.scatter(wide[m], wide[p10], s=14)
        ax.set(xlabel=f"{m} (mean over topics)", ylabel=f"{p10} (mean over topics)",
               title=f"{m}: Kendall tau with {p10} {kendall_tau(wide[m], wide[p10]):.3f}")
    fig.suptitle(f"{p10} against each metric, per run (threshold {t0})")
    _cli.save_figure(fig, out / "fig_p10_vs_metric.png")
    plt.close(fig)
    written.append(out / "fig_p10_vs_metric.png")

    # actual vs inferred PR curves for a few (run, topic) examples: quartiles of the first metric's RMS
    first = e[e["metric"] == metrics[0]].sort_values(["rms", "run", "topic"]) if metrics else e
    picks = first.iloc[[int(x * (len(first) - 1)) for x in (0.25, 0.5, 0.75)]] if len(first) else first
    examples = _example_lists(picks, settings, runs, qrels)
    curves = []
    for pick, lists in examples:
        rec, prec, valid = real_pr_curve(lists, t0)
        curves.append(pd.DataFrame({"run": pick["run"], "topic": pick["topic"], "curve": "actual",
                                    "recall": rec[0][valid[0]], "precision": prec[0][valid[0]]}))
        for metric in settings.metric_objects():
            for t, mt, res in infer(metric, lists, dataclasses.replace(settings, thresholds=(t0,))):
                q = threshold_probabilities(res.p, t)[:, : lists.lengths[0]]
                erec, eprec = expected_pr_curve(q, lists.n_rel(t))
                curves.append(pd.DataFrame({"run": pick["run"], "topic": pick["topic"],
                                            "curve": f"inferred from {metric}",
                                            "recall": erec[0], "precision": eprec[0]}))
    written.append(_plot_curves(curves, out / "fig_pr_examples.png", "recall", "precision",
                                f"actual and inferred precision-recall curves (threshold {t0})"))
    if settings.graded_pr is not None:
        written.append(_figure_graded_pr(examples, settings, out))
    return written


def _example_lists(picks, settings: Settings, runs, qrels) -> list:
    """(pick, one-topic RankedLists) for each example (run, topic) pick, ranked once."""
    by_name = {r.name: r for r in runs}
    out = []
    for _, pick in picks.iterrows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lists = rank_runs([by_name[pick["run"]]], qrels, depth=settings.depth,
                              score_precision=settings.score_precision)
        out.append((pick, lists.take(np.flatnonzero(lists.topics == pick["topic"]))))
    return out


def _figure_graded_pr(examples: list, settings: Settings, out: Path) -> Path:
    """Actual and inferred graded PR curves (paper 004 s3.2) for the example (run, topic) lists."""
    g = settings.graded_pr
    curves = []
    for pick, lists in examples:
        pts = graded_pr_points(lists, g)
        k = pts.valid[0]
        curves.append(pd.DataFrame({"run": pick["run"], "topic": pick["topic"], "curve": "actual",
                                    "recall": pts.recall[0, k], "precision": pts.precision[0, k]}))
        for metric in settings.metric_objects():
            if not metric.GRADED:
                continue
            res = solve(metric, metric.value(lists), lists, count=settings.count)
            n = lists.lengths[0]
            rec, prec = inferred_graded_pr_curve(res.p, pts.Z, g)
            curves.append(pd.DataFrame({"run": pick["run"], "topic": pick["topic"],
                                        "curve": f"inferred from {metric}",
                                        "recall": rec[0, :n], "precision": prec[0, :n]}))
    return _plot_curves(curves, out / "fig_graded_pr_examples.png", "graded recall", "graded precision",
                        "actual and inferred graded precision-recall curves (paper 004 s3.2, g = "
                        + ", ".join("%.3g" % x for x in g) + ")")


def _plot_curves(curves: list, path: Path, xlabel: str, ylabel: str, title: str) -> Path:
    """One panel per (run, topic): the actual curve as points, each inferred curve as a line.

    ``curves`` is a list of frames with columns run, topic, curve, recall, precision; they are
    written beside the figure as ``path`` with a .csv suffix.
    """
    import matplotlib.pyplot as plt

    curves = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(
        columns=["run", "topic", "curve", "recall", "precision"])
    _cli.atomic_write_csv(path.with_suffix(".csv"), curves)
    keys = list(dict.fromkeys(zip(curves["run"], curves["topic"])))
    fig, axes = plt.subplots(1, max(len(keys), 1), figsize=(4.2 * max(len(keys), 1), 4), squeeze=False)
    for ax, (r, tp) in zip(axes[0], keys):
        d = curves[(curves["run"] == r) & (curves["topic"] == tp)]
        for name, c in d.groupby("curve", sort=False):
            style = dict(marker="o", ms=3, lw=0, color="k") if name == "actual" else dict(lw=1.2)
            ax.plot(c["recall"], c["precision"], label=name, **style)
        ax.set(xlabel=xlabel, ylabel=ylabel, ylim=(0, 1.02), title=f"{r}, topic {tp}")
        ax.legend(fontsize=7)
    fig.suptitle(title)
    _cli.save_figure(fig, path)
    plt.close(fig)
    return path


def _print_summary(summary: pd.DataFrame, settings: Settings, name: str, seconds: float) -> None:
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    print(f"MaxEnt informativeness on {name} ({settings.count} counts, {settings.alignment}-aligned PR errors)")
    head = f"{'metric':<22} {'t':>2} {'inst':>6} {'PR RMS':>8} {'PR MAE':>8} {p10 + ' RMS':>10} {'run RMS':>8} {'run tau':>8}"
    print(head)
    print("-" * len(head))
    for r in summary.itertuples(index=False):
        d = r._asdict()
        vals = list(d.values())
        print(f"{vals[0]:<22} {vals[1]:>2} {vals[2]:>6} {vals[3]:>8.4f} {vals[4]:>8.4f} "
              f"{vals[5]:>10.4f} {vals[6]:>8.4f} {vals[7]:>8.3f}")
    undefined, unsolved = int(summary["undefined"].sum()), int(summary["not solved"].sum())
    if undefined:
        print(f"{undefined} instance(s) have no relevant document at their threshold (metric undefined)")
    if unsolved:
        print(f"{unsolved} instance(s) ended infeasible or not_converged (status in instances.csv); "
              "they are left out of the means")
    if "graded PR RMS" in summary:
        g = ",".join("%.4g" % x for x in settings.graded_pr)
        print(f"graded PR curve (paper 004 s3.2, g = {g}; graded solves only, biased towards GAP(g)):")
        for r in summary.drop_duplicates("metric").itertuples(index=False):
            d = r._asdict()
            vals = list(d.values())
            gi = list(summary.columns).index("graded PR RMS")
            if vals[gi + 2]:
                print(f"  {vals[0]:<22} {vals[gi + 2]:>6} lists  RMS {vals[gi]:.4f}  MAE {vals[gi + 1]:.4f}")
    print(f"({seconds:.1f} s)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m analysis.maxent",
        description="MaxEnt informativeness of IR metrics: inferred PR curves and P@10 from one metric value.",
        formatter_class=_cli.HelpFormatter,
        epilog="examples:\n"
               "  python -m analysis.maxent\n"
               "  python -m analysis.maxent --runs ../shared/data/robust03/runs "
               "--qrels ../shared/data/robust03/qrels/robust03_qrels.txt\n"
               "  python -m analysis.maxent --metrics 'AP,nDCG,GAP(g=0.5,0.5),P@10' --predict all\n",
    )
    _cli.add_data(p)
    p.add_argument("--metrics", default=DEFAULT_METRICS, help="comma-separated measure names")
    p.add_argument("--threshold", default=None,
                   help="relevance thresholds to score, comma-separated (default: every grade >= 1 of the qrels)")
    p.add_argument("--count-constraint", dest="count", choices=("retrieved", "total"), default="retrieved",
                   help="K per grade: number retrieved (default) or qrels totals capped at the depth")
    p.add_argument("--alignment", choices=("recall", "rank"), default="recall", help="PR error alignment")
    p.add_argument("--min-relevant", type=int, default=0,
                   help="paper 004's selection rule: keep lists with at least this many relevant retrieved at every threshold")
    p.add_argument("--depth", type=int, default=1000,
                   help="documents per topic kept (1000, as Yilmaz & Robertson 2010; unlike trec_eval's -M, which keeps "
                        "all by default, the MaxEnt problems need a depth: lists cut are counted on stderr)")
    p.add_argument("--predict", default="P@10",
                   help="metrics predicted from each inferred distribution, comma-separated, or 'all'")
    p.add_argument("--graded-pr", default=None, metavar="G",
                   help="also score the graded PR curve of paper 004 s3.2 with threshold probabilities "
                        "G = 'uniform' or g1,g2,... (graded solves: nDCG, GAP)")
    _cli.add_common(p, "maxent")
    return p


def _body(args) -> int:
    t_start = time.time()
    with phase("reading the qrels and runs"):
        qrels = read_qrels(args.qrels)
        runs = sorted(read_runs(args.runs), key=lambda r: r.name)
    if args.threshold:
        try:
            thresholds = tuple(int(x) for x in args.threshold.split(","))
        except ValueError:
            raise ParameterError(f"--threshold: expected integers, got {args.threshold!r}") from None
    else:
        thresholds = tuple(range(1, max(qrels.max_grade, 1) + 1))
    if any(t < 1 for t in thresholds):
        raise ParameterError("--threshold: thresholds must be >= 1")
    predict = ALL_PREDICT if args.predict == "all" else split_names(args.predict)
    metrics = split_names(args.metrics)
    if not metrics or not predict:
        raise ParameterError("--metrics and --predict need at least one measure name")
    for m in metrics + predict:
        if not parse_measure(m).HAS_EXPECTATION:
            raise ParameterError(f"{m} has no expectation under a relevance distribution")
    settings = Settings(tuple(str(parse_measure(m)) for m in metrics), thresholds, args.count,
                        args.alignment, args.min_relevant, args.depth, tuple(str(parse_measure(x)) for x in predict),
                        parse_graded_pr(args.graded_pr, qrels.max_grade), score_precision=args.score_precision)
    name = _cli.dataset_name(args.runs, args.dataset)
    out = args.out or (_cli.SCRATCH / "maxent" / name)
    config = dict(dataclasses.asdict(settings), qrels=str(Path(args.qrels).resolve()),
                  runs=[r.name for r in runs])
    if settings.graded_pr is None:
        del config["graded_pr"]            # unchanged settings stamp (and --resume) without the option
    if settings.score_precision == "single":
        del config["score_precision"]      # likewise for the default ranking
    _cli.report_unknown_topics(runs, qrels)  # after the arguments are known good
    with _cli.own_output(out, OUTPUTS, config, args.resume):
        _cli.report_depth_cut(runs, qrels, args.depth)
        with phase(f"solving the maximum-entropy problems of {len(runs)} runs"):
            inst = run_instances(runs, qrels, settings, out, config, args)
        with phase("writing the tables and figures"):
            _cli.atomic_write_csv(out / "instances.csv", inst)
            summary = summarize(inst, settings)
            _cli.atomic_write_csv(out / "summary.csv", summary)
            if args.predict == "all":
                _cli.atomic_write_csv(out / "informativeness.csv", informativeness(inst, settings))
            _figures(inst, settings, runs, qrels, out)
    _print_summary(summary, settings, name, time.time() - t_start)
    print(f"results in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
