"""``python -m analysis.maxent``: how informative are AP, nDCG and GAP? (Yilmaz & Robertson 2010, s3;
Robertson, Kanoulas & Yilmaz 2010, s5)

For every (run, topic) and metric: infer the maximum-entropy distribution of relevance from
the metric's value (plus the list's counts), reconstruct the precision-recall curve, predict
P@10 (or any metric) and score them against the truth. Default data: the bundled sample.

Writes to ``out/maxent/<dataset>/``: instances.csv, summary.csv (Yilmaz & Robertson 2010,
Table 1 layout), informativeness.csv (with ``--predict all``) and figures (PNG + CSV). Each
run's rows go atomically to ``chunks/`` with a record of their inputs; ``--resume`` skips
finished runs whose run file, qrels and options are unchanged. The inference is
:mod:`maxent.informativeness`'s, the tables :mod:`analysis.tables`'.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import pandas as pd

from analysis import _cli
from analysis import _outputs
from analysis._cli import split_names
from analysis._instances import parse_graded_pr, run_instances
from analysis.tables import prediction_table, summarize
from maxent.cli.progress import phase
from maxent.informativeness import ALL_PREDICT as _ALL_PREDICT
from maxent.informativeness import DEFAULT_METRICS as _DEFAULT_METRICS
from maxent.informativeness import Settings
from maxent.errors import ParameterError
from maxent.metrics import parse_measure
from maxent.trec import read_qrels, read_runs

OUTPUTS = ("instances.csv", "summary.csv", "informativeness.csv", "fig_*.csv", "fig_*.png")  # see own_output
DEFAULT_METRICS = ",".join(_DEFAULT_METRICS)
ALL_PREDICT = list(_ALL_PREDICT)


# Margins in inches, set by hand: a layout engine or bbox_inches="tight" draws the figure twice.
MARGINS = dict(left=0.75, right=0.25, bottom=0.55, between=0.8, above=0.1, panel_title=0.4, legend=0.35)
COLUMNS = 4   # panels per row at most: more metrics make more rows, not a wider strip


def _panels(k: int, width: float = 4.2, height: float = 4.2, *, title: str, fontsize=None,
            panel_titles: bool = True, legend: bool = False, sharex: bool = False, sharey: bool = False,
            columns: int = COLUMNS):
    """``k`` panels in rows of at most ``columns`` under ``title`` (wrapped to the width), with
    :data:`MARGINS`; ``legend``: room below for a figure legend; ``sharex``, ``sharey``: one scale
    for every panel (each keeping its tick labels). Returns the figure and the ``k`` axes."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    cols = max(1, min(k, columns))
    rows = -(-max(k, 1) // cols)
    W, m = width * cols, MARGINS
    points = FontProperties(size=fontsize or rcParams["figure.titlesize"]).get_size_in_points()
    # a character of the default sans-serif font is at most ~0.6 of its size wide
    lines = textwrap.wrap(title, int((W - 0.2) * 72 / (0.6 * points)))
    head = m["panel_title"] if panel_titles else 0.15
    top = m["above"] + 1.3 * points / 72 * len(lines) + head
    panel_h = height - top - m["bottom"]          # one row is ``height`` tall, as before grids
    gap = m["bottom"] + head                      # tick labels of a row, then the next row's titles
    bottom = m["bottom"] + (m["legend"] if legend else 0)
    H = top + rows * panel_h + (rows - 1) * gap + bottom
    fig, grid = plt.subplots(rows, cols, figsize=(W, H), squeeze=False)
    panel = (W - m["left"] - m["right"] - (cols - 1) * m["between"]) / cols
    fig.subplots_adjust(left=m["left"] / W, right=1 - m["right"] / W, bottom=bottom / H,
                        top=1 - top / H, wspace=m["between"] / panel, hspace=gap / panel_h)
    fig.suptitle("\n".join(lines), y=1 - m["above"] / H, va="top", fontsize=fontsize)
    axes = list(grid.ravel())
    for ax in axes[k:]:
        ax.remove()
    axes = axes[:max(k, 1)]
    for ax in axes[1:]:           # shared limits; unlike subplots(sharex=...), no tick label hidden
        if sharex:
            ax.sharex(axes[0])
        if sharey:
            ax.sharey(axes[0])
    return fig, axes


def _figure_legend(fig, ax) -> None:
    """The legend of ``ax``'s artists under every panel, in the room ``_panels(legend=True)`` left."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        H = fig.get_figheight()
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.06 / H), ncol=len(labels),
                   fontsize=8, frameon=False)


def _targets(metrics, target: str) -> list[str]:
    """The metrics a target is inferred from: not the target itself (a trivial panel)."""
    from maxent.metrics import parse_measure

    name = str(parse_measure(target))
    return [m for m in metrics if str(parse_measure(m)) != name]


def _figures(inst, settings, runs, qrels, out: Path) -> list[Path]:
    """The figures (with the CSV behind each), drawn with :mod:`analysis.plots`, at the
    collection's binary level (:func:`analysis.plots.binary_threshold`)."""
    _cli.pyplot()
    from analysis.plots import MetricScatterDisplay, PredictionDisplay, RMSDisplay, binary_threshold

    written = []
    t0 = binary_threshold(qrels.max_grade, settings.thresholds)
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    e = inst[inst["eligible"] & (inst["threshold"] == t0)]
    metrics = list(dict.fromkeys(e["metric"]))
    others = _targets(metrics, p10)
    ci = "95% bootstrap intervals over topics"

    # Yilmaz & Robertson (2010), Table 1: mean PR-curve RMS per metric and threshold
    fig, axes = _panels(1, 1.6 + 1.2 * max(len(metrics), 1), title="PR curves inferred from each metric "
                        f"(Yilmaz & Robertson 2010, Table 1; {ci})", fontsize=9, panel_titles=False, legend=True)
    d = RMSDisplay.from_instances(inst, ax=axes[0], legend=False)
    _figure_legend(fig, axes[0])
    _cli.atomic_write_csv(out / "fig_rms_by_metric.csv", d.data)
    written.append(_save(fig, out / "fig_rms_by_metric.png"))

    # Yilmaz & Robertson (2010), Fig. 3: inferred vs actual P@10, per-run means
    fig, axes = _panels(len(others), title=f"{p10} inferred from each metric, per run (threshold {t0}; "
                        f"Yilmaz & Robertson 2010, Fig. 3; {ci}; title: RMS and Kendall tau as summary.csv)",
                        sharex=True, sharey=True)
    shown = [PredictionDisplay.from_instances(inst, m, target=p10, threshold=t0, ax=ax)
             for ax, m in zip(axes, others)]
    for p in shown:               # one scale: the largest panel's
        p.ax_.set(xlim=(0, max(q.limit() for q in shown)), ylim=(0, max(q.limit() for q in shown)))
    frames = [p.data for p in shown]
    _cli.atomic_write_csv(out / "fig_p10_inferred.csv", pd.concat(frames, ignore_index=True) if frames
                          else pd.DataFrame(columns=["metric", "threshold", "run"]))
    written.append(_save(fig, out / "fig_p10_inferred.png"))

    # Yilmaz & Robertson (2010), Fig. 1: P@10 against each metric, per run
    fig, axes = _panels(len(others), title=f"{p10} against each metric, per run (threshold {t0}; "
                        f"Yilmaz & Robertson 2010, Fig. 1; {ci})", sharey=True)
    frames = [MetricScatterDisplay.from_instances(inst, m, target=p10, threshold=t0, ax=ax).data
              .rename(columns=lambda c, m=m: c.replace("metric", m)) for ax, m in zip(axes, others)]
    wide = pd.DataFrame({"run": []})
    for f in frames:
        wide = f if wide.empty else wide.merge(f.drop(columns=[c for c in f.columns if c.startswith("target")]),
                                               on="run")
    _cli.atomic_write_csv(out / "fig_p10_vs_metric.csv",
                          wide.rename(columns=lambda c: c.replace("target", p10)))
    written.append(_save(fig, out / "fig_p10_vs_metric.png"))

    # actual vs inferred PR curves for a few (run, topic) examples: quartiles of the first metric's RMS
    first = e[e["metric"] == metrics[0]].sort_values(["rms", "run", "topic"]) if metrics else e
    picks = first.iloc[[int(x * (len(first) - 1)) for x in (0.25, 0.5, 0.75)]] if len(first) else first
    by_name = {r.name: r for r in runs}
    keys = [(p["run"], p["topic"]) for _, p in picks.iterrows()]
    names = [f"{q} of {metrics[0]}'s RMS, {p['rms']:.3f}" for q, (_, p) in
             zip(("lower quartile", "median", "upper quartile"), picks.iterrows())]
    which = (f"three lists: the lower quartile, median and upper quartile of {metrics[0]}'s PR-curve RMS"
             if metrics else "no list")
    written.append(_curves(keys, names, by_name, qrels, settings, t0, None, out / "fig_pr_examples.png",
                           f"Actual and inferred PR curves of {which} (threshold {t0}; "
                           "Yilmaz & Robertson 2010, Fig. 2)"))
    if settings.graded_pr is not None:
        g = ", ".join("%.3g" % x for x in settings.graded_pr)
        written.append(_curves(keys, names, by_name, qrels, settings, t0, settings.graded_pr,
                               out / "fig_graded_pr_examples.png",
                               f"Actual and inferred graded PR curves of {which} at threshold "
                               f"{t0} (Robertson, Kanoulas & Yilmaz 2010, s3.2; g = {g})"))
    return written


def _curves(keys, names, by_name, qrels, settings: Settings, threshold, graded, path: Path, title: str) -> Path:
    """One panel per (run, topic) example: :class:`analysis.plots.PRCurveDisplay`, one legend below."""
    from analysis.plots import PRCurveDisplay

    fig, axes = _panels(max(len(keys), 1), title=title, fontsize=10, legend=True, sharey=True)
    shown = [PRCurveDisplay.from_run(qrels, by_name[r], tp, settings.metric_objects(), ax=ax,
                                     threshold=threshold, graded=graded, count=settings.count,
                                     depth=settings.depth, score_precision=settings.score_precision, legend=False)
             for ax, (r, tp) in zip(axes, keys)]
    for d, name in zip(shown, names):
        d.ax_.set_title(f"{d.ax_.get_title()}\n{name}", fontsize=9)
    if shown:
        _figure_legend(fig, axes[0])
    frames = [d.data for d in shown]
    curves = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["run", "topic", "curve", "recall", "precision"])
    _cli.atomic_write_csv(path.with_suffix(".csv"), curves)
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    _cli.save_figure(fig, path, tight=False)      # laid out by _panels
    return path


