"""``python -m analysis.active_eval``: active evaluation of rankers on a labelling budget
(Sawade et al. 2013) on real TREC runs + qrels or LETOR data.

Which queries should be judged so that a ranker's mean DCG@k / ERR@k (or the difference of
two rankers) is estimated most accurately for a labelling cost? Compares ``active`` (eqs.
16/17) with the ablations ``active_uniD`` (uniform label model), ``active_uniC`` (unit costs)
and ``passive`` (uniform sampling), over ``--repetitions`` runs of Algorithm 1 per budget.

TREC mode (default: the bundled sample): rankers are the runs, the pool the topics, the qrels
the oracle (unjudged = 0); a query costs the distinct documents in the rankers' top k (mean 1).
LETOR mode (``--letor DIR``): rankers are trained on DIR's training file, the pool is the test
file's queries, a document costs ln(2 + its length).

Writes to ``--out``: errors.csv (Fig. 2), selection.csv (Fig. 3), update.csv (Fig. 4),
sampling.csv (Fig. 6), costs.csv (Fig. 1), each with a PNG, and summary.csv + saved.png: the
share of passive's labelling effort each active method saves at equal error, read off
passive's error curve (so the budgets should reach past those of interest).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

from analysis import _cli
from analysis import _outputs
from maxent.cli.progress import phase
from maxent.errors import InputError, MaxEntError, ParameterError

EXPERIMENTS = ("errors", "selection", "update", "sampling")
DEFAULT_METRICS = "DCG(gain=exp)@10,ERR@10"

EPILOG = """examples:
  python -m analysis.active_eval                                  # bundled TREC-COVID runs
  python -m analysis.active_eval --runs ../shared/data/robust03/runs \\
      --qrels ../shared/data/robust03/qrels/robust03_qrels.txt --budgets 10,20,40
  python -m analysis.active_eval --metrics ERR@10 --budgets 5,10,20 --repetitions 5000
  python -m analysis.active_eval --letor ../shared/data/ltr/mslr_web10k_5k --budgets 5,10,20
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.active_eval", description=_cli.describe(__doc__.splitlines()[0]),
                                epilog=EPILOG, formatter_class=_cli.HelpFormatter)
    _cli.add_data(p, "qrels file: the labelling oracle (unjudged = grade 0)", ranks=False)
    p.add_argument("--letor", default=None, metavar="DIR",
                   help="LETOR mode: folder with a *train* file (rankers and relevance model) and a *test* "
                        "file (the pool); replaces --runs/--qrels")
    _cli.add_measures(p, "DCG@k / ERR@k measures; DCG@10 is trec_eval's linear-gain DCG, DCG(gain=exp)@10 the "
                         "paper's; ERR uses 2^grade - 1 and the highest grade", DEFAULT_METRICS)
    p.add_argument("--metric", dest="measures", action="append", help=argparse.SUPPRESS)   # its former name
    p.add_argument("--budgets", default="5,10,20",
                   help="comma-separated labelling budgets, in units of the mean query cost")
    p.add_argument("--repetitions", type=int, default=200,
                   help="runs of Algorithm 1 per method and budget (the paper: 5000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (sampling, folds, index update)")
    p.add_argument("--model", default="logit", choices=("logit", "forest"),
                   help="relevance model p(y|x, doc): ordered logit (MAP) or random forests on y > k "
                        "(needs scikit-learn)")
    p.add_argument("--folds", type=int, default=5, help="TREC mode: cross-fitting folds over topics")
    p.add_argument("--depth", type=int, default=100,
                   help="TREC mode: each run's top documents used as candidates and features")
    p.add_argument("--rankers", default=None, help="comma-separated ranker names (default: all)")
    p.add_argument("--max-pairs", type=int, default=10,
                   help="pairs of rankers compared in the selection experiment (a seeded sample)")
    p.add_argument("--update-fraction", type=float, default=0.1,
                   help="share of each result list removed in the simulated index update")
    p.add_argument("--mix", type=float, default=0.0,
                   help="share of uniform sampling mixed into q (0 = the paper's q*)")
    p.add_argument("--length-feature", type=int, default=14,
                   help="LETOR mode: 0-based column of the document length (MSLR-WEB feature 15); "
                        "-1 = unit document costs")
    p.add_argument("--experiments", default=",".join(EXPERIMENTS),
                   help="comma-separated subset of " + ", ".join(EXPERIMENTS))
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default out/active_eval/<dataset>/)")
    p.add_argument("--dataset", default=None, help="dataset name used in the default output folder")
    p.add_argument("--resume", action="store_true",
                   help="skip experiments whose CSV was already written with the same settings")
    p.add_argument("--no-progress", action="store_true", help=_cli.NO_PROGRESS_HELP)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _floats(text: str, what: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"--{what}: expected comma-separated numbers, got {text!r}") from None
    if not vals:
        raise ParameterError(f"--{what}: no value given")
    return vals


