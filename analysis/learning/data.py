"""Data of the learning-to-rank experiments: the named data sets, splits and folds, normalisation,
and the per-process cache of prepared query sets that the training jobs share."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from maxent.errors import ParameterError
from maxent.letor import RankingData, read_letor, split_queries, standardize
from maxent.synthetic import artificial, make_synthetic
from maxent.ltr.train import QuerySet
from maxent.metrics import parse_measure

ROOT = Path(__file__).resolve().parents[2]
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
POOLED = ("artificial", "synthetic", *TREC_SETS)
"""Data sets drawn or built as one pool of queries, split by --split-fractions or --folds."""
PARTS = ("table", "curves", "sweep", "optimality", "optimality001", "pairs", "approx_error", "anchor", "approx")
DEFAULT_PARTS = PARTS[:-1]
"""Parts run without --parts (``approx`` trains its own grid: ask for it)."""
TRAINING_PARTS = ("table", "curves", "sweep", "optimality", "optimality001", "pairs", "anchor")
# (training metric, test metric) pairs of Yilmaz & Robertson (2010) Fig. 4, Fig. 5 and Table 5
PAIRS = (("AP", "P@10"), ("P@10", "P@10"), ("nDCG", "nDCG@10"), ("nDCG@10", "nDCG@10"))


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
    pooled = args.train is None and args.dataset in POOLED
    if args.folds > 1 and not pooled:
        raise ParameterError(f"--folds applies to pooled data sets ({', '.join(POOLED)}); "
                             f"{args.dataset} has fixed train/test files")
    if pooled:
        if args.dataset == "artificial":
            full = make_synthetic(n_queries(args), **artificial(args.docs_per_query, args.n_features),
                                  seed=args.split_seed)
        elif args.dataset == "synthetic":
            full = synthetic_set(args)
        else:
            full = trec_learning_set(args)
        if args.folds > 1:
            tr, va, te = fold_split(full, args.folds, fold, seed=args.split_seed)
        else:
            tr, va, te = split_queries(full, tuple(args.split_fractions), seed=args.split_seed)
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
            raise ParameterError(f"unknown dataset {args.dataset!r}; use one of {sorted([*DATASETS, *POOLED])}, "
                                 "or give --train/--test")
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


def n_queries(args) -> int:
    """--n-queries, or its default: 1000 artificial queries, 10 000 synthetic ones."""
    if args.n_queries is not None:
        return args.n_queries
    return 10_000 if args.dataset == "synthetic" else 1000


def synthetic_set(args) -> RankingData:
    """The --dataset synthetic pool (maxent.synthetic), drawn from --split-seed."""
    return make_synthetic(n_queries(args), min_docs=args.min_docs, max_docs=args.max_docs,
                          feature_noise=args.feature_noise, relevance=args.relevance, seed=args.split_seed)


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


# per process: the splits and prepared query sets, loaded once per (features, fraction, fold)
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