def _print_summary(summary: pd.DataFrame, settings: Settings, name: str, seconds: float) -> None:
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    print(f"MaxEnt informativeness on {name} ({settings.count} counts, {settings.alignment}-aligned PR errors)")
    head = f"{'metric':<22} {'t':>2} {'inst':>6} {'PR RMS':>8} {'PR MAE':>8} {p10 + ' RMS':>10} {'run RMS':>8} {'run tau':>8}"
    print(head)
    print("-" * len(head))
    for vals in summary.itertuples(index=False):
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
        print(f"graded PR curve (Robertson, Kanoulas & Yilmaz 2010, s3.2, g = {g}; graded solves only, "
              "biased towards GAP(g)):")
        gi = list(summary.columns).index("graded PR RMS")
        for vals in summary.drop_duplicates("metric").itertuples(index=False):
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
    _cli.add_measures(p, "the metrics whose informativeness is measured", DEFAULT_METRICS)
    p.add_argument("--threshold", default=None,
                   help="relevance thresholds to score, comma-separated (default: every grade >= 1 of the qrels)")
    p.add_argument("--count-constraint", dest="count", choices=("retrieved", "total"), default="retrieved",
                   help="K per grade: number retrieved (default) or qrels totals capped at the depth")
    p.add_argument("--alignment", choices=("recall", "rank"), default="recall", help="PR error alignment")
    p.add_argument("--min-relevant", type=int, default=0,
                   help="Robertson, Kanoulas & Yilmaz (2010)'s selection rule: keep lists with at least this many relevant retrieved at every threshold")
    p.add_argument("--depth", type=int, default=1000,
                   help="documents per topic kept (1000, as Yilmaz & Robertson 2010; unlike trec_eval's -M, which keeps "
                        "all by default, the MaxEnt problems need a depth: lists cut are counted on stderr)")
    p.add_argument("--predict", default="P@10",
                   help="metrics predicted from each inferred distribution, comma-separated, or 'all'")
    p.add_argument("--graded-pr", default=None, metavar="G",
                   help="also score the graded PR curve of Robertson, Kanoulas & Yilmaz (2010) s3.2 with threshold probabilities "
                        "G = 'uniform' or g1,g2,... (graded solves: nDCG, GAP)")
    _cli.add_common(p, "maxent")
    return p


