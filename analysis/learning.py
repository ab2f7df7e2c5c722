"""Informativeness versus learning: LambdaRank trained for one metric, tested on another.

Reproduces, on a shared learning-to-rank sample, the experiments of paper 000 section 5
(with paper 001's protocol):

* ``table``: train-metric x test-metric table (paper 000 Tables 2-4), 0-100 scale, with
  marks: ``*`` = significantly different from training on the test metric itself, ``o`` =
  AP and nDCG rows significantly different (paired t, Wilcoxon and sign test all at 95%);
* ``curves``: learning curves per epoch (paper 000 Fig. 5);
* ``sweep``: training-set size x feature count (paper 000 Fig. 4);
* ``optimality``: Monte-Carlo local-optimality counts (paper 000 Table 5): each table cell's
  model, 459 random unit directions x steps 0.1..1.0, alterations improving the test metric
  by > 0 and by > epsilon on train and test;
* ``optimality001``: paper 001's protocol: each model at the weights validation selects for
  its own training metric, that metric on the training set along random directions (step-size
  curves, Figs. 1-4) and along per-weight directions +-e_j;
* ``pairs``: paper 001 Fig. 5: effective training pairs (non-zero lambda) of each training
  metric vs the test value of ``--pairs-target`` (MRR), over the ``--fractions`` training sizes;
* ``approx_error``: paper 002 Figs. 1-2: ApproxNDCG / ApproxAP / ApproxP@10 of real TREC run
  lists (``--approx-runs``, default the bundled TREC-COVID sample) against the true metric as
  alpha grows;
* ``anchor``: LightGBM lambdarank on the same split (needs the ``bench`` extra).

``--model lambdamart`` trains gradient-boosted trees (LightGBM, the ``lightgbm`` extra) on our
lambdas for each training metric (:mod:`maxent.ltr.boosting`), with the same selection per
validation metric (the best number of trees) and the same significance tests, so the tables
exist for linear, net and boosted models (``optimality`` does not apply to trees).

Outputs go to ``out/learning/<dataset>/`` (CSV behind every table and figure); per-run
results are kept under ``runs/`` so ``--resume`` skips finished training runs. Every run
stops when validation has not improved for ``--patience`` epochs (``--epochs`` is the cap),
and every downstream number uses validation-selected weights. Only
orchestration lives here; the mathematics is in ``maxent.letor``, ``maxent.ltr`` and
``maxent.stats``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis._cli import (HelpFormatter, add_common, atomic_write_csv, atomic_write_text, describe,
                           own_output, parallel_map, progress, report_resumed, run_main, save_figure,
                           split_names)
from maxent.errors import MaxEntError, ParameterError
from maxent.letor import RankingData, default_data_root, make_artificial, read_letor, split_queries, standardize
from maxent.ltr.models import make_model
from maxent.ltr.optimality import local_optimality
from maxent.ltr.train import QuerySet, check_objective, evaluate, train_ranker
from maxent.metrics import parse_measure
from maxent.stats import paired_tests

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path("out")

# name -> (train file, test file or None, validation file or None), under the data root
DATASETS = {
    "yahoo": ("yahoo_lightgbm_sample/rank.train", "yahoo_lightgbm_sample/rank.test", None),
    # MQ2008 Fold1 ships only vali.txt and test.txt here: train on vali.txt minus a held-out part
    "mq2008": ("mq2008_fold1/vali.txt", "mq2008_fold1/test.txt", None),
    "mslr": ("mslr_web10k_5k/msn1.fold1.train.5k.txt", "mslr_web10k_5k/msn1.fold1.test.5k.txt", None),
}
# TREC collections turned into MQ2007-agg-style learning sets (maxent.trecltr): name ->
# (runs folder, qrels file) under the data root's parent (../shared/data)
TREC_SETS = {
    "robust03": ("robust03/runs", "robust03/qrels/robust03_qrels.txt"),
    "dl2019": ("trec_dl19_passage/runs", "trec_dl19_passage/qrels/qrels.dl19-passage.txt"),
    "covid": ("trec_covid_r1/runs", "trec_covid_r1/qrels/qrels-rnd1.txt"),
}
PARTS = ("table", "curves", "sweep", "optimality", "optimality001", "pairs", "approx_error", "anchor")
TRAINING_PARTS = ("table", "curves", "sweep", "optimality", "optimality001", "pairs", "anchor")
# (training metric, test metric) pairs of paper 000 Fig. 4, Fig. 5 and Table 5
PAIRS = (("AP", "P@10"), ("P@10", "P@10"), ("nDCG", "nDCG@10"), ("nDCG@10", "nDCG@10"))

EPILOG = """examples:
  python -m analysis.learning                              # Yahoo sample, all parts
  python -m analysis.learning --dataset mq2008 --model linear --epochs 60
  python -m analysis.learning --dataset artificial --n-queries 2000 --parts table,sweep
  python -m analysis.learning --dataset robust03 --model linear --parts table,curves   # TREC runs as features
  python -m analysis.learning --train a.txt --test b.txt --vali c.txt --dataset mine
  python -m analysis.learning --resume --workers 2 --figures-dir figures/learning
  python -m analysis.learning --objective softrank --sigma-s 0.5 --train-metrics AP,nDCG,GAP,P@10
  python -m analysis.learning --objective approxrank --approx-alpha 100 --train-metrics AP,nDCG
  python -m analysis.learning --model lambdamart --parts table,curves   # LightGBM trees, our lambdas
