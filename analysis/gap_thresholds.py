"""``python -m analysis.gap_thresholds``: which threshold probabilities g make GAP most
informative and most discriminative, against nDCG (Robertson, Kanoulas & Yilmaz 2010, Figs. 2 and 3).

1. Informativeness sweep: for every g on a grid over the simplex, MaxEnt-infer from GAP(g) and
   from the reference metric on every eligible (run, topic) (at least ``--min-relevant``
   relevant retrieved at every threshold) and score the inferred PR curves at every threshold.
   GAP(g) with all mass on threshold j is AP at threshold j (marked).
2. Discriminative power: Sakai's paired bootstrap test for every pair of runs, per metric: ASL
   curves, the fraction of pairs significant at alpha, and the same among the top-k runs.

Writes to ``out/gap_thresholds/<dataset>/``: instances.csv, sweep.csv + sweep.png (Fig. 2),
asl.csv + asl.png (Fig. 3) + discriminative.csv; the best g per threshold on stdout. The
function :func:`gap_thresholds` returns the same frames from Python.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli
from analysis import _outputs
from analysis._instances import run_instances
from maxent.cli.progress import phase
from maxent.errors import ParameterError
from maxent.informativeness import Settings, analyse_run, graded_summary, resolve_graded_pr
from maxent.stats import topic_bootstrap_mean
from maxent.metrics import parse_measure
from maxent.trec import read_qrels, read_runs

__all__ = ["gap_thresholds", "GapThresholds", "simplex_grid", "g_name", "sweep_table", "best_g",
           "per_topic_values", "bootstrap_tables", "bootstrap_metrics", "restrict_topics", "topic_set", "main"]

OUTPUTS = ("instances.csv", "sweep.csv", "sweep.png", "asl.csv", "asl.png", "discriminative.csv")


# ------------------------------------------------------------------ the study as a function
def simplex_grid(c: int, step: float, name: str = "step") -> list[tuple[float, ...]]:
    """All g = (g_1..g_c) with g_j in {0, step, 2 step, .., 1} and sum g_j = 1, ordered
    lexicographically by decreasing g_1 (so c = 2 runs from (1, 0) to (0, 1)); ``name``
    names the step in errors (at most :data:`analysis._cli.GRID_LIMIT` settings)."""
    m = _cli.simplex_size(c, step, name)   # the step divides 1 and the grid is not too large
    return [tuple(round(x / m, 12) for x in parts) + (round((m - sum(parts)) / m, 12),)
            for parts in itertools.product(range(m, -1, -1), repeat=c - 1) if sum(parts) <= m]


def g_name(g) -> str:
    """The canonical name of GAP(g)."""
    return str(parse_measure("GAP(g=" + ",".join("%.12g" % x for x in g) + ")"))


def sweep_table(inst: pd.DataFrame, grid, c: int, *, level: float = 0.95, n_boot: int = 1000,
                seed: int = 0) -> pd.DataFrame:
    """Mean RMS / MAE per g setting and threshold, with the reference metric's as rows of
    their own; ``rms lo`` / ``rms hi`` (and ``graded rms lo`` / ``hi``) bound the mean RMS
    by a percentile bootstrap over topics (:func:`maxent.informativeness.topic_bootstrap_mean`)."""
    rows = []
    names = {g_name(g): g for g in grid}
    e = inst[inst["eligible"]]
    kw = dict(level=level, n_boot=n_boot, seed=seed)
    ci = topic_bootstrap_mean(e, "rms", ["metric", "threshold"], **kw).set_index(["metric", "threshold"])
    graded = {k: graded_summary(d, "graded ") for k, d in inst.groupby(["metric", "threshold"], sort=False)
              } if "graded rms" in inst else {}
    if graded:
        ge = inst[inst["graded eligible"].astype(bool)]
        gci = topic_bootstrap_mean(ge, "graded rms", ["metric", "threshold"], **kw).set_index(["metric", "threshold"])
    for (metric, t), d in e.groupby(["metric", "threshold"], sort=False):
        g = names.get(metric)
        ap_at = None
        if g is not None and max(g) == 1.0:
            ap_at = int(np.argmax(g)) + 1  # all mass on one threshold: AP at that threshold
        row = {"metric": "GAP" if g is not None else metric, "g": ",".join("%.12g" % x for x in g) if g else "",
               **{f"g{j + 1}": (g[j] if g else np.nan) for j in range(c)},
               "reduces_to": f"AP(rel={ap_at})" if ap_at else "",
               "threshold": t, "instances": len(d), "rms": d["rms"].mean(), "mae": d["mae"].mean(),
               **{k.replace("RMS", "rms").replace("MAE", "mae"): v
                  for k, v in graded.get((metric, t), {}).items()},
               "rms lo": ci.loc[(metric, t), "lo"], "rms hi": ci.loc[(metric, t), "hi"]}
        if graded:
            have = (metric, t) in gci.index
            row["graded rms lo"] = gci.loc[(metric, t), "lo"] if have else np.nan
            row["graded rms hi"] = gci.loc[(metric, t), "hi"] if have else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def best_g(sweep: pd.DataFrame, thresholds) -> dict[int, str]:
    """The g (as text) of least mean RMS per threshold (thresholds without GAP rows left out)."""
    best = {}
    for t in thresholds:
        gap = sweep[(sweep["metric"] == "GAP") & (sweep["threshold"] == t)]
        if len(gap):
            best[t] = gap.loc[gap["rms"].idxmin(), "g"]
    return best


def per_topic_values(runs, qrels, metrics, depth, score_precision="single"):
    """(names, topics, {metric: (R, n) per-topic values}) over the topics every run retrieved for."""
    from maxent.ranked import rank_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs(runs, qrels, depth=depth, complete=True, score_precision=score_precision)
    names = [r.name for r in runs]
    topics = list(dict.fromkeys(lists.topics))
    return names, topics, {str(m): m.value(lists).reshape(len(names), len(topics)) for m in metrics}


def bootstrap_tables(names, values: dict, n_boot, seed, alpha, top_k):
    """(ASL per pair, sorted, per metric; discriminative power per metric) from Sakai's
    paired bootstrap test on every pair of runs."""
    from maxent.stats import discriminative_power

    asl_rows, power_rows = [], []
    for metric, v in values.items():
        pairs, asl, frac = discriminative_power(v, n_boot=n_boot, seed=seed, alpha=alpha)
        means = v.mean(axis=1)
        top = set(np.argsort(-means, kind="stable")[:top_k].tolist())
        in_top = np.array([a in top and b in top for a, b in pairs], dtype=bool)
        order = np.argsort(asl, kind="stable")
        for rank, k in enumerate(order):
            asl_rows.append({"metric": metric, "rank": rank + 1, "run_a": names[pairs[k, 0]],
                             "run_b": names[pairs[k, 1]], "asl": asl[k], f"top{top_k}": bool(in_top[k])})
        power_rows.append({"metric": metric, "pairs": len(asl), "significant": float(frac),
                           f"pairs top{top_k}": int(in_top.sum()),
                           f"significant top{top_k}": float((asl[in_top] < alpha).mean()) if in_top.any() else np.nan})
    return pd.DataFrame(asl_rows), pd.DataFrame(power_rows)


def topic_set(text: str | None, name: str = "topics") -> set[str] | None:
    """Topics from ``lo-hi`` ranges and single ids, comma-separated (None: all)."""
    if not text:
        return None
    keep = set()
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            try:
                keep.update(str(x) for x in range(int(lo), int(hi) + 1))
            except ValueError:
                raise ParameterError(f"{name}: bad range {part!r}") from None
        else:
            keep.add(part.strip())
    return keep


def restrict_topics(runs, qrels, keep, name: str = "topics"):
    """Runs and qrels limited to the topics in ``keep`` (None: unchanged)."""
    from maxent.trec import Qrels

    if keep is None:
        return runs, qrels
    kb = np.array(sorted(k.encode() for k in keep))
    runs = [r.subset(np.isin(r.qid, kb)) for r in runs]
    topics = [t for t in qrels.topics if t in keep]
    if not topics:
        raise ParameterError(f"{name}: no qrels topic selected")
    qrels = Qrels(qrels.path, topics, {t: qrels.docnos[t] for t in topics},
                  {t: qrels.grades[t] for t in topics}, max(int(qrels.grades[t].max()) for t in topics))
    return runs, qrels


@dataclasses.dataclass(frozen=True)
class GapThresholds:
    """What :func:`gap_thresholds` returns.

    instances : one row per (run, topic, metric, threshold), as :func:`maxent.informativeness`
    sweep : mean PR-curve RMS / MAE per g and threshold, the reference metric's as rows,
        with bootstrap intervals over topics (:func:`sweep_table`)
    best : the g of least RMS per threshold (text ``g1,g2,..``)
    asl, discriminative : the paired bootstrap test per pair and the fraction of pairs
        significant per metric (None when ``bootstrap=0``)
    """

    instances: pd.DataFrame
    sweep: pd.DataFrame
    best: dict
    asl: pd.DataFrame | None
    discriminative: pd.DataFrame | None
    grid: tuple
    thresholds: tuple


def bootstrap_metrics(c: int, best: dict, reference: str, bootstrap_g=None) -> list:
    """The metrics of the discriminative-power test: GAP at the uniform g and at the best g per
    threshold (or at ``bootstrap_g``), AP and the reference, without repeats."""
    if bootstrap_g:
        gs = [tuple(float(x) for x in s.split(",")) if isinstance(s, str) else tuple(s) for s in bootstrap_g]
    else:
        gs = [tuple([1.0 / c] * c)] + [tuple(float(x) for x in v.split(",")) for v in best.values()]
    return list(dict.fromkeys([parse_measure(g_name(g)) for g in gs]
                              + [parse_measure("AP"), parse_measure(reference)]))


def _prepare(qrels, runs, keep, thresholds_of, step, reference, min_relevant, depth, graded_pr,
             score_precision, opt="", source="qrels"):
    """(runs, qrels cut to ``keep``, c, grid of g, the sweep's Settings); ``opt``: "--" in the command."""
    runs, qrels = restrict_topics(runs, qrels, keep, opt + "topics")
    c = qrels.max_grade
    if c < 2:
        raise ParameterError(f"{source}: GAP thresholds need graded qrels (max grade {c})")
    thresholds = thresholds_of(c)
    grid = simplex_grid(c, step, opt + "step")
    metrics = tuple(g_name(g) for g in grid) + (str(parse_measure(reference)),)
    graded_pr = resolve_graded_pr(graded_pr, c, "--graded-pr" if opt else "graded_pr")
    return runs, qrels, c, grid, Settings(metrics, thresholds, "retrieved", "recall", int(min_relevant),
                                          int(depth), ("P@10",), graded_pr, score_precision=score_precision)


def gap_thresholds(qrels, runs, *, step: float = 0.1, threshold=None, min_relevant: int = 5, depth: int = 1000,
                   reference: str = "nDCG", topics=None, bootstrap: int = 1000, seed: int = 0, alpha: float = 0.05,
                   top_k: int = 10, bootstrap_g=None, graded_pr=None,
                   score_precision: str = "single") -> GapThresholds:
    """Which g makes GAP most informative (and discriminative) on these runs?

    Parameters
    ----------
    qrels, runs : anything :func:`maxent.inputs.as_qrels` / :func:`maxent.inputs.as_runs` reads
        (paths, objects, PyTerrier or ir_datasets frames, pytrec_eval dicts); graded qrels
    step : grid step of g over the simplex (must divide 1)
    threshold : thresholds at which PR curves are scored (default: every grade >= 1)
    min_relevant : keep lists with at least this many relevant retrieved at every threshold
    depth : documents per topic kept; reference : the metric GAP is compared with
    topics : keep only these topics (``"601-650"``, ``"1,2,5"`` or a collection of ids)
    bootstrap : bootstrap samples B of the discriminative-power test (0: skip the test)
    seed, alpha, top_k : its seed, significance level and the top runs of its inner plot
    bootstrap_g : g settings tested (default: uniform and the best per threshold)
    graded_pr : also score the graded PR curve with these threshold probabilities
        (``"uniform"`` or g_1..g_c)

    Returns
    -------
    GapThresholds
    """
    from maxent.inputs import as_qrels, as_runs

    def checked_thresholds(c):  # the thresholds; then the other arguments are checked
        items = (list(range(1, c + 1)) if threshold is None
                 else [threshold] if np.isscalar(threshold) else list(threshold))
        if not items or not all(isinstance(t, (int, np.integer)) and 1 <= t <= c for t in items):
            raise ParameterError(f"threshold: expected integers in 1..{c}, got {threshold!r}")
        for name, v, ok in (("min_relevant", min_relevant, min_relevant >= 0), ("depth", depth, depth >= 1),
                            ("bootstrap", bootstrap, bootstrap >= 0), ("top_k", top_k, top_k >= 1)):
            if not isinstance(v, (int, np.integer)) or not ok:
                bound = ">= 0" if name in ("min_relevant", "bootstrap") else ">= 1"
                raise ParameterError(f"{name}: expected an integer {bound}, got {v!r}")
        if not 0 < alpha < 1:
            raise ParameterError(f"alpha: expected a level in (0, 1), got {alpha!r}")
        return tuple(int(t) for t in items)

    keep = topic_set(topics) if isinstance(topics, str) or topics is None else {str(t) for t in topics}
    runs, qrels, c, grid, settings = _prepare(as_qrels(qrels), sorted(as_runs(runs), key=lambda r: r.name),
                                              keep, checked_thresholds, step, reference, min_relevant, depth,
                                              graded_pr, score_precision)
    thresholds = settings.thresholds
    inst = pd.concat([analyse_run(r, qrels, settings) for r in runs], ignore_index=True)
    sweep = sweep_table(inst, grid, c)
    best = best_g(sweep, thresholds)
    asl = power = None
    if bootstrap:
        names, _, values = per_topic_values(runs, qrels, bootstrap_metrics(c, best, reference, bootstrap_g), depth,
                                            score_precision)
        asl, power = bootstrap_tables(names, values, bootstrap, seed, alpha, top_k)
    return GapThresholds(inst, sweep, best, asl, power, tuple(grid), thresholds)


# ------------------------------------------------------------------ the command
def _fig_sweep(table: pd.DataFrame, thresholds, out: Path, binary=None) -> None:
    """One panel per threshold (and the graded PR curve, at ``binary``, the collection's binary
    level: :func:`analysis.plots.binary_threshold`), at most three a row, one legend below."""
    plt = _cli.pyplot()
    from analysis.plots import GSweepDisplay

    binary = thresholds[0] if binary is None or binary not in thresholds else binary
    graded = "graded rms" in table
    panels = len(thresholds) + graded
    rows = -(-panels // 3)
    cols = -(-panels // rows)     # four panels: two rows of two
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 4.4 * rows), squeeze=False, layout="constrained")
    flat = list(axes.ravel())
    shown = [GSweepDisplay.from_sweep(table, t, binary=len(thresholds) > 1 and t == binary, ax=ax, legend=False)
             for ax, t in zip(flat, thresholds)]
    if graded:
        shown.append(GSweepDisplay.from_sweep(table, binary, column="graded rms", ax=flat[len(thresholds)],
                                              legend=False))
    for ax in flat[panels:]:
        ax.remove()
    if shown and shown[0].g_values().shape[1] != 3:    # one scale of RMS for the line and point panels
        lo = min(d.ax_.get_ylim()[0] for d in shown)
        hi = max(d.ax_.get_ylim()[1] for d in shown)
        for d in shown:
            d.ax_.set_ylim(lo, hi)
    handles, labels = shown[0].ax_.get_legend_handles_labels() if shown else ([], [])
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle("Informativeness of GAP across threshold probabilities g "
                 "(Robertson, Kanoulas & Yilmaz 2010, Fig. 2)")
    _cli.save_figure(fig, out / "sweep.png")


def _fig_asl(asl: pd.DataFrame, top_k: int, alpha: float, out: Path) -> None:
    plt = _cli.pyplot()
    from analysis.plots import ASLDisplay

    fig, (ax, top) = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True, layout="constrained")
    d = ASLDisplay.from_asl(asl, top_k=top_k, alpha=alpha, ax=ax, top_ax=top, legend=False)
    handles, labels = d.ax_.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), fontsize=8, frameon=False)
    ax.set_title("all pairs of runs")
    fig.suptitle(f"Discriminative power (paired bootstrap, dotted: alpha = {alpha:g}; "
                 "Robertson, Kanoulas & Yilmaz 2010, Fig. 3)", fontsize=10)
    _cli.save_figure(fig, out / "asl.png")


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
    with phase("reading the qrels and runs"):   # the options were checked by _cli.check_options
        qrels = read_qrels(args.qrels)
        runs = sorted(read_runs(args.runs), key=lambda r: r.name)
    runs, qrels, c, grid, settings = _prepare(
        qrels, runs, topic_set(args.topics, "--topics"),
        lambda c: _cli.parse_thresholds(args.threshold) or tuple(range(1, c + 1)),
        args.step, args.reference, args.min_relevant, args.depth, args.graded_pr, args.score_precision, "--",
        args.qrels)
    _cli.check_against_qrels(args, qrels, settings.thresholds)
    metrics, thresholds, graded_pr = settings.metrics, settings.thresholds, settings.graded_pr
    name = _cli.dataset_name(args.runs, args.dataset)
    out = args.out or (_cli.SCRATCH / "gap_thresholds" / name)
    config = dict(metrics=metrics, thresholds=thresholds, min_relevant=args.min_relevant, depth=args.depth,
                  qrels=str(Path(args.qrels).resolve()), topics=args.topics, runs=[r.name for r in runs],
                  **({"graded_pr": graded_pr} if graded_pr is not None else {}),
                  **({"score_precision": args.score_precision} if args.score_precision != "single" else {}))
    _cli.report_unknown_topics(runs, qrels)  # after the arguments are known good
    with _outputs.own_output(out, OUTPUTS, config, args.resume):
        _cli.report_depth_cut(runs, qrels, args.depth)
        with phase(f"solving the maximum-entropy problems of {len(runs)} runs"):
            inst = run_instances(runs, qrels, settings, out, config, args)
        with _outputs.staged_outputs(out, OUTPUTS) as stage:   # renamed into out/ once all are written
            _analyse(args, runs, qrels, c, thresholds, grid, settings, name, inst, stage)
    print(f"({time.time() - t0:.1f} s) results in {out}")
    return 0


