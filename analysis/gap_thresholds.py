"""``python -m analysis.gap_thresholds``: which threshold probabilities g make GAP most
informative and most discriminative, against nDCG (Robertson, Kanoulas & Yilmaz 2010, Figs. 2 and 3).

1. Informativeness sweep: for every g on a grid over the simplex (3 grades: g1 = 0, 0.1, ..,
   1 and g2 = 1 - g1), MaxEnt-infer from GAP(g) and from nDCG on every eligible (run, topic)
   and score the inferred PR curves at every threshold (>= 1, >= 2, ...). The paper's
   selection rule keeps lists with at least ``--min-relevant`` relevant documents retrieved at
   every threshold. GAP(g) with all mass on threshold j is AP at threshold j (marked).
2. Discriminative power: Sakai's paired bootstrap test for every pair of runs, per metric
   (GAP at chosen g, AP, nDCG): ASL curves, the fraction of pairs significant at alpha, and
   the same among the top-k runs by the metric.

Writes to ``out/gap_thresholds/<dataset>/``: instances.csv, sweep.csv + sweep.png (the paper's Fig. 2,
with 95% bootstrap intervals over topics), asl.csv + asl.png (Fig. 3) + discriminative.csv; the best
g per threshold on stdout. The computation is the library's (:mod:`maxent.gap_thresholds`, the
function :func:`maxent.gap_thresholds` returns the same frames); this module adds files, progress,
workers and resuming.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from analysis import _cli
from analysis._instances import Settings, parse_graded_pr, run_instances
from maxent._feedback import phase
from maxent.errors import ParameterError
from maxent.gap_thresholds import (best_g, bootstrap_metrics, bootstrap_tables, g_name,  # noqa: F401
                                   per_topic_values, restrict_topics, simplex_grid, sweep_table, topic_set)
from maxent.metrics import parse_measure
from maxent.trec import read_qrels, read_runs

OUTPUTS = ("instances.csv", "sweep.csv", "sweep.png", "asl.csv", "asl.png", "discriminative.csv")
"""Final outputs (cleared at the start of every run, see _cli.own_output)."""


def _fig_sweep(table: pd.DataFrame, thresholds, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from maxent.plots import GSweepDisplay

    graded = "graded rms" in table
    panels = len(thresholds) + graded
    fig, axes = plt.subplots(1, panels, figsize=(4.8 * panels, 4.4), squeeze=False, layout="constrained")
    for ax, t in zip(axes[0], thresholds):
        GSweepDisplay.from_sweep(table, t, ax=ax)
    if graded:
        GSweepDisplay.from_sweep(table, thresholds[0], column="graded rms", ax=axes[0][-1])
    fig.suptitle("Informativeness of GAP across threshold probabilities g "
                 "(Robertson, Kanoulas & Yilmaz 2010, Fig. 2)")
    _cli.save_figure(fig, out / "sweep.png")
    plt.close(fig)


def _fig_asl(asl: pd.DataFrame, top_k: int, alpha: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from maxent.plots import ASLDisplay

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ASLDisplay.from_asl(asl, top_k=top_k, alpha=alpha, ax=ax)
    ax.set_title("Discriminative power (paired bootstrap;\nRobertson, Kanoulas & Yilmaz 2010, Fig. 3)")
    _cli.save_figure(fig, out / "asl.png")
    plt.close(fig)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m analysis.gap_thresholds",
        description="Which threshold probabilities g make GAP most informative and discriminative?",
        formatter_class=_cli.HelpFormatter,
        epilog="examples:\n  python -m analysis.gap_thresholds\n"
               "  python -m analysis.gap_thresholds --runs ../shared/data/robust03/runs "
               "--qrels ../shared/data/robust03/qrels/robust03_qrels.txt --topics 601-650\n",
    )
    _cli.add_data(p, "qrels file (graded)")
    p.add_argument("--topics", default=None, help="topic range lo-hi or comma list to keep (e.g. 601-650)")
    p.add_argument("--step", type=float, default=0.1, help="grid step of g over the simplex")
    p.add_argument("--threshold", default=None, help="thresholds scored (default: every grade >= 1)")
    p.add_argument("--min-relevant", type=int, default=5,
                   help="keep lists with at least this many relevant retrieved at every threshold")
    p.add_argument("--depth", type=int, default=1000,
                   help="documents per topic kept (1000, as Robertson, Kanoulas & Yilmaz 2010; unlike trec_eval's -M, which keeps "
                        "all by default, the MaxEnt problems need a depth: lists cut are counted on stderr)")
    p.add_argument("--reference", default="nDCG", help="the reference metric")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap samples B")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--top-k", type=int, default=10, help="top runs for the inner ASL plot")
    p.add_argument("--bootstrap-g", default=None,
                   help="g settings for the bootstrap, ';'-separated (default: uniform and the best per threshold)")
    p.add_argument("--skip-bootstrap", action="store_true", help="informativeness sweep only")
    p.add_argument("--graded-pr", default=None, metavar="G",
                   help="also score the inferred graded PR curve (Robertson, Kanoulas & Yilmaz 2010, s3.2; biased towards GAP(G)) with "
                        "threshold probabilities G = 'uniform' or g1,g2,...")
    _cli.add_common(p, "gap_thresholds")
    return p


def _body(args) -> int:
    t0 = time.time()
    if not 0 < args.alpha < 1:
        raise ParameterError(f"--alpha: must be in (0, 1), got {args.alpha}")
    with phase("reading the qrels and runs"):
        qrels = read_qrels(args.qrels)
        runs = sorted(read_runs(args.runs), key=lambda r: r.name)
    runs, qrels = restrict_topics(runs, qrels, topic_set(args.topics, "--topics"), "--topics")
    c = qrels.max_grade
    if c < 2:
        raise ParameterError(f"{args.qrels}: GAP thresholds need graded qrels (max grade {c})")
    thresholds = tuple(int(x) for x in args.threshold.split(",")) if args.threshold else tuple(range(1, c + 1))
    grid = simplex_grid(c, args.step, "--step")
    metrics = tuple(g_name(g) for g in grid) + (str(parse_measure(args.reference)),)
    graded_pr = parse_graded_pr(args.graded_pr, c)
    settings = Settings(metrics, thresholds, "retrieved", "recall", args.min_relevant, args.depth, ("P@10",),
                        graded_pr, score_precision=args.score_precision)
    name = _cli.dataset_name(args.runs, args.dataset)
    out = args.out or (_cli.SCRATCH / "gap_thresholds" / name)
    config = dict(metrics=metrics, thresholds=thresholds, min_relevant=args.min_relevant, depth=args.depth,
                  qrels=str(Path(args.qrels).resolve()), topics=args.topics, runs=[r.name for r in runs],
                  **({"graded_pr": graded_pr} if graded_pr is not None else {}),
                  **({"score_precision": args.score_precision} if args.score_precision != "single" else {}))
    _cli.report_unknown_topics(runs, qrels)  # after the arguments are known good
    with _cli.own_output(out, OUTPUTS, config, args.resume):
        _cli.report_depth_cut(runs, qrels, args.depth)
        return _analyse(args, runs, qrels, c, thresholds, grid, settings, name, out, config, t0)


def _analyse(args, runs, qrels, c, thresholds, grid, settings, name, out, config, t0) -> int:
    graded_pr = settings.graded_pr
    with phase(f"solving the maximum-entropy problems of {len(runs)} runs"):
        inst = run_instances(runs, qrels, settings, out, config, args)
    _cli.atomic_write_csv(out / "instances.csv", inst)
    table = sweep_table(inst, grid, c)
    _cli.atomic_write_csv(out / "sweep.csv", table)
    _fig_sweep(table, thresholds, out)

    print(f"GAP threshold probabilities on {name}: {len(runs)} runs, grades 0..{c}, step {args.step}")
    best = best_g(table, thresholds)
    for t in thresholds:
        gap = table[(table["metric"] == "GAP") & (table["threshold"] == t)]
        ref = table[(table["metric"] != "GAP") & (table["threshold"] == t)]
        if len(gap) == 0:
            print(f"  threshold >= {t}: no eligible lists")
            continue
        b = gap.loc[gap["rms"].idxmin()]
        ref_txt = f"{ref['metric'].iloc[0]} RMS {ref['rms'].iloc[0]:.4f}" if len(ref) else ""
        print(f"  threshold >= {t}: best g = ({b['g']}) RMS {b['rms']:.4f} MAE {b['mae']:.4f} "
              f"over {int(b['instances'])} lists; {ref_txt}")
    if graded_pr is not None and len(table):
        t = thresholds[0]
        gap = table[(table["metric"] == "GAP") & (table["threshold"] == t)]
        ref = table[(table["metric"] != "GAP") & (table["threshold"] == t)]
        if len(gap) and gap["graded rms"].notna().any():
            b = gap.loc[gap["graded rms"].idxmin()]
            ref_txt = f"{ref['metric'].iloc[0]} RMS {ref['graded rms'].iloc[0]:.4f}" if len(ref) else ""
            print(f"  graded PR curve (g = {','.join('%.4g' % x for x in graded_pr)}): best g = ({b['g']}) "
                  f"RMS {b['graded rms']:.4f} MAE {b['graded mae']:.4f} over {int(b['graded instances'])} lists; "
                  f"{ref_txt}")

    if not args.skip_bootstrap:
        boot_metrics = bootstrap_metrics(c, best, args.reference,
                                         args.bootstrap_g.split(";") if args.bootstrap_g else None)
        with phase(f"bootstrap tests ({args.bootstrap} samples)"):
            names, topics, values = per_topic_values(runs, qrels, boot_metrics, args.depth, args.score_precision)
            asl, power = bootstrap_tables(names, values, args.bootstrap, args.seed, args.alpha, args.top_k)
        _cli.atomic_write_csv(out / "asl.csv", asl)
        _cli.atomic_write_csv(out / "discriminative.csv", power)
        _fig_asl(asl, args.top_k, args.alpha, out)
        print(f"Discriminative power (B = {args.bootstrap}, alpha = {args.alpha}, {len(topics)} topics):")
        for r in power.itertuples(index=False):
            print(f"  {r[0]:<26} {r[2]:6.1%} of {r[1]} pairs significant; top {args.top_k}: {r[4]:6.1%}")
    print(f"({time.time() - t0:.1f} s) results in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