"""


def _csv_list(s: str) -> list[str]:
    return split_names(s)          # commas inside parentheses stay: GAP(g=0.5,0.5)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.learning", description=describe(__doc__.split("\n")[0]),
                                formatter_class=HelpFormatter, epilog=EPILOG)
    add_common(p, "learning")
    p.set_defaults(dataset="yahoo", workers=2)
    d = p.add_argument_group("data")
    d.add_argument("--data-root", type=Path, default=default_data_root(),
                   help="folder holding the shared LTR samples (yahoo, mq2008, mslr; or 'artificial'); "
                        "the TREC sets (robust03, dl2019, covid) are read from its parent")
    d.add_argument("--train", type=Path, help="training file (LETOR/SVMlight, or LibSVM + .query)")
    d.add_argument("--vali", type=Path, help="validation file (default: hold out --vali-fraction of train)")
    d.add_argument("--test", type=Path, help="test file (default: the dataset's test file)")
    d.add_argument("--vali-fraction", type=float, default=0.25, help="queries of train held out for validation")
    d.add_argument("--folds", type=int, default=1,
                   help="artificial and TREC sets: k-fold cross-validation (k >= 3; test = fold k, validation = "
                        "fold k+1); the table pools the test queries of all folds. 1 = one 60/20/20 split")
    d.add_argument("--normalize", choices=("zscore", "query-minmax", "query-zscore", "none"), default="zscore",
                   help="feature scaling: global z-score fitted on train, or per query")
    d.add_argument("--n-queries", type=int, default=1000, help="artificial: queries (train+vali+test)")
    d.add_argument("--docs-per-query", type=int, default=30, help="artificial: documents per query")
    d.add_argument("--n-features", type=int, default=50, help="artificial: features")
    m = p.add_argument_group("metrics")
    m.add_argument("--train-metrics", type=_csv_list, default=_csv_list("AP,P@10,nDCG,nDCG@10,RR,GAP"),
                   help="rows: metrics to train for")
    m.add_argument("--test-metrics", type=_csv_list, default=_csv_list("AP,P@10,nDCG@10,nDCG,GAP"),
                   help="columns: metrics to test on (each is also its own validation metric)")
    m.add_argument("--gain", choices=("exp", "linear"), default="exp",
                   help="nDCG gain when a name gives none (papers: exp 2^g-1; trec_eval: linear)")
    m.add_argument("--rel", type=int, default=1, help="binary relevance threshold for AP, P@k, RR")
    t = p.add_argument_group("training")
    t.add_argument("--model", choices=("net", "linear", "lambdamart"), default="net",
                   help="two-layer tanh net, linear, or LambdaMART (LightGBM trees on our lambdas; "
                        "--learning-rates then defaults to 0.05,0.1)")
    t.add_argument("--hidden", type=int, default=10, help="hidden units of the net")
    t.add_argument("--epochs", type=int, default=30, help="epoch cap per run")
    t.add_argument("--patience", type=int, default=5,
                   help="early stopping: end a run when no validation metric has improved for this many "
                        "epochs (0: train to the cap)")
    t.add_argument("--learning-rates", type=lambda s: [float(x) for x in _csv_list(s)], default=[1e-3, 1e-2],
                   help="learning-rate grid (the best per test metric is chosen on validation)")
    t.add_argument("--objective", choices=("lambdarank", "softrank", "approxrank"), default="lambdarank",
                   help="gradient: LambdaRank lambdas, SoftRank or ApproxRank (nDCG, P@k, RBP, AP, GAP)")
    t.add_argument("--sigma", type=float, default=1.0, help="RankNet sigma (lambdarank)")
    t.add_argument("--sigma-s", type=float, default=1.0, help="SoftRank score-noise standard deviation")
    t.add_argument("--approx-alpha", type=lambda s: [float(x) for x in _csv_list(s)], default=[100.0],
                   help="ApproxRank position scale alpha; a list is a grid chosen on validation (paper 002: 50-300)")
    t.add_argument("--approx-beta", type=lambda s: [float(x) for x in _csv_list(s)], default=[10.0],
                   help="ApproxRank truncation scale beta; a list is a grid chosen on validation (paper 002: 1-100)")
    t.add_argument("--batch-size", type=int, default=1, help="queries per update")
    t.add_argument("--restart-patience", type=int, default=16,
                   help="random restart after this many epochs without training improvement (0: off)")
    t.add_argument("--lr-decay", action="store_true", help="paper 001 decay: x0.8 w.p. 0.3 after a worse epoch")
    t.add_argument("--seeds", type=lambda s: [int(x) for x in _csv_list(s)], default=[0],
                   help="training seeds (per-query test values are averaged over seeds, unless --best-restart)")
    t.add_argument("--best-restart", action="store_true",
                   help="paper 002: the seeds are K random restarts and validation picks the best one "
                        "(instead of averaging the seeds' test values)")
    t.add_argument("--split-seed", type=int, default=0, help="seed of the validation split and the sweeps")
    # -- issue 15: LambdaMART options (--model lambdamart) ---------------------------------
    b = p.add_argument_group("lambdamart (--model lambdamart)")
    b.add_argument("--trees", type=int, default=100, help="boosting iterations (the best is chosen per "
                   "validation metric)")
    b.add_argument("--num-leaves", type=int, default=31, help="LightGBM num_leaves")
    b.add_argument("--min-data-in-leaf", type=int, default=20, help="LightGBM min_data_in_leaf")
    b.add_argument("--truncation", type=int, default=None,
                   help="only pairs with a document in the top k ranks (LightGBM lambdarank_truncation_level; "
                        "default all pairs)")
    # -- end issue 15 -----------------------------------------------------------------------
    e = p.add_argument_group("experiments")
    e.add_argument("--parts", type=_csv_list, default=list(PARTS), help=f"parts to run, from {','.join(PARTS)}")
    e.add_argument("--fractions", type=lambda s: [float(x) for x in _csv_list(s)], default=[0.25, 0.5, 1.0],
                   help="sweep: fractions of the training queries")
    e.add_argument("--features", type=_csv_list, default=_csv_list("2,9,all"),
                   help="sweep: feature counts (the top ones by |correlation| with the grade on train)")
    e.add_argument("--sweep-epochs", type=int, default=None, help="sweep epoch budget (default --epochs)")
    e.add_argument("--mc-directions", type=int, default=459, help="optimality: random unit directions")
    e.add_argument("--mc-eps", type=float, default=0.003, help="optimality: improvement threshold epsilon")
    e.add_argument("--mc-weights", type=int, default=50,
                   help="optimality001: weights moved alone (+-e_j), a random sample; 0 = every weight")
    e.add_argument("--pairs-train", type=_csv_list, default=_csv_list("nDCG,nDCG@10,AP,RR"),
                   help="pairs: training metrics (paper 001 Fig. 5: NDCG, NDCG@10, MAP, MRR)")
    e.add_argument("--pairs-target", default="RR", help="pairs: the test metric (paper 001 Fig. 5: MRR)")
    e.add_argument("--approx-runs", nargs="+", default=[str(ROOT / "trec_runs" / "runs")],
                   help="approx_error: TREC run files or folders (real ranked lists)")
    e.add_argument("--approx-qrels", default=str(ROOT / "trec_runs" / "qrels-rnd1.txt"), help="approx_error: qrels")
    e.add_argument("--approx-alphas", type=lambda s: [float(x) for x in _csv_list(s)],
                   default=[1, 3, 10, 30, 100, 300, 1000, 3000], help="approx_error: alpha grid (scores min-max "
                   "normalised per list)")
    e.add_argument("--approx-depth", type=int, default=100, help="approx_error: top documents of each list")
    e.add_argument("--n-boot", type=int, default=10000, help="table: bootstrap resamples of the 95%% CIs")
    e.add_argument("--power", type=float, default=0.8, help="table: power of the minimum detectable effect")
    e.add_argument("--alpha", type=float, default=0.05, help="significance level of the three paired tests")
    e.add_argument("--figures-dir", type=Path, default=None,
                   help="also copy the curves and sweep figures (PNG + CSV) here, e.g. figures/learning")
    return p


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------
def _metric(name: str, args) -> object:
    """Parse a metric name applying --gain to nDCG and --rel to binary metrics."""
    m = parse_measure(name)
    fields = getattr(m, "__dataclass_fields__", {})
    changes = {}
    if "gain" in fields and type(m).__name__ != "ERR" and "gain=" not in name and args.gain != "linear":
        changes["gain"] = args.gain
    if "rel" in fields and "rel=" not in name and args.rel != 1:
        changes["rel"] = args.rel
    if changes:
        import dataclasses
        m = dataclasses.replace(m, **changes)
    return m


def fold_split(data: RankingData, k: int, fold: int, *, seed: int = 0):
    """LETOR-style fold ``fold`` of k: queries permuted by ``seed`` into k groups; test = group
    ``fold``, validation = group ``fold + 1`` (mod k), train = the other k - 2."""
    if k < 3:
        raise ParameterError(f"--folds must be 1 (one split) or >= 3, got {k}")
    groups = np.array_split(np.random.default_rng(seed).permutation(data.n_queries), k)
    te, va = groups[fold], groups[(fold + 1) % k]
    tr = np.concatenate([g for i, g in enumerate(groups) if i not in (fold, (fold + 1) % k)])
    return tuple(data.subset(np.sort(g)) for g in (tr, va, te))


def load_splits(args, fold: int = 0) -> tuple[RankingData, RankingData, RankingData]:
    """(train, validation, test) as RankingData (fold ``fold`` with --folds), normalised as asked."""
    pooled = args.train is None and (args.dataset == "artificial" or args.dataset in TREC_SETS)
    if args.folds > 1 and not pooled:
        raise ParameterError("--folds applies to pooled data sets (artificial, robust03, dl2019, covid); "
                             f"{args.dataset} has fixed train/test files")
    if pooled:
        if args.dataset == "artificial":
            full = make_artificial(args.n_queries, args.docs_per_query, args.n_features, seed=args.split_seed)
        else:
            full = trec_learning_set(args)
        if args.folds > 1:
            tr, va, te = fold_split(full, args.folds, fold, seed=args.split_seed)
        else:
            tr, va, te = split_queries(full, (0.6, 0.2, 0.2), seed=args.split_seed)
    else:
        if args.train is not None:
            ftr, fte, fva = args.train, args.test, args.vali
        elif args.dataset in DATASETS:
            names = DATASETS[args.dataset]
            ftr, fte, fva = (args.data_root / n if n else None for n in names)
            if args.test is not None:
                fte = args.test
            if args.vali is not None:
                fva = args.vali
        else:
            raise ParameterError(f"unknown dataset {args.dataset!r}; use one of {sorted([*DATASETS, *TREC_SETS])}, "
                                 "'artificial', or give --train/--test")
        if not Path(ftr).exists():
            raise ParameterError(f"{ftr} not found (the shared data is expected under {args.data_root})")
        tr = read_letor(ftr)
        F = tr.n_features
        te = read_letor(fte, n_features=None) if fte else None
        va = read_letor(fva, n_features=None) if fva else None
        F = max([F] + [d.n_features for d in (te, va) if d is not None])

        def widen(d):
            if d is None or d.n_features == F:
                return d
            return d.with_features(np.pad(d.X, ((0, 0), (0, F - d.n_features))))

        tr, te, va = widen(tr), widen(te), widen(va)
        if te is None:
            tr, te = split_queries(tr, (0.8, 0.2), seed=args.split_seed)
        if va is None:
            tr, va = split_queries(tr, (1 - args.vali_fraction, args.vali_fraction), seed=args.split_seed)
    if args.normalize == "zscore":
        tr, va, te = standardize(tr, va, te)
    elif args.normalize.startswith("query-"):
        how = args.normalize.split("-", 1)[1]
        tr, va, te = (d.normalize_per_query(how) for d in (tr, va, te))
    return tr, va, te


def out_dir(args) -> Path:
    return args.out or (SCRATCH / "learning" / args.dataset)


def trec_learning_set(args) -> RankingData:
    """The MQ2007-agg-style set of a TREC collection (maxent.trecltr), cached as learning_set.npz
    in the output folder (building it reads every run)."""
    from maxent.trec import read_qrels, read_runs
    from maxent.trecltr import learning_set_from_runs

    cache = out_dir(args) / "learning_set.npz"
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        return RankingData(z["X"], z["y"], z["offsets"], z["qids"].astype(object), source=str(z["source"]))
    runs_dir, qrels = (args.data_root.parent / p for p in TREC_SETS[args.dataset])
    if not runs_dir.exists():
        raise ParameterError(f"{runs_dir} not found (the shared TREC data is expected under {args.data_root.parent})")
    data = learning_set_from_runs(read_runs(runs_dir), read_qrels(qrels))
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(".learning_set.tmp.npz")
    np.savez(tmp, X=data.X, y=data.y, offsets=data.offsets, qids=data.qids.astype(str), source=data.source)
    os.replace(tmp, cache)
    return data


def top_features(data: RankingData, k: int) -> np.ndarray:
    """The k features with the largest |Pearson correlation| with the grade (constant ones last)."""
    X = data.X - data.X.mean(axis=0)
    y = data.y - data.y.mean()
    sd = np.sqrt((X ** 2).sum(axis=0) * (y ** 2).sum())
    corr = np.abs(np.divide(X.T @ y, sd, out=np.zeros(X.shape[1]), where=sd > 0))
    return np.sort(np.argsort(-corr, kind="stable")[:k])


# ------------------------------------------------------------------------------------------
# jobs (run in worker processes; each loads the data once)
# ------------------------------------------------------------------------------------------
_DATA: dict = {}
_BEST_RESTART = [False]          # --best-restart, set by body() (selection happens in the main process)


def _sets(args, features=None, fraction=1.0, fold=0):
    key = (tuple(features) if features is not None else None, fraction, fold)
    if ("splits", fold) not in _DATA:
        _DATA[("splits", fold)] = load_splits(args, fold)
        if fold == 0:
            _DATA["splits"] = _DATA[("splits", 0)]
    if key not in _DATA:
        tr, va, te = _DATA[("splits", fold)]
        if fraction < 1.0:
            n = max(2, int(round(fraction * tr.n_queries)))
            pick = np.sort(np.random.default_rng(args.split_seed).permutation(tr.n_queries)[:n])
            tr = tr.subset(pick)
        if features is not None:
            tr, va, te = (d.select_features(features) for d in (tr, va, te))
        L = int(max(d.y.max() for d in (tr, va, te))) + 1
        _DATA[key] = (QuerySet(tr, L), QuerySet(va, L), QuerySet(te, L))
    return _DATA[key]


def run_job(job: dict) -> dict:
    """Train one model and evaluate it; returns the record written to ``runs/<name>.json``.

    Tracked (and selected on validation): every test metric and the training metric itself.
    """
    args = job["args"]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    qtr, qva, qte = _sets(args, job.get("features"), job.get("fraction", 1.0), job.get("fold", 0))
    metric = _metric(job["train"], args)
    names = list(dict.fromkeys([*job["tests"], job["train"]]))
    tracked = [_metric(n, args) for n in names]
    if args.model == "lambdamart":
        rec = _lambdamart_job(dict(job, tests=names), qtr, qva, qte, metric, tracked)
        rec["fold"] = job.get("fold", 0)
        return rec
    model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
    t0 = time.perf_counter()
    res = train_ranker(model, qtr, metric, valid=qva, track=tracked, epochs=job["epochs"],
                           learning_rate=job["lr"], sigma=args.sigma, batch_size=args.batch_size,
                           seed=job["seed"], restart_patience=args.restart_patience or None,
                           lr_decay=args.lr_decay, objective=getattr(args, "objective", "lambdarank"),
                           sigma_s=getattr(args, "sigma_s", 1.0),
                           alpha=job["alpha"] if job.get("alpha") is not None else args.approx_alpha[0],
                           beta=job["beta"] if job.get("beta") is not None else args.approx_beta[0],
                           patience=getattr(args, "patience", 0) or None)
    seconds = time.perf_counter() - t0
    out = {"name": job["name"], "train": job["train"], "lr": job["lr"], "seed": job["seed"],
           "alpha": job.get("alpha"), "beta": job.get("beta"),
           "fold": job.get("fold", 0),
           "features": job.get("n_features"), "fraction": job.get("fraction", 1.0),
           "seconds": seconds, "epochs": job["epochs"], "restarts": res.restarts,
           "stopped_epoch": res.stopped_epoch, "stop_reason": res.stop_reason,
           "history": res.history, "selected": {}}
    thetas = {"final": res.theta, "best_train": res.best_train["theta"]}
    out["best_train_epoch"] = res.best_train["epoch"]
    for m, name in zip(tracked, names):
        b = res.best[str(m)]
        test_vals = evaluate(model, b["theta"], qte, [m])[str(m)]
        out["selected"][name] = {"epoch": b["epoch"], "valid": b["value"], "test": test_vals.tolist()}
        thetas[name] = b["theta"]
    out["thetas"] = {k: v.tolist() for k, v in thetas.items()}
    return out


def _lambdamart_job(job: dict, qtr, qva, qte, metric, tests) -> dict:
    """Issue 15: one LambdaMART run (LightGBM), as a record of :func:`run_job`'s format."""
    from maxent.ltr.boosting import QueryGroups, metric_values, train_lambdamart

    args = job["args"]
    L = qtr.rel_counts.shape[1]
    t0 = time.perf_counter()
    res = train_lambdamart(qtr.data, metric, valid=qva.data, track=tests, num_trees=args.trees,
                           learning_rate=job["lr"], num_leaves=args.num_leaves, min_data_in_leaf=args.min_data_in_leaf,
                           sigma=args.sigma, truncation=args.truncation, seed=job["seed"], n_levels=L)
    out = {"name": job["name"], "train": job["train"], "lr": job["lr"], "seed": job["seed"],
           "features": job.get("n_features"), "fraction": job.get("fraction", 1.0),
           "seconds": time.perf_counter() - t0, "epochs": args.trees, "restarts": 0,
           "history": res.history, "selected": {}, "best_train_epoch": None, "thetas": {}}
    groups = QueryGroups.from_offsets(qte.data.y, qte.data.offsets, L)
    for m, name in zip(tests, job["tests"]):
        b = res.best[str(m)]
        vals = metric_values(m, res.predict(qte.data.X, m), groups)
        out["selected"][name] = {"epoch": b["epoch"], "valid": b["value"], "test": vals.tolist()}
    return out