def _metrics(names: list[str]):
    from maxent import parse_measure
    from maxent.active import check_metric

    out = []
    for name in names:
        m = parse_measure(name)
        check_metric(m)
        out.append(m)
    if not out:
        raise ParameterError("--metrics: no measure given")
    return out


def _trec(args):
    from maxent import read_qrels, read_runs
    from maxent.active import crossfit_probabilities, trec_pool

    runs = read_runs(args.runs)
    qrels = read_qrels(args.qrels)
    pool = trec_pool(runs, qrels, depth=args.depth)
    P = crossfit_probabilities(pool, args.model, folds=min(args.folds, pool.n_queries), seed=args.seed)
    return pool, P


def _letor_files(folder: Path) -> tuple[Path, Path]:
    if not folder.is_dir():
        raise InputError(folder, None, "--letor needs a folder with a *train* and a *test* file")
    train, test = (sorted(f for f in folder.iterdir() if kind in f.name and f.suffix in (".txt", ".gz", ""))
                   for kind in ("train", "test"))
    if not train or not test:
        raise InputError(folder, None, "no *train* and *test* LETOR files in this folder")
    return train[0], test[0]


def _letor(args, metrics):
    """Rankers trained on the training file; the pool is the test file's queries."""
    from maxent.active import OrderedLogit, fitted_probabilities, letor_pool
    from maxent.letor import read_letor

    train_file, test_file = _letor_files(Path(args.letor))
    train, test = read_letor(train_file), read_letor(test_file)
    F = max(train.n_features, test.n_features)
    if train.n_features != F or test.n_features != F:
        train, test = read_letor(train_file, n_features=F), read_letor(test_file, n_features=F)
    G = int(max(train.y.max(), test.y.max())) + 1
    scores = {}
    logit = OrderedLogit(levels=G).fit(train.X, train.y)
    scores["logit"] = logit.score(test.X)
    try:
        from analysis.learning.peer import lightgbm_lambdarank

        booster = lightgbm_lambdarank(train, None, num_trees=100, seed=args.seed, early_stopping=None)
        scores["lightgbm"] = booster.predict(test.X)
    except ImportError:
        print('note: lightgbm not installed (pip install -e ".[bench]"): no lightgbm ranker', file=sys.stderr)
    from maxent import parse_measure
    from maxent.letor import standardize
    from maxent.ltr.models import make_model
    from maxent.ltr.train import QuerySet, train_lambdarank

    tr, te = standardize(train, test)
    model = make_model("linear", F)
    with np.errstate(over="ignore"):   # exp overflow in the pairwise sigmoid saturates harmlessly
        res = train_lambdarank(model, QuerySet(tr, G), parse_measure("nDCG@10"), epochs=20,
                               learning_rate=1e-2, seed=args.seed)
    scores["lambdarank"] = model.score(res.theta, te.X)
    try:
        from maxent.active import CumulativeForest

        scores["forest"] = CumulativeForest(levels=G, n_estimators=50, random_state=args.seed).fit(
            train.X, train.y).score(test.X)
    except ParameterError as e:
        print(f"note: {e}: no forest ranker", file=sys.stderr)
    length = None if args.length_feature < 0 else args.length_feature
    pool = letor_pool(test, scores, length_feature=length, levels=G)
    P = fitted_probabilities(pool, train.X, train.y, args.model, seed=args.seed)
    return pool, P