def _body(args) -> int:
    t_start = time.time()
    with phase("reading the qrels and runs"):   # the options were checked by _cli.check_options
        qrels = read_qrels(args.qrels)
        thresholds = _cli.parse_thresholds(args.threshold) or tuple(range(1, max(qrels.max_grade, 1) + 1))
        _cli.check_against_qrels(args, qrels, thresholds)
        runs = sorted(read_runs(args.runs), key=lambda r: r.name)
    predict = ALL_PREDICT if args.predict == "all" else split_names(args.predict)
    metrics = _cli.measure_names(args.measures, split_names(DEFAULT_METRICS),
                                 "--metrics and --predict need at least one measure name")
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
    with _outputs.own_output(out, OUTPUTS, config, args.resume):
        _cli.report_depth_cut(runs, qrels, args.depth)
        with phase(f"solving the maximum-entropy problems of {len(runs)} runs"):
            inst = run_instances(runs, qrels, settings, out, config, args)
        with phase("writing the tables and figures"), _outputs.staged_outputs(out, OUTPUTS) as stage:
            _cli.atomic_write_csv(stage / "instances.csv", inst)
            summary = summarize(inst, settings)
            _cli.atomic_write_csv(stage / "summary.csv", summary)
            if args.predict == "all":
                _cli.atomic_write_csv(stage / "informativeness.csv", prediction_table(inst, settings))
            _figures(inst, settings, runs, qrels, stage)
    _print_summary(summary, settings, name, time.time() - t_start)
    print(f"results in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