def run_optimality(job: dict) -> list[dict]:
    args = job["args"]
    qtr, qva, qte = _sets(args)
    model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
    rows = local_optimality(model, np.asarray(job["theta"]), {"train": qtr, "test": qte},
                            [_metric(job["test"], args)], n_directions=args.mc_directions,
                            eps=args.mc_eps, seed=job["seed"])
    for r in rows:
        r.update({"train_metric": job["train"], "test_metric": job["test"], "epoch": job["epoch"]})
    return rows


def _run_all(fn, jobs, args, desc, on_result=None):
    """``fn`` over the jobs in job order; ``on_result(r)`` is called as each result arrives (so
    finished work is saved before the next job starts, and --resume keeps it after a crash)."""
    if not jobs:
        return []
    bar = progress(None, total=len(jobs), desc=desc, disable=args.no_progress)
    results = []
    for r in parallel_map(fn, jobs, args):      # local, process pool or Dask (--scheduler)
        if on_result is not None:
            on_result(r)
        results.append(r)
        bar.update(1)
    bar.close()
    return results


def _run_training(jobs, runs_dir: Path, args, desc) -> dict[str, dict]:
    """Run the training jobs not already on disk (--resume) and load all their records."""
    todo = [j for j in jobs if not (args.resume and (runs_dir / f"{j['name']}.json").exists())]
    report_resumed([j["name"] for j in jobs if j not in todo], len(jobs), "training runs")
    _run_all(run_job, todo, args, desc,
             on_result=lambda rec: atomic_write_text(runs_dir / f"{rec['name']}.json", json.dumps(rec)))
    return {j["name"]: json.loads((runs_dir / f"{j['name']}.json").read_text()) for j in jobs}


