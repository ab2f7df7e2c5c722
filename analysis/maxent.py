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
MARGINS = dict(left=0.75, right=0.25, bottom=0.55, between=0.8, above=0.1, panel_title=0.4)


def _panels(k: int, width: float = 4.2, height: float = 4.2, *, title: str, fontsize=None,
            panel_titles: bool = True):
    """A row of ``k`` panels under ``title`` (wrapped to the width), with :data:`MARGINS`."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    W, m = width * k, MARGINS
    points = FontProperties(size=fontsize or rcParams["figure.titlesize"]).get_size_in_points()
    # a character of the default sans-serif font is at most ~0.6 of its size wide
    lines = textwrap.wrap(title, int((W - 0.2) * 72 / (0.6 * points)))
    top = m["above"] + 1.3 * points / 72 * len(lines) + (m["panel_title"] if panel_titles else 0.15)
    fig, axes = plt.subplots(1, k, figsize=(W, height), squeeze=False)
    panel = (W - m["left"] - m["right"] - (k - 1) * m["between"]) / k
    fig.subplots_adjust(left=m["left"] / W, right=1 - m["right"] / W, bottom=m["bottom"] / height,
                        top=1 - top / height, wspace=m["between"] / panel)
    fig.suptitle("\n".join(lines), y=1 - m["above"] / height, va="top", fontsize=fontsize)
    return fig, axes


def _figures(inst, settings, runs, qrels, out: Path) -> list[Path]:
    """The figures (with the CSV behind each), drawn with :mod:`analysis.plots`."""
    _cli.pyplot()
    from analysis.plots import MetricScatterDisplay, PredictionDisplay, RMSDisplay

    written = []
    t0 = settings.thresholds[0]
    p10 = "P@10" if "P@10" in settings.predict else settings.predict[0]
    e = inst[inst["eligible"] & (inst["threshold"] == t0)]
    metrics = list(dict.fromkeys(e["metric"]))
    n = max(len(metrics), 1)
    ci = "95% bootstrap intervals over topics"

    # Yilmaz & Robertson (2010), Table 1: mean PR-curve RMS per metric and threshold
    fig, axes = _panels(1, 1.6 + 1.2 * n, title="PR curves inferred from each metric "
                        f"(Yilmaz & Robertson 2010, Table 1; {ci})", fontsize=9, panel_titles=False)
    d = RMSDisplay.from_instances(inst, ax=axes[0][0])
    _cli.atomic_write_csv(out / "fig_rms_by_metric.csv", d.data)
    written.append(_save(fig, out / "fig_rms_by_metric.png"))

    # Yilmaz & Robertson (2010), Fig. 3: inferred vs actual P@10, per-run means
    fig, axes = _panels(n, title=f"{p10} inferred from each metric, per run (threshold {t0}; "
                        f"Yilmaz & Robertson 2010, Fig. 3; {ci})")
    frames = [PredictionDisplay.from_instances(inst, m, target=p10, threshold=t0, ax=ax).data
              for ax, m in zip(axes[0], metrics)]
    _cli.atomic_write_csv(out / "fig_p10_inferred.csv", pd.concat(frames, ignore_index=True) if frames
                          else pd.DataFrame(columns=["metric", "threshold", "run"]))
    written.append(_save(fig, out / "fig_p10_inferred.png"))

    # Yilmaz & Robertson (2010), Fig. 1: P@10 against each metric, per run
    fig, axes = _panels(n, title=f"{p10} against each metric, per run (threshold {t0}; "
                        f"Yilmaz & Robertson 2010, Fig. 1; {ci})")
    frames = [MetricScatterDisplay.from_instances(inst, m, target=p10, threshold=t0, ax=ax).data
              .rename(columns=lambda c, m=m: c.replace("metric", m)) for ax, m in zip(axes[0], metrics)]
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
    written.append(_curves(keys, by_name, qrels, settings, None, out / "fig_pr_examples.png",
                           f"actual and inferred precision-recall curves (threshold {t0}; "
                           "Yilmaz & Robertson 2010, Fig. 2)"))
    if settings.graded_pr is not None:
        g = ", ".join("%.3g" % x for x in settings.graded_pr)
        written.append(_curves(keys, by_name, qrels, settings, settings.graded_pr,
                               out / "fig_graded_pr_examples.png",
                               "actual and inferred graded precision-recall curves "
                               f"(Robertson, Kanoulas & Yilmaz 2010, s3.2; g = {g})"))
    return written


def _curves(keys, by_name, qrels, settings: Settings, graded, path: Path, title: str) -> Path:
    """One panel per (run, topic) example: :class:`analysis.plots.PRCurveDisplay`."""
    from analysis.plots import PRCurveDisplay

    fig, axes = _panels(max(len(keys), 1), title=title)
    frames = [PRCurveDisplay.from_run(qrels, by_name[r], tp, settings.metric_objects(), ax=ax,
                                      threshold=settings.thresholds[0], graded=graded, count=settings.count,
                                      depth=settings.depth, score_precision=settings.score_precision).data
              for ax, (r, tp) in zip(axes[0], keys)]
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