def _analyse(args, runs, qrels, c, thresholds, grid, settings, name, inst, out) -> None:
    from analysis.plots import binary_threshold

    graded_pr = settings.graded_pr
    _cli.atomic_write_csv(out / "instances.csv", inst)
    table = sweep_table(inst, grid, c)
    _cli.atomic_write_csv(out / "sweep.csv", table)
    _fig_sweep(table, thresholds, out, binary_threshold(c, thresholds))

    print(f"GAP threshold probabilities on {name}: {len(runs)} runs, grades 0..{c}, step {args.step}")
    best = best_g(table, thresholds)
    for t in thresholds:
        print(f"  threshold >= {t}: {_best_text(table, t) or 'no eligible lists'}")
    if graded_pr is not None and len(table) and (text := _best_text(table, thresholds[0], "graded ")):
        print(f"  graded PR curve (g = {','.join('%.4g' % x for x in graded_pr)}): {text}")

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


def _best_text(table: pd.DataFrame, t, prefix: str = "") -> str | None:
    """The g of least ``prefix``-RMS at threshold ``t`` and the reference's RMS (None: no GAP rows)."""
    at = table[(table["threshold"] == t) & table[f"{prefix}rms"].notna()]
    gap, ref = at[at["metric"] == "GAP"], table[(table["metric"] != "GAP") & (table["threshold"] == t)]
    if not len(gap):
        return None
    b = gap.loc[gap[f"{prefix}rms"].idxmin()]
    ref_txt = f"{ref['metric'].iloc[0]} RMS {ref[prefix + 'rms'].iloc[0]:.4f}" if len(ref) else ""
    return (f"best g = ({b['g']}) RMS {b[prefix + 'rms']:.4f} MAE {b[prefix + 'mae']:.4f} "
            f"over {int(b[prefix + 'instances'])} lists; {ref_txt}")


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