def _approx_grid(args) -> list[tuple[float, float]]:
    """(alpha, beta) pairs to train: the --approx-alpha x --approx-beta grid for ApproxRank."""
    if getattr(args, "objective", "lambdarank") != "approxrank":
        return [(None, None)]
    return [(a, b) for a in args.approx_alpha for b in args.approx_beta]


def _job(args, train, tests, lr, seed, epochs, tag="table", features=None, n_features=None, fraction=1.0, fold=0,
         alpha=None, beta=None):
    name = f"{tag}__{train}__lr{lr:g}__s{seed}"
    if getattr(args, "patience", 0):     # early-stopped runs differ from fixed-budget ones (--resume)
        name += f"__pat{args.patience}"
    if getattr(args, "folds", 1) > 1:
        name += f"__fold{fold}of{args.folds}"
    if alpha is not None:
        name += f"__a{alpha:g}__b{beta:g}"
    objective = getattr(args, "objective", "lambdarank")
    if objective != "lambdarank":       # keep LambdaRank run names (and --resume) unchanged
        name = f"{objective}__{name}"
    if args.model == "lambdamart":      # issue 15: boosted runs never resume from net runs
        name = f"lambdamart__{name}"
    if tag != "table":
        name += f"__f{n_features}__p{fraction:g}"
    name = name.replace("@", "at").replace("(", "_").replace(")", "").replace(",", "_").replace("=", "")
    return {"args": args, "name": name, "train": train, "tests": list(tests), "lr": lr, "seed": seed,
            "epochs": epochs, "features": features, "n_features": n_features, "fraction": fraction, "fold": fold,
            "alpha": alpha, "beta": beta}


def _select(records: list[dict], test: str, best_restart: bool = False) -> dict:
    """Per (seed, fold), the run (learning rate; alpha, beta) with the best validation value of
    ``test``; with ``best_restart`` the seeds compete too (key (first seed, fold))."""
    by_key: dict = {}
    first = records[0]["seed"]                            # jobs list the seeds in --seeds order
    for r in records:
        k = (first if best_restart else r["seed"], r.get("fold", 0))
        s = r["selected"][test]
        if k not in by_key or s["valid"] > by_key[k]["selected"][test]["valid"]:
            by_key[k] = r
    return by_key


def _test_values(records: list[dict], test: str) -> np.ndarray:
    """Per-query test values of ``test`` for the validation-selected runs: mean over seeds, the
    test queries of every fold concatenated in fold order."""
    sel = _select(records, test, _BEST_RESTART[0])
    folds = sorted({f for _, f in sel})
    return np.concatenate([np.mean([np.asarray(r["selected"][test]["test"]) for (s, f), r in sel.items() if f == k],
                                   axis=0) for k in folds])


# ------------------------------------------------------------------------------------------
# parts
# ------------------------------------------------------------------------------------------
def cell_marks(row) -> str:
    """The marks of one table cell from its CSV flags: ``*`` (sig_vs_self), ``o`` (sig_ap_ndcg).

    The flags may be numpy/pandas booleans or NaN (no test for that cell): only a true value marks.
    """
    def flag(key):
        v = row.get(key, False)
        return bool(v) if isinstance(v, (bool, np.bool_)) else (v == 1 if isinstance(v, (int, float)) else False)

    return ("*" if flag("sig_vs_self") else "") + ("o" if flag("sig_ap_ndcg") else "")


