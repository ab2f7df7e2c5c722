"""LambdaRank speed: lambdas of one 1000-document query per metric (target < 10 ms), with the
default kernel and the dense all-pairs one; SoftRank / ApproxRank gradients; one epoch over the
Yahoo sample per objective, against a LightGBM lambdarank boosting iteration on the same data.
Medians of repeated timings, never asserted.

    python benchmarks/bench_lambdarank.py     # LightGBM from the bench extra
"""
from __future__ import annotations

import statistics
import sys

import numpy as np

from _common import timing

from maxent.letor import default_data_root, read_letor, standardize
from maxent.ltr.approx import approx_metric
from maxent.ltr.lambdas import DeltaContext, lambda_gradients
from maxent.ltr.models import make_model
from maxent.ltr.softrank import soft_metric
from maxent.ltr.train import QuerySet, train_lambdarank
from maxent.metrics import parse_measure

METRICS = ["nDCG(gain=exp)", "nDCG@10(gain=exp)", "P@10", "AP", "RR", "GAP", "ERR@20"]


def _median_ms(fn, repeat: int = 15) -> float:
    return 1000 * timing(fn, repeat, statistics.median, warm=True)


def bench_lambdas(N: int = 1000) -> list[tuple[str, float, float]]:
    """(metric, default kernel ms, dense all-pairs kernel ms) for one query of N documents."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, N)[None]
    s = rng.standard_normal(N)[None]
    counts = np.bincount(y[0], minlength=5)[None]
    out = []
    for name in METRICS:
        ctx = DeltaContext(parse_measure(name), counts)
        auto = _median_ms(lambda: lambda_gradients(s, y, ctx), 31)
        dense = _median_ms(lambda: lambda_gradients(s, y, ctx, method="dense"), 7)
        out.append((name, auto, dense))
    return out


def bench_smooth(sizes=(100, 1000)) -> list[tuple[str, int, float]]:
    """(objective:metric, N, ms) for the SoftRank and ApproxRank value + gradient of one query."""
    rng = np.random.default_rng(0)
    out = []
    for N in sizes:
        y = rng.integers(0, 5, N)
        s = rng.standard_normal(N)
        counts = np.bincount(y, minlength=5)[None]
        for name in ("nDCG(gain=exp)", "AP", "GAP"):
            ctx = DeltaContext(parse_measure(name), counts)
            # SoftNDCG needs the O(N^3) rank distributions (about 40 s at N = 1000): small N only
            if N <= 200 or name != "nDCG(gain=exp)":
                ms = _median_ms(lambda: soft_metric(ctx, s, y, sigma_s=0.5), 5)
                out.append((f"softrank:{name}", N, ms))
            if name != "GAP":
                out.append((f"approxrank:{name}", N, _median_ms(lambda: approx_metric(ctx, s, y), 5)))
    return out


def main() -> int:
    print("lambdas, one query of 1000 documents (grades 0..4 uniform), median ms "
          "(target < 10 ms; dense = the all-pairs kernel used before the block kernel):")
    for name, ms, dense in bench_lambdas():
        print(f"  {name:<20} {ms:7.2f} ms   (dense {dense:6.2f} ms)")
    print("\nSoftRank / ApproxRank value + gradient of one query, median ms:")
    for name, N, ms in bench_smooth():
        print(f"  {name:<28} N={N:<5} {ms:9.2f} ms")
    root = default_data_root() / "yahoo_lightgbm_sample"
    if not root.exists():
        print(f"Yahoo sample not found at {root}; skipping the epoch benchmark", file=sys.stderr)
        return 0
    tr = read_letor(root / "rank.train")
    (tr,) = standardize(tr)
    qs = QuerySet(tr, 5)
    m = parse_measure("nDCG(gain=exp)")
    print(f"\none epoch over the Yahoo sample ({tr.n_queries} queries, {tr.n_docs} docs, "
          f"{tr.n_features} features), per-query updates, median of 3:")
    for kind, objective in (("linear", "lambdarank"), ("net", "lambdarank"), ("net", "softrank"),
                            ("net", "approxrank")):
        model = make_model(kind, tr.n_features)
        kw = dict(learning_rate=1e-3, objective=objective)
        # epochs=1 includes the two evaluations (before and after); time them apart
        full = _median_ms(lambda: train_lambdarank(model, qs, m, epochs=1, **kw), 3)
        ev = _median_ms(lambda: train_lambdarank(model, qs, m, epochs=0, **kw), 3)
        print(f"  {kind:<7} {objective:<11} {full - ev:7.1f} ms per epoch of updates (+{ev:.1f} ms per "
              "evaluation of the training set)")
    try:
        import lightgbm as lgb
    except ImportError:
        print("lightgbm not installed (pip install -e .[bench]); no peer timing", file=sys.stderr)
        return 0
    params = {"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 50,
              "verbose": -1, "num_threads": 1, "force_row_wise": True, "deterministic": True}
    booster = lgb.Booster(params, lgb.Dataset(tr.X, tr.y, group=tr.sizes, free_raw_data=False).construct())
    per_iter = 1000 * timing(booster.update, 50, statistics.mean)
    print(f"\nLightGBM {lgb.__version__} lambdarank, 1 thread, same data: {per_iter:7.1f} ms per boosting "
          "iteration (mean of 50; Dataset construction excluded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