CITE = "Sawade et al. 2013"
Z95 = 1.959963984540054  # the bars: +-1.96 Monte-Carlo standard errors
# the experiments of Algorithm 1: the column naming the ranker or pair, the error and its standard
# error, the y label and the title of their figure
CURVES = {"errors": ("ranker", "rmse", "rmse_se", "RMSE of the mean metric",
                     "estimation error of the mean metric ({cite}, Fig. 2)"),
          "selection": ("pair", "wrong_rate", "wrong_se", "model-selection error",
                        "choosing the better of two rankers ({cite}, Fig. 3)"),
          "update": ("ranker", "rmse", "rmse_se", "RMSE of the difference",
                     "index update, {fraction:.0%} of each list removed ({cite}, Fig. 4)")}


def _figure_legend(fig, ax) -> None:
    """``ax``'s legend under the panels (the series are the same in each), where it covers no data."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8, frameon=False)


def _plot_curves(df, key, value, err, ylabel, title, path):
    """One panel per metric: each method's ``value`` against the budget, with 95% intervals."""
    import matplotlib.ticker

    plt = _cli.pyplot()
    d = df[df[key] == "all"]
    metrics = list(dict.fromkeys(d["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 4.0), squeeze=False,
                             layout="constrained")
    for ax, metric in zip(axes[0], metrics):
        for method, g in d[d["metric"] == metric].groupby("method", sort=False):
            ax.errorbar(g["budget"], g[value], yerr=Z95 * g[err], marker="o", ms=4, capsize=3, label=method)
        ax.set_xscale("log")
        budgets = sorted(d["budget"].unique())
        ax.set_xticks(budgets, [f"{b:g}" for b in budgets])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("labelling budget (mean query cost = 1, log scale)")
        ax.set_ylabel(ylabel)
        ax.set_title(metric, fontsize=10)
        ax.grid(alpha=0.3)
    _figure_legend(fig, axes[0][0])
    fig.suptitle(f"{title}; bars: 95% intervals over the repetitions", fontsize=10)
    _cli.save_figure(fig, path)


def _plot_saved(summary, path):
    """Share of passive's labelling effort active saves at equal error, per experiment and metric;
    open markers are bounds, the dashed line the finite pool's ceiling 1 - budget / pool."""
    plt = _cli.pyplot()
    metrics = list(dict.fromkeys(summary["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 4.0), squeeze=False,
                             layout="constrained", sharey=True)
    for ax, metric in zip(axes[0], metrics):
        for exp, g in summary[summary["metric"] == metric].groupby("experiment", sort=False):
            yerr = [(g["saved"] - g["saved_lo"]).clip(lower=0), (g["saved_hi"] - g["saved"]).clip(lower=0)]
            line = ax.errorbar(g["budget"], g["saved"], yerr=yerr, marker="o", ms=4, capsize=3, label=exp)
            bound = g["saved_side"] != ""
            ax.plot(g.loc[bound, "budget"], g.loc[bound, "saved"], "o", ms=9, mfc="none",
                    color=line[0].get_color())
        ax.axhline(0, color="k", lw=0.8)
        b = np.linspace(summary["budget"].min(), summary["pool_queries"].iloc[0], 50)
        ax.plot(b, 1 - b / summary["pool_queries"].iloc[0], "k--", lw=0.8, label="ceiling 1 - budget / pool")
        ax.set_xlabel("labelling budget of active (mean query cost = 1)")
        ax.set_title(metric, fontsize=10)
        ax.grid(alpha=0.3)
    _figure_legend(fig, axes[0][0])
    axes[0][0].set_ylabel("1 - budget / passive's budget at equal error")
    fig.suptitle(f"labelling effort active saves against passive (after {CITE}); bars: 95% intervals; "
                 "circled: a bound (active's error lies outside passive's measured curve)", fontsize=9)
    _cli.save_figure(fig, path)


def _plot_sampling(df, errors, path):
    """Fig. 6: q over cost and expected value, one panel per (ranker or pair, metric)."""
    plt = _cli.pyplot()
    groups = list(df.groupby(["ranker", "metric"], sort=False))
    n = len(groups) + 1
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.8 * rows), squeeze=False, layout="constrained")
    flat = list(axes.ravel())
    for ax, ((ranker, metric), g) in zip(flat, groups):
        sc = ax.scatter(g["cost"], g["expected"], c=g["q_active"], cmap="viridis", s=30)
        fig.colorbar(sc, ax=ax, label="q(x)")
        pair = "|" in ranker
        ax.set_xlabel("query cost lambda(x)" + (" (union of both top k)" if pair else ""))
        ax.set_ylabel("E[delta | x; theta]" if pair else "E[L | x; theta]")
        ax.set_title(f"{'eq. 17' if pair else 'eq. 16'}, {ranker}: {metric}", fontsize=9)
    fig.suptitle(f"sampling distributions q ({CITE}, eqs. 16-17, Fig. 6)", fontsize=10)
    ax = flat[len(groups)]
    if errors is not None:
        e = errors[(errors["ranker"] == "all") & (errors["metric"] == groups[0][0][1])]
        b = sorted(e["budget"].unique())[len(e["budget"].unique()) // 2]
        e = e[e["budget"] == b]
        ax.bar(e["method"], e["queries"])
        ax.set_ylabel(f"distinct queries labelled, budget {b:g}")
        ax.tick_params(axis="x", rotation=20)
    for extra in flat[len(groups) + 1:]:
        extra.set_visible(False)
    _cli.save_figure(fig, path)


def _plot_costs(df, path):
    plt = _cli.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    fig.suptitle(f"query costs (after {CITE}, Fig. 1)", fontsize=10)
    axes[0].hist(df["n_candidates"], bins=20)
    axes[0].set_xlabel("candidate documents per query")
    axes[1].hist(df["cost_union"], bins=20)
    axes[1].set_xlabel("cost of labelling all rankers' top k (mean 1)")
    for ax in axes:
        ax.set_ylabel("queries")
    _cli.save_figure(fig, path)


def _summary(frames: dict, pool_queries: int):
    """Per experiment, metric and budget: each method's RMSE and the share of passive's labelling
    effort it saves at equal error (``effort_saved``), with a 95% interval from the Monte-Carlo
    standard errors; ``*_side`` ">" marks a lower bound, "<" an upper one. ``queries_*``: mean
    distinct queries labelled. A budget of ``pool_queries`` (costs have mean 1) labels the whole pool."""
    import pandas as pd

    from maxent.active import effort_saved, effort_saved_interval

    parts = []
    for name, (key, *_) in CURVES.items():
        if name not in frames:
            continue
        d = frames[name][frames[name][key] == "all"]
        for metric, g in d.groupby("metric", sort=False):
            by = {m: x.sort_values("budget").reset_index(drop=True) for m, x in g.groupby("method", sort=False)}
            p = by["passive"]
            budgets = p["budget"].to_numpy()
            part = pd.DataFrame(dict(experiment=name, metric=metric, budget=budgets, pool_queries=pool_queries,
                                     queries_active=by["active"]["queries"], queries_passive=p["queries"],
                                     rmse_active=by["active"]["rmse"], rmse_passive=p["rmse"]))
            for method in ("active", "active_uniD", "active_uniC"):
                a = by[method]
                saved, bp, side = effort_saved(budgets, a["rmse"], p["rmse"], whole=pool_queries)
                suffix = "" if method == "active" else method[len("active"):]
                part[f"passive_budget{suffix}"] = bp
                part[f"saved{suffix}"] = saved
                part[f"saved{suffix}_side"] = side
                if method == "active":
                    lo, hi = effort_saved_interval(budgets, a["rmse"], a["rmse_se"], p["rmse"], p["rmse_se"],
                                                   whole=pool_queries)
                    part["saved_lo"], part["saved_hi"] = lo, hi
            if "wrong_rate" in g:
                part["wrong_active"] = by["active"]["wrong_rate"].to_numpy()
                part["wrong_passive"] = p["wrong_rate"].to_numpy()
            parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _body(args) -> int:
    metrics = _metrics(_cli.measure_names(args.measures, _cli.split_names(DEFAULT_METRICS)))
    budgets = _floats(args.budgets, "budgets")
    experiments = [e.strip() for e in args.experiments.split(",") if e.strip()]
    for e in experiments:
        if e not in EXPERIMENTS:
            raise ParameterError(f"--experiments: unknown experiment {e!r}; choose from {', '.join(EXPERIMENTS)}")
    if args.repetitions < 1:
        raise ParameterError(f"--repetitions must be >= 1, got {args.repetitions}")
    if args.letor:
        dataset = args.dataset or Path(args.letor).resolve().name
    else:
        dataset = _cli.dataset_name(args.runs, args.dataset)
    out = args.out or (_cli.SCRATCH / "active_eval" / dataset)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
              if k not in ("out", "resume", "no_progress", "debug", "experiments", "dataset")}
    with _outputs.own_output(out, OUTPUTS, config, args.resume):   # one analysis per folder at a time
        return _run(args, out, metrics, budgets, experiments, dataset, config)


OUTPUTS = ("*.csv", "*.png")   # replaced together, once all are written (see analysis._outputs)


def _input_files(args) -> list[Path]:
    """The files the pool is read from: the LETOR pair, or the qrels and the runs."""
    if args.letor:
        return list(_letor_files(Path(args.letor)))
    paths = [Path(p) for p in (args.runs if isinstance(args.runs, (list, tuple)) else [args.runs])]
    files = [f for p in paths for f in (sorted(x for x in p.iterdir() if x.is_file()) if p.is_dir() else [p])]
    return [Path(args.qrels), *files]


def _run(args, out: Path, metrics, budgets, experiments, dataset, config) -> int:
    import hashlib

    import pandas as pd

    from maxent.active import absolute_errors, query_costs, sampling_table, selection_errors, update_errors

    chunks = _outputs.prepare_chunks(out, config, args.resume)
    # each experiment's results are a chunk that --resume reuses only if made from these inputs
    data = hashlib.sha256("".join(_outputs.file_digest(f) for f in _input_files(args)).encode()).hexdigest()
    inputs = {"data": data, "options": hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()}

    with phase("reading the pool and fitting the relevance model"):
        pool, P = _letor(args, metrics) if args.letor else _trec(args)
    names = list(pool.rankings)
    if args.rankers:
        want = [r.strip() for r in args.rankers.split(",") if r.strip()]
        unknown = [r for r in want if r not in pool.rankings]
        if unknown:
            raise ParameterError(f"--rankers: unknown ranker(s) {', '.join(unknown)}; have {', '.join(names)}")
        names = want
    rng = np.random.default_rng(args.seed)
    pairs = list(itertools.combinations(names, 2))
    if len(pairs) > args.max_pairs:
        pick = np.sort(rng.choice(len(pairs), args.max_pairs, replace=False))
        pairs = [pairs[i] for i in pick]
    steps = len(metrics) * (len(names) * (("errors" in experiments) + ("update" in experiments))
                            + len(pairs) * ("selection" in experiments))
    frames = {}
    with _cli.progress(steps, "active_eval", args.no_progress) as bar:
        kw = dict(mix=args.mix, progress=lambda: bar.update(1))
        for exp in ("errors", "selection", "update"):
            if exp not in experiments:
                continue
            if args.resume:
                frames[exp] = _outputs.read_chunk(chunks, exp, inputs, f"experiment {exp}")
                if frames[exp] is not None:
                    continue
            if exp == "selection" and len(names) < 2:
                raise ParameterError("the selection experiment needs at least two rankers")
            run, which, kws = {"errors": (absolute_errors, names, kw),
                               "selection": (selection_errors, pairs, kw),
                               "update": (update_errors, names, dict(kw, fraction=args.update_fraction))}[exp]
            rng_of = lambda m: np.random.default_rng([args.seed, EXPERIMENTS.index(exp), metrics.index(m)])
            frames[exp] = pd.concat([run(m, pool, P, which, budgets, args.repetitions, rng_of(m), **kws)
                                     for m in metrics], ignore_index=True)
            _outputs.write_chunk(chunks, exp, frames[exp], inputs)
            # from the chunk's digits, as a resumed run reads them, so that both write the same
            frames[exp] = _outputs.read_chunk(chunks, exp, inputs, f"experiment {exp}")
    with phase("writing the tables and figures"), _outputs.staged_outputs(out, OUTPUTS) as stage:
        for exp, frame in frames.items():
            _cli.atomic_write_csv(stage / f"{exp}.csv", frame)
        if "sampling" in experiments:
            samp = pd.concat([sampling_table(m, pool, P, names[0], mix=args.mix) for m in metrics]
                             + [sampling_table(m, pool, P, *pairs[0], mix=args.mix) for m in metrics if pairs],
                             ignore_index=True)
            _cli.atomic_write_csv(stage / "sampling.csv", samp)
            k = max((m.cutoff or pool.rankings[names[0]].shape[1]) for m in metrics)
            tops = [pool.rankings[n][:, :k] for n in names]
            costs = pd.DataFrame(dict(query=pool.queries, n_candidates=pool.valid.sum(axis=1),
                                      n_labelled_union=_union_size(tops, pool.grades.shape[1]),
                                      cost_union=query_costs(pool.doc_cost, *tops)))
            _cli.atomic_write_csv(stage / "costs.csv", costs)
            _plot_sampling(samp, frames.get("errors"), stage / "sampling.png")
            _plot_costs(costs, stage / "costs.png")
        for exp, (key, value, err, ylabel, title) in CURVES.items():
            if exp in frames:
                _plot_curves(frames[exp], key, value, err, ylabel,
                             title.format(cite=CITE, fraction=args.update_fraction), stage / f"{exp}.png")
        summary = _summary(frames, pool.n_queries)
        if len(summary):
            _cli.atomic_write_csv(stage / "summary.csv", summary)
            _plot_saved(summary, stage / "saved.png")
    if len(summary):
        cols = [c for c in ("experiment", "metric", "budget", "rmse_active", "rmse_passive", "passive_budget",
                            "saved", "saved_side", "saved_lo", "saved_hi", "saved_uniD", "saved_uniC",
                            "wrong_active", "wrong_passive") if c in summary]
        print(f"{dataset}: {pool.n_queries} pool queries, {len(names)} rankers, {len(pairs)} pairs, "
              f"{args.repetitions} repetitions; saved = 1 - budget / passive_budget, passive_budget = the budget "
              "at which passive's error curve reaches active's error (interpolated; side '>': beyond the "
              "largest budget, a lower bound), saved_lo..saved_hi its 95% interval")
        print(summary[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"results in {out}")
    return 0


def _union_size(tops, U):
    Q = tops[0].shape[0]
    used = np.zeros((Q, U + 1), dtype=bool)
    rows = np.arange(Q)[:, None]
    for t in tops:
        used[np.broadcast_to(rows, t.shape), np.where(t >= 0, t, U)] = True
    return used[:, :U].sum(axis=1)


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