def part_table(args, out: Path, runs_dir: Path):
    from maxent.stats import bootstrap_ci, minimum_detectable_effect

    tests = args.test_metrics
    jobs = [_job(args, tr, tests, lr, s, args.epochs, fold=k, alpha=a, beta=b)
            for tr in args.train_metrics for lr in args.learning_rates for s in args.seeds
            for k in range(max(1, args.folds)) for a, b in _approx_grid(args)]
    recs = _run_training(jobs, runs_dir, args, "table runs")
    by_train = {tr: [recs[j["name"]] for j in jobs if j["train"] == tr] for tr in args.train_metrics}
    vals = {(tr, te): _test_values(by_train[tr], te) for tr in args.train_metrics for te in tests}
    rows = []
    for te in tests:
        for tr in args.train_metrics:
            v = vals[(tr, te)]
            sel = _select(by_train[tr], te, args.best_restart)[(args.seeds[0], 0)]
            row = {"train": tr, "test": te, "value": 100 * v.mean(), "n_queries": len(v),
                   "lr": sel["lr"], "alpha": sel.get("alpha"), "beta": sel.get("beta"), "seed": sel["seed"],
                   "epoch": sel["selected"][te]["epoch"],
                   "stopped_epoch": sel.get("stopped_epoch", np.nan), "stop_reason": sel.get("stop_reason", "")}
            if te in args.train_metrics and tr != te:
                d = v - vals[(te, te)]
                pt = paired_tests(v, vals[(te, te)], alpha=args.alpha)
                lo, hi = bootstrap_ci(d, level=1 - args.alpha, n_resamples=args.n_boot, seed=args.split_seed)
                sd = float(np.std(d, ddof=1))
                row.update(diff_vs_self=100 * pt.difference, ci_low=100 * lo, ci_high=100 * hi,
                           sd_diff=100 * sd,
                           mde=100 * minimum_detectable_effect(sd, len(d), alpha=args.alpha, power=args.power),
                           p_t=pt.p_t, p_wilcoxon=pt.p_wilcoxon, p_sign=pt.p_sign, sig_vs_self=pt.significant)
            else:
                row.update(diff_vs_self=0.0, ci_low=np.nan, ci_high=np.nan, sd_diff=np.nan, mde=np.nan,
                           p_t=np.nan, p_wilcoxon=np.nan, p_sign=np.nan, sig_vs_self=False)
            if tr in ("AP", "nDCG") and {"AP", "nDCG"} <= set(args.train_metrics):
                other = "nDCG" if tr == "AP" else "AP"
                pt = paired_tests(v, vals[(other, te)], alpha=args.alpha)
                row.update(p_ap_ndcg_t=pt.p_t, p_ap_ndcg_wilcoxon=pt.p_wilcoxon, p_ap_ndcg_sign=pt.p_sign,
                           sig_ap_ndcg=pt.significant and pt.difference > 0)
            rows.append(row)
    table = pd.DataFrame(rows)
    atomic_write_csv(out / "table.csv", table)
    claims = claim_rows(vals, args)
    if len(claims):
        atomic_write_csv(out / "claims.csv", claims)
    text = table_text(table, args.train_metrics, tests, args.alpha, args.power)
    stop = stopping_summary([recs[j["name"]] for j in jobs], by_train, tests, args)
    if stop:
        text += "\n" + stop
    atomic_write_text(out / "table.txt", text + "\n")
    return by_train, text


def stopping_summary(recs: list[dict], by_train: dict, tests: list[str], args) -> str:
    """Two lines on convergence: how many training runs stopped by patience and how many hit the
    epoch cap, how many validation selections (per cell and fold) kept the untrained epoch 0, and
    how often each learning rate was chosen (a grid edge chosen often: widen the grid)."""
    reasons = [r.get("stop_reason") for r in recs if r.get("stop_reason")]
    if not reasons:                                       # LambdaMART records have no stop reason
        return ""
    n_pat, n_cap = reasons.count("patience"), reasons.count("epoch_cap")
    sels = [r for tr in args.train_metrics for te in tests
            for r in _select(by_train[tr], te, args.best_restart).values()]
    at0 = sum(r["selected"][te]["epoch"] == 0 for tr in args.train_metrics for te in tests
              for r in _select(by_train[tr], te, args.best_restart).values())
    chosen = ", ".join(f"{lr:g}: {sum(r['lr'] == lr for r in sels)}" for lr in sorted(set(args.learning_rates)))
    last = max(int(r.get("stopped_epoch") or 0) for r in recs)
    return (f"training runs: {n_pat} stopped by patience ({args.patience} epochs), {n_cap} hit the epoch cap "
            f"({args.epochs}); latest stop at epoch {last}\nvalidation selections (cell x fold x seed): "
            f"{len(sels)}, {at0} kept epoch 0 (untrained); learning rates chosen: {chosen}")


# the learning claims of papers 000 (Tables 2-4, section 5.1) and 004 (Tables 1-2):
# (paper, claimed better training metric, compared training metric, test metric)
CLAIMS = (
    ("000", "AP", "P@10", "P@10"), ("000", "nDCG", "nDCG@10", "nDCG@10"),
    ("000", "AP", "nDCG", "AP"), ("000", "AP", "nDCG", "P@10"),
    ("004", "GAP", "nDCG", "nDCG@10"), ("004", "GAP", "nDCG", "nDCG"), ("004", "GAP", "AP", "AP"),
    ("004", "GAP", "AP", "P@10"), ("004", "GAP", "nDCG", "P@10"), ("004", "GAP", "AP", "nDCG@10"),
)


def claim_rows(vals: dict, args) -> pd.DataFrame:
    """claims.csv: each paper claim the table can test: mean paired difference (better - compared),
    its bootstrap CI, the three p-values and a verdict (reproduces / reversed / not significant:
    all three tests at ``alpha``), and the same verdict after Holm's correction over the table's
    claims (``p_holm``: Holm on ``p_max``, the largest of each claim's three p-values)."""
    from maxent.compare import adjust
    from maxent.stats import bootstrap_ci

    rows = []
    for paper, better, worse, test in CLAIMS:
        if (better, test) not in vals or (worse, test) not in vals:
            continue
        a, b = vals[(better, test)], vals[(worse, test)]
        pt = paired_tests(a, b, alpha=args.alpha)
        lo, hi = bootstrap_ci(a - b, level=1 - args.alpha, n_resamples=args.n_boot, seed=args.split_seed)
        verdict = ("not significant" if not pt.significant else "reproduces" if pt.difference > 0 else "reversed")
        rows.append({"paper": paper, "claim": f"train {better} > train {worse} on test {test}",
                     "diff": 100 * pt.difference, "ci_low": 100 * lo, "ci_high": 100 * hi, "p_t": pt.p_t,
                     "p_wilcoxon": pt.p_wilcoxon, "p_sign": pt.p_sign, "n_queries": len(a), "verdict": verdict})
    df = pd.DataFrame(rows)
    if len(df):
        # the claims of one table are one family: Holm over the largest of each claim's three p-values
        df["p_max"] = df[["p_t", "p_wilcoxon", "p_sign"]].max(axis=1)
        df["p_holm"] = adjust(df["p_max"].to_numpy(), "holm")
        df["verdict_holm"] = np.where(df.p_holm < args.alpha, df.verdict, "not significant")
    return df


def table_text(table: pd.DataFrame, trains: list[str], tests: list[str], alpha: float, power: float) -> str:
    """table.txt: values with marks (from the CSV flags), then differences to the diagonal with
    their bootstrap CIs, then the minimum detectable effect."""
    cell = {(r["train"], r["test"]): r for r in table.to_dict("records")}
    text = ["train \\ test".ljust(14) + "".join(f"{c:>12}" for c in tests)]
    for tr in trains:
        text.append(tr.ljust(14) + "".join(f"{cell[(tr, te)]['value']:10.2f}{cell_marks(cell[(tr, te)]):<2}"
                                           for te in tests))
    n = int(table.n_queries.iloc[0])
    text.append("* significantly different from training on the test metric; o AP vs nDCG significant "
                f"(better row marked); paired t, Wilcoxon and sign test all at {1 - alpha:.0%}, {n} test queries")
    if "ci_low" in table and table.ci_low.notna().any():
        text.append("")
        text.append(f"Difference to the diagonal (train on the test metric), points [{1 - alpha:.0%} bootstrap CI]; "
                    "p = largest of the three p-values")
        text.append("train \\ test".ljust(14) + "".join(f"{c:>30}" for c in tests))
        for tr in trains:
            cells = []
            for te in tests:
                r = cell[(tr, te)]
                if np.isnan(r["ci_low"]):
                    cells.append(f"{'-':>30}")
                else:
                    p = max(r["p_t"], r["p_wilcoxon"], r["p_sign"])
                    cells.append((" " + f"{r['diff_vs_self']:+.2f} [{r['ci_low']:+.2f},{r['ci_high']:+.2f}] p={p:.2f}").rjust(30))
            text.append(tr.ljust(14) + "".join(cells))
        mde = table.mde.dropna()
        text.append(f"minimum detectable effect (paired t, alpha {alpha:g}, power {power:.0%}, {n} test queries): "
                    f"median {mde.median():.2f} points over the cells (range {mde.min():.2f}-{mde.max():.2f})")
    return "\n".join(text)


