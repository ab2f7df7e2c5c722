"""LambdaMART speed: time per boosting iteration with our objective, as a ratio to LightGBM's
built-in ``lambdarank`` for nDCG on the same data in the same run (target: within 3x).

Same settings on both sides (``lambdarank_norm=False``, truncation 30, one thread); our objective
also for AP, GAP, RR and ERR@10 (no built-in peer), with the time of the objective call alone.
With XGBoost installed, ``rank:map`` against our AP objective. Medians over repeats, never asserted.

    python benchmarks/bench_boosting.py [--trees 30] [--repeat 3]     # extras lightgbm, xgboost
"""
from __future__ import annotations

import argparse
import sys
from statistics import median

import numpy as np

from _common import timing

from maxent.letor import default_data_root, read_letor
from maxent.ltr.boosting import QueryGroups, lightgbm_objective, xgboost_objective
from maxent.metrics import parse_measure
from maxent.synthetic import artificial, make_synthetic

T = 30
OTHERS = ["AP", "GAP", "RR", "ERR@10"]


def _datasets():
    root = default_data_root()
    files = {"yahoo sample": root / "yahoo_lightgbm_sample" / "rank.train",
             "mslr 5k": root / "mslr_web10k_5k" / "msn1.fold1.train.5k.txt"}
    out = [(label, read_letor(path)) for label, path in files.items() if path.exists()]
    return out + [("artificial 1000x50", make_synthetic(1000, **artificial(50, 50), seed=0))]


def bench_lightgbm(data, trees, repeat):
    import lightgbm as lgb

    base = dict(learning_rate=0.1, num_leaves=31, min_data_in_leaf=20, lambdarank_truncation_level=T,
                lambdarank_norm=False, deterministic=True, num_threads=1, verbose=-1, force_row_wise=True,
                metric="None")
    ds = lgb.Dataset(data.X, data.y.astype(float), group=np.diff(data.offsets), free_raw_data=False)
    ds.construct()

    def run(obj):
        return lambda: lgb.train(dict(base, objective=obj), ds, num_boost_round=trees)

    rows = []
    builtin = timing(run("lambdarank"), repeat, median) / trees
    rows.append(("lightgbm lambdarank (built-in)", "nDCG", builtin, 1.0, None))
    groups = QueryGroups.from_offsets(data.y, data.offsets)
    s = np.random.default_rng(0).normal(size=data.n_docs)
    for name in ["nDCG(gain=exp)"] + OTHERS:
        kw = dict(truncation=T, ideal_cutoff=T) if name.startswith("nDCG") else dict(truncation=T)
        fobj = lightgbm_objective(parse_measure(name), **kw)
        per_iter = timing(run(fobj), repeat, median) / trees
        call = timing(lambda: fobj.objective.gradients(s, groups), max(5, repeat), median)
        rows.append(("ours via lightgbm", name, per_iter, per_iter / builtin, call))
    return rows


def bench_xgboost(data, trees, repeat):
    import xgboost as xgb

    N = int(np.diff(data.offsets).max())
    d = xgb.DMatrix(data.X, label=(data.y >= 2).astype(float))
    d.set_group(np.diff(data.offsets))
    params = dict(eta=0.1, max_depth=6, tree_method="hist", nthread=1)
    peer = dict(params, objective="rank:map", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=N,
                lambdarank_normalization=False, lambdarank_score_normalization=False)
    builtin = timing(lambda: xgb.train(peer, d, trees), repeat, median) / trees
    fobj = xgboost_objective(parse_measure("AP"))          # labels are already binary (grade >= 2)
    ours = timing(lambda: xgb.train(dict(params, base_score=0.0), d, trees, obj=fobj), repeat, median) / trees
    return [("xgboost rank:map (built-in)", "AP (grade>=2)", builtin, 1.0, None),
            ("ours via xgboost (all pairs)", "AP (grade>=2)", ours, ours / builtin, None)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trees", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    try:
        import lightgbm
    except ImportError:
        print('lightgbm not installed: pip install -e ".[lightgbm]"', file=sys.stderr)
        return 1
    try:
        import xgboost
    except ImportError:
        xgboost = None
    for label, data in _datasets():
        sizes = np.diff(data.offsets)
        print(f"\n{label}: {data.n_queries} queries, {data.n_docs} docs, {data.n_features} features, "
              f"{sizes.min()}-{sizes.max()} docs/query; {args.trees} trees, 1 thread")
        rows = bench_lightgbm(data, args.trees, args.repeat)
        if xgboost is not None:
            rows += bench_xgboost(data, args.trees, args.repeat)
        for who, metric, sec, ratio, call in rows:
            extra = "" if call is None else f"   (objective call {1000 * call:6.2f} ms)"
            print(f"  {who:<32} {metric:<16} {1000 * sec:8.2f} ms/iteration  x{ratio:5.2f}{extra}")
    versions = f"lightgbm {lightgbm.__version__}" + (f", xgboost {xgboost.__version__}" if xgboost else "")
    print(f"\n{versions}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