def part_curves(args, out: Path, by_train: dict):
    rows = []
    for tr, te in PAIRS:
        if tr not in by_train or te not in args.test_metrics:
            continue
        rec = _select(by_train[tr], te, args.best_restart)[(args.seeds[0], 0)]
        obj = str(_metric(tr, args))
        tem = str(_metric(te, args))
        for h in rec["history"]:
            rows.append({"train": tr, "test": te, "lr": rec["lr"], "epoch": h["epoch"],
                         "train_objective": h[f"train:{obj}"], "test_metric_on_train": h[f"train:{tem}"],
                         "test_metric_on_valid": h[f"valid:{tem}"], "restarts": h["restarts"],
                         "selected_epoch": rec["selected"][te]["epoch"],
                         "stopped_epoch": rec.get("stopped_epoch", rec["history"][-1]["epoch"])})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "curves.csv", df)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pairs = list(dict.fromkeys(zip(df.train, df.test)))
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 3.2), sharey=False)
    for ax, (tr, te) in zip(np.atleast_1d(axes), pairs):
        d = df[(df.train == tr) & (df.test == te)]
        ax.plot(d.epoch, d.train_objective, ":", color="tab:blue", label=f"{tr} (train set)")
        ax.plot(d.epoch, d.test_metric_on_train, "-", color="tab:red", label=f"{te} (train set)")
        ax.plot(d.epoch, d.test_metric_on_valid, "-.", color="tab:green", label=f"{te} (validation)")
        sel = int(d.selected_epoch.iloc[0])
        ax.axvline(sel, color="k", lw=0.8, ls="--", label=f"selected epoch {sel}")
        ax.plot([sel], [d.test_metric_on_valid[d.epoch == sel].iloc[0]], "k*", ms=9)
        ax.set_title(f"train {tr}, test {te} (stopped at {int(d.stopped_epoch.iloc[0])})", fontsize=9)
        ax.set_xlabel("epoch")
        ax.legend(fontsize=7)
    fig.suptitle(f"Learning curves ({args.dataset}, {args.model}; paper 000 Fig. 5); dashed line: epoch "
                 f"validation selects; patience {args.patience}, cap {args.epochs}", fontsize=9)
    save_figure(fig, out / "curves.png")
    plt.close(fig)
    return df


def part_sweep(args, out: Path, runs_dir: Path, by_train: dict | None):
    splits = _sets(args)
    F = splits[0].X.shape[1]
    tr_full = _DATA["splits"][0]
    feats = []
    for f in args.features:
        k = F if f == "all" else int(f)
        if k > F:
            continue
        feats.append((k, None if k == F else top_features(tr_full, k).tolist()))
    trains = sorted({p[0] for p in PAIRS}, key=[p[0] for p in PAIRS].index)
    epochs = args.sweep_epochs or args.epochs
    jobs = []
    for k, cols in feats:
        for frac in args.fractions:
            for tr in trains:
                tests = [te for t2, te in PAIRS if t2 == tr]
                # learning rate: the one validation chose in the table runs, else the grid's first
                lr = args.learning_rates[0]
                if by_train and tr in by_train:
                    lr = _select(by_train[tr], tests[0], args.best_restart)[(args.seeds[0], 0)]["lr"]
                for s in args.seeds:
                    jobs.append(_job(args, tr, tests, lr, s, epochs, tag="sweep", features=cols,
                                     n_features=k, fraction=frac))
    recs = _run_training(jobs, runs_dir, args, "sweep runs")
    rows = []
    for k, _ in feats:
        for frac in args.fractions:
            for te in dict.fromkeys(te for _, te in PAIRS):
                group = {tr: [recs[j["name"]] for j in jobs if j["train"] == tr and j["n_features"] == k
                              and j["fraction"] == frac] for tr, t2 in PAIRS if t2 == te}
                ref = _test_values(group[te], te)
                for tr, rs in group.items():
                    v = _test_values(rs, te)
                    pt = paired_tests(v, ref, alpha=args.alpha) if tr != te else None
                    rows.append({"features": k, "fraction": frac, "n_train_queries": None, "train": tr,
                                 "test": te, "value": 100 * v.mean(),
                                 "diff_vs_self": 0.0 if pt is None else 100 * pt.difference,
                                 "significant": False if pt is None else pt.significant})
    df = pd.DataFrame(rows)
    n_tr = splits[0].n_queries
    df["n_train_queries"] = [max(2, int(round(f * n_tr))) if f < 1 else n_tr for f in df.fraction]
    atomic_write_csv(out / "sweep.csv", df)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tests = list(dict.fromkeys(df.test))
    fig, axes = plt.subplots(1, len(tests), figsize=(5 * len(tests), 3.6))
    for ax, te in zip(np.atleast_1d(axes), tests):
        colours = {k: f"C{i}" for i, k in enumerate(dict.fromkeys(df.features))}
        for (k, tr), d in df[df.test == te].groupby(["features", "train"], sort=False):
            style = "-" if tr != te else "--"          # dashed: trained on the test metric itself
            ax.plot(100 * d.fraction, d.value, style, color=colours[k], marker="o",
                    label=f"train {tr}, {k} feat.")
            sig = d[d.significant]
            ax.plot(100 * sig.fraction, sig.value, "k*", ms=9)
        ax.set_xlabel("% of training queries")
        ax.set_ylabel(f"test {te} (0-100)")
        ax.set_title(f"test {te}: * = significant vs training on {te}", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"Training-set size x features ({args.dataset}; paper 000 Fig. 4)", fontsize=10)
    save_figure(fig, out / "sweep.png")
    plt.close(fig)
    return df


def part_optimality(args, out: Path, by_train: dict):
    """Paper 000 Table 5 on each (train, test) pair's table-cell model (validation-selected by the test metric)."""
    jobs = []
    for tr, te in PAIRS:
        if tr not in by_train or te not in args.test_metrics:
            continue
        rec = _select(by_train[tr], te, args.best_restart)[(args.seeds[0], 0)]
        jobs.append({"args": args, "train": tr, "test": te, "theta": rec["thetas"][te],
                     "epoch": rec["selected"][te]["epoch"], "seed": args.split_seed})
    rows = [r for rs in _run_all(run_optimality, jobs, args, "optimality") for r in rs]
    if not rows:
        print("optimality skipped: no (train, test) pair of paper 000 Table 5 among the metrics asked",
              file=sys.stderr)
        return None
    df = pd.DataFrame(rows)[["train_metric", "test_metric", "epoch", "set", "base", "alterations", "improved",
                             "improved_eps", "best_gain"]]
    atomic_write_csv(out / "optimality.csv", df)
    return df


def run_optimality001(job: dict) -> dict:
    """Paper 001's test for one model: its own metric on train along random and per-weight directions."""
    from maxent.ltr.optimality import shift_profile, unit_directions

    args = job["args"]
    qtr, _, _ = _sets(args)
    model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
    theta = np.asarray(job["theta"])
    metric = _metric(job["train"], args)
    steps = np.round(np.arange(0, 11) / 10, 1)
    out = {}
    W = unit_directions(theta.size, "weights")
    if args.mc_weights and args.mc_weights < theta.size:
        pick = np.sort(np.random.default_rng(args.split_seed).choice(theta.size, args.mc_weights, replace=False))
        W = np.concatenate([W[pick], W[theta.size + pick]])
    for kind, V in (("random", unit_directions(theta.size, "random", n=args.mc_directions, seed=args.split_seed)),
                    ("weights", W)):
        out[kind] = shift_profile(model, theta, qtr, metric, V, steps)
    return {"train": job["train"], "epoch": job["epoch"], "steps": steps, **out}


def part_optimality001(args, out: Path, by_train: dict):
    """Paper 001 section 5 (Figs. 1-4): step-size curves of each objective's own metric on train."""
    jobs = []
    for tr in args.train_metrics:
        rec = _select(by_train[tr], tr, args.best_restart)[(args.seeds[0], 0)]
        jobs.append({"args": args, "train": tr, "theta": rec["thetas"][tr], "epoch": rec["selected"][tr]["epoch"]})
    res = _run_all(run_optimality001, jobs, args, "optimality001")
    rows, curves = [], []
    for r in res:
        steps = r["steps"]
        for kind in ("random", "weights"):
            P = r[kind]
            gain = P - P[:, :1]
            for j, eta in enumerate(steps):
                if eta == 0:
                    continue
                rows.append({"train_metric": r["train"], "epoch": r["epoch"], "directions": kind,
                             "n_directions": len(P), "step": eta, "base": P[0, 0],
                             "improved": int((gain[:, j] > 1e-12).sum()),
                             "improved_eps": int((gain[:, j] > args.mc_eps).sum()),
                             "mean_value": float(P[:, j].mean()), "best_gain": float(gain[:, j].max())})
        for k in range(min(4, len(r["random"]))):            # the 4 plotted directions of Figs. 1-4
            for j, eta in enumerate(steps):
                curves.append({"train_metric": r["train"], "direction": k, "step": eta, "value": r["random"][k, j]})
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "optimality001_counts.csv", df)
    cdf = pd.DataFrame(curves)
    atomic_write_csv(out / "optimality001.csv", cdf)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    trains = list(dict.fromkeys(df.train_metric))
    fig, axes = plt.subplots(2, len(trains), figsize=(3.2 * len(trains), 5.6), squeeze=False)
    for i, tr in enumerate(trains):
        ax = axes[0, i]
        for k, d in cdf[cdf.train_metric == tr].groupby("direction"):
            ax.plot(d.step, d.value, marker=".", label=f"direction {k + 1}")
        ax.set_title(f"LambdaRank-{tr}: {tr} on train", fontsize=8)
        ax.set_xlabel("step size eta")
        ax.legend(fontsize=6)
        ax = axes[1, i]
        for kind, d in df[df.train_metric == tr].groupby("directions"):
            ax.plot(d.step, 100 * d.improved / d.n_directions, marker="o",
                    label=f"{kind} ({int(d.n_directions.iloc[0])})")
        ax.set_ylabel("% directions improving", fontsize=8)
        ax.set_xlabel("step size eta")
        ax.legend(fontsize=6)
    fig.suptitle(f"Local optimality of validation-selected weights ({args.dataset}, {args.model}; "
                 "paper 001 Figs. 1-4)", fontsize=9)
    save_figure(fig, out / "optimality001.png")
    plt.close(fig)
    return df


def part_pairs(args, out: Path, runs_dir: Path, by_train: dict | None):
    """Paper 001 Fig. 5: effective pairs of each training metric vs the target's test value.

    Learning rate: the one validation chose for the training metric in the table runs (else the
    grid's first), as in the sweep."""
    from maxent.ltr.pairs import candidate_pairs, effective_pairs

    target = args.pairs_target

    def lr_for(tr):
        if by_train and tr in by_train:
            return _select(by_train[tr], tr, args.best_restart)[(args.seeds[0], 0)]["lr"]
        return args.learning_rates[0]

    jobs = [_job(args, tr, [target], lr_for(tr), s, args.sweep_epochs or args.epochs, tag="pairs",
                 n_features="all", fraction=frac)
            for frac in args.fractions for tr in args.pairs_train for s in args.seeds]
    recs = _run_training(jobs, runs_dir, args, "pairs runs")
    rows = []
    ref = {}
    for frac in args.fractions:
        qtr = _sets(args, None, frac)[0]
        for tr in args.pairs_train:
            rs = [recs[j["name"]] for j in jobs if j["train"] == tr and j["fraction"] == frac]
            v = _test_values(rs, target)
            sel = _select(rs, target, args.best_restart)
            model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
            m = _metric(tr, args)
            eff = np.mean([effective_pairs(model, np.asarray(r["thetas"][target]), qtr, m).sum() for r in sel.values()])
            rows.append({"train": tr, "test": target, "fraction": frac, "n_train_queries": qtr.n_queries,
                         "effective_pairs": eff, "candidate_pairs": int(candidate_pairs(qtr).sum()),
                         "value": 100 * v.mean(), "n_test_queries": len(v)})
            ref[(tr, frac)] = v
    df = pd.DataFrame(rows)
    if target in args.pairs_train:
        for i, r in df.iterrows():
            if r.train != target:
                pt = paired_tests(ref[(r.train, r.fraction)], ref[(target, r.fraction)], alpha=args.alpha)
                df.loc[i, "diff_vs_target_trained"] = 100 * pt.difference
                df.loc[i, "significant"] = pt.significant
    atomic_write_csv(out / "pairs.csv", df)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for tr, d in df.groupby("train", sort=False):
        ax.plot(np.log10(np.maximum(d.effective_pairs, 1)), d.value, marker="o", label=f"train {tr}")
    ax.set_xlabel("log10 effective training pairs (non-zero lambda, at the selected weights)")
    ax.set_ylabel(f"test {target} (0-100)")
    ax.legend(fontsize=7)
    ax.set_title(f"Effective pairs vs test {target} ({args.dataset}; paper 001 Fig. 5)", fontsize=9)
    save_figure(fig, out / "pairs.png")
    plt.close(fig)
    return df


def part_approx_error(args, out: Path):
    """Paper 002 Figs. 1-2: approximation error of ApproxRank metrics on real run lists vs alpha."""
    from maxent.ltr.approx import approx_values
    from maxent.ltr.lambdas import DeltaContext
    from maxent.ranked import RankedLists
    from maxent.trec import read_qrels, read_runs
    from maxent.trecltr import run_lists

    runs = read_runs(args.approx_runs)
    qrels = read_qrels(args.approx_qrels)
    L = int(max(1, max(int(g.max()) for g in qrels.grades.values())) + 1)
    lists = [run_lists(r, qrels, depth=args.approx_depth, levels=L) for r in runs]
    S = np.concatenate([x[1] for x in lists])
    G = np.concatenate([x[2] for x in lists])
    lengths = np.concatenate([x[3] for x in lists])
    rc = np.concatenate([x[4] for x in lists])
    rows = []
    names = ["nDCG", "nDCG@10", "P@10", "AP"]
    bar = progress(None, total=len(names), desc="approx_error", disable=args.no_progress)
    for name in names:
        m = _metric(name, args)
        true = m.value(RankedLists.from_grades(G, rc, lengths))
        approx = approx_values(DeltaContext(m, rc), S, G, lengths, args.approx_alphas, beta=args.approx_beta[0])
        for a, alpha in enumerate(args.approx_alphas):
            err = approx[a] - true
            rows.append({"metric": name, "alpha": alpha, "beta": args.approx_beta[0], "n_lists": len(true),
                         "true_mean": true.mean(), "approx_mean": approx[a].mean(),
                         "mean_abs_error": np.abs(err).mean(), "max_abs_error": np.abs(err).max()})
        bar.update(1)
    bar.close()
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "approx_error.csv", df)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, d in df.groupby("metric", sort=False):
        axes[0].loglog(d.alpha, d.mean_abs_error, marker="o", label=name)
        axes[1].semilogx(d.alpha, d.approx_mean, marker="o", label=f"Approx{name}")
        axes[1].axhline(d.true_mean.iloc[0], color=axes[1].lines[-1].get_color(), ls=":", lw=0.8)
    axes[0].set_xlabel("alpha")
    axes[0].set_ylabel("mean |approx - true| per list")
    axes[1].set_xlabel("alpha")
    axes[1].set_ylabel("mean over lists (dotted: true metric)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"ApproxRank approximation error on {len(runs)} TREC runs, top {args.approx_depth} per topic, "
                 f"beta {args.approx_beta[0]:g} (paper 002 Figs. 1-2)", fontsize=9)
    save_figure(fig, out / "approx_error.png")
    plt.close(fig)
    return df


def part_anchor(args, out: Path, by_train: dict):
    """LightGBM lambdarank (bench extra) on the same split, vs our LambdaRank-nDCG."""
    try:
        import lightgbm  # noqa: F401  (optional peer)
    except ImportError:
        print("anchor skipped: lightgbm not installed (pip install -e .[bench])", file=sys.stderr)
        return None
    from maxent.ltr.peer import evaluate_scores, lightgbm_lambdarank
    qtr, qva, qte = _sets(args)
    test = _metric("nDCG@10", args)
    booster = lightgbm_lambdarank(qtr.data, qva.data, seed=args.split_seed)
    lgb_vals = evaluate_scores(booster.predict(qte.data.X), qte.data, test, qte.rel_counts.shape[1])
    rows = [{"ranker": "lightgbm lambdarank (100 trees, early stop on validation)",
             "test_metric": str(test), "value": 100 * lgb_vals.mean()}]
    if "nDCG" in by_train and "nDCG@10" in args.test_metrics:
        ours = _test_values(by_train["nDCG"], "nDCG@10")
        rows.append({"ranker": f"maxent LambdaRank-nDCG ({args.model})", "test_metric": str(test),
                     "value": 100 * ours.mean()})
        pt = paired_tests(ours, lgb_vals, alpha=args.alpha)
        rows[-1].update(diff=100 * pt.difference, p_t=pt.p_t, significant=pt.significant)
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "anchor.csv", df)
    return df


def body(args) -> int:
    t0 = time.perf_counter()
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        raise ParameterError(f"unknown parts {sorted(unknown)}; choose from {','.join(PARTS)}")
    _DATA.clear()                                          # main() may run twice in one process
    _BEST_RESTART[0] = args.best_restart
    if args.model == "lambdamart":                         # issue 15: optional extra, boosting rates
        from maxent.ltr.boosting import import_lightgbm
        import_lightgbm()                                  # error: how to install it
        if args.objective != "lambdarank":
            raise ParameterError("--model lambdamart trains on LambdaRank lambdas; drop --objective")
        if args.learning_rates == [1e-3, 1e-2]:
            args.learning_rates = [0.05, 0.1]
        for part in ("optimality", "optimality001", "pairs"):
            if part in args.parts:
                print(f"{part} skipped: it perturbs or reads model weights, trees have none", file=sys.stderr)
    for n in set(args.train_metrics) | set(args.test_metrics):
        _metric(n, args)                                   # fail early on bad names
    for n in args.train_metrics:
        check_objective(args.objective, _metric(n, args))  # ... and on metrics the objective cannot train
    out = out_dir(args)
    with own_output(out, OUTPUTS):
        return _run_parts(args, out, t0)


OUTPUTS = ("*.csv", "*.png", "table.txt", "summary.json")
"""Final outputs: every table and figure at the top of the folder (cleared at the start of every
run, see own_output); the training records in runs/ are kept for --resume."""


def _run_parts(args, out: Path, t0: float) -> int:
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    tr, va, te = _sets(args)
    print(f"dataset {args.dataset}: train {tr.n_queries} queries / {tr.X.shape[0]} docs, "
          f"validation {va.n_queries}, test {te.n_queries}, {tr.X.shape[1]} features; model {args.model}")
    by_train = None
    need_table = any(p in args.parts for p in TRAINING_PARTS)   # the sweep reuses the table's learning rates
    if need_table:
        by_train, text = part_table(args, out, runs_dir)
        if "table" in args.parts:
            print("\nTest metric (0-100) by training metric (paper 000 Tables 2-4):\n" + text)
    if "curves" in args.parts:
        df = part_curves(args, out, by_train)
        if df is not None:
            last = df.groupby(["train", "test"], sort=False).last()
            print("\nLearning curves (curves.csv/png), last epoch:")
            print(last[["train_objective", "test_metric_on_train", "test_metric_on_valid"]].round(4).to_string())
    if "sweep" in args.parts:
        df = part_sweep(args, out, runs_dir, by_train)
        print("\nTraining-set size x features (sweep.csv/png; paper 000 Fig. 4):")
        piv = df.pivot_table(index=["test", "features", "fraction"], columns="train", values="value", sort=False)
        print(piv.round(2).to_string())
    if ("optimality" in args.parts and args.model != "lambdamart"
            and (df := part_optimality(args, out, by_train)) is not None):
        print("\nMonte-Carlo local optimality (optimality.csv; paper 000 Table 5): "
              f"{args.mc_directions} directions x 10 steps")
        piv = df.pivot_table(index=["train_metric", "test_metric"], columns="set",
                             values=["improved", "improved_eps"], sort=False)
        print(piv.to_string())
    if "optimality001" in args.parts and args.model != "lambdamart":
        df = part_optimality001(args, out, by_train)
        print("\nPaper 001 local optimality (optimality001_counts.csv, optimality001.png): directions "
              "improving each model's own training metric on train, by step size")
        piv = df.pivot_table(index=["train_metric", "directions", "n_directions"], columns="step",
                             values="improved", sort=False)
        print(piv.to_string())
    if "pairs" in args.parts and args.model != "lambdamart":
        df = part_pairs(args, out, runs_dir, by_train)
        print("\nEffective training pairs vs test (pairs.csv/png; paper 001 Fig. 5):")
        print(df.round(3).to_string(index=False))
    if "approx_error" in args.parts:
        df = part_approx_error(args, out)
        print("\nApproxRank approximation error (approx_error.csv/png; paper 002 Figs. 1-2): mean |approx - true| "
              f"over {int(df.n_lists.iloc[0])} run lists, by alpha")
        print(df.pivot_table(index="metric", columns="alpha", values="mean_abs_error", sort=False)
              .round(4).to_string())
    if "anchor" in args.parts:
        df = part_anchor(args, out, by_train)
        if df is not None:
            print("\nSanity anchor (anchor.csv):")
            print(df.round(4).to_string(index=False))
    if args.figures_dir is not None:
        args.figures_dir.mkdir(parents=True, exist_ok=True)
        for name in ("curves.png", "curves.csv", "sweep.png", "sweep.csv", "optimality001.png",
                     "optimality001.csv", "approx_error.png", "approx_error.csv", "pairs.png", "pairs.csv"):
            if (out / name).exists():
                (args.figures_dir / name).write_bytes((out / name).read_bytes())
    wall = time.perf_counter() - t0
    atomic_write_text(out / "summary.json", json.dumps({"wall_seconds": wall, "parts": args.parts,
                                                        "dataset": args.dataset}, indent=1))
    print(f"\nwrote {out} in {wall:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_main(body, build_parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
