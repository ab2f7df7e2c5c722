"""Qin, Liu & Li (2010): ApproxAP and ApproxNDCG over their alpha and beta grid with random
restarts (``approx_grid.csv``), the alpha-versus-restarts trade-off (their Table 5 analogue,
``approx_restarts.csv``), and ApproxRank against LambdaRank and LambdaMART trained for the same
metric on the same split (``approx_compare.csv``, decided by :mod:`analysis.learning.claims`).
Every choice (alpha, beta, restart; trees) is made on validation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis._cli import atomic_write_csv
from analysis.learning.claims import verdict
from analysis.learning.jobs import _job, _run_training
from maxent.stats import adjust
from maxent.stats import bootstrap_ci, family_mde, paired_tests

TRAINS = ("AP", "nDCG")
"""The metrics Qin et al. (2010) approximate."""
LAMBDAMART_RATE = 0.1
"""LightGBM's default shrinkage, for the LambdaMART side of the comparison (--trees trees)."""


def _best(records: list[dict], test: str) -> dict:
    """The record with the best validation value of ``test`` (first on ties)."""
    return max(records, key=lambda r: r["selected"][test]["valid"])


def part_approx(args, out: Path, runs_dir: Path):
    from maxent.ltr.boosting import import_lightgbm

    trains = [t for t in TRAINS if t in args.train_metrics] or list(TRAINS)
    tests = args.test_metrics
    restarts = list(range(args.approx_restarts))
    lr = args.learning_rates[0]
    jobs = {"approx": [], "lambdarank": [], "lambdamart": []}
    for tr in trains:
        for a in args.approx_alpha:
            for b in args.approx_beta:
                for s in restarts:
                    jobs["approx"].append(_job(args, tr, tests, lr, s, args.epochs, tag="approx", n_features="all",
                                               alpha=a, beta=b, objective="approxrank"))
        for s in restarts:
            jobs["lambdarank"].append(_job(args, tr, tests, lr, s, args.epochs, tag="approx", n_features="all",
                                           objective="lambdarank"))
        jobs["lambdamart"].append(_job(args, tr, tests, LAMBDAMART_RATE, 0, args.epochs, tag="approx",
                                       n_features="all", objective="lambdarank", model="lambdamart"))
    try:
        import_lightgbm()
    except Exception as e:                       # the lightgbm extra is optional
        print(f"approx: LambdaMART skipped ({e})")
        jobs["lambdamart"] = []
    recs = _run_training([j for js in jobs.values() for j in js], runs_dir, args, "approx runs")
    got = {k: [dict(recs[j["name"]], learner=k) for j in js] for k, js in jobs.items()}

    grid = pd.DataFrame([{"train": r["train"], "alpha": r["alpha"], "beta": r["beta"], "restart": r["seed"],
                          **{f"valid_{te}": 100 * r["selected"][te]["valid"] for te in tests},
                          **{f"test_{te}": 100 * float(np.mean(r["selected"][te]["test"])) for te in tests},
                          "epoch": r["selected"][r["train"]]["epoch"], "checksum": r["selected"][r["train"]]["checksum"]}
                         for r in got["approx"]])
    atomic_write_csv(out / "approx_grid.csv", grid)

    rows = []
    for tr in trains:
        te = _own_test(tr, tests)
        for a in args.approx_alpha:
            for k in range(1, len(restarts) + 1):
                pool = [r for r in got["approx"] if r["train"] == tr and r["alpha"] == a and r["seed"] < k]
                r = _best(pool, te)
                rows.append({"train": tr, "test": te, "alpha": a, "restarts": k, "beta": r["beta"], "restart": r["seed"],
                             "valid": 100 * r["selected"][te]["valid"],
                             "value": 100 * float(np.mean(r["selected"][te]["test"]))})
    atomic_write_csv(out / "approx_restarts.csv", pd.DataFrame(rows))

    comp = []
    for tr in trains:
        for te in tests:
            a = _best([r for r in got["approx"] if r["train"] == tr], te)
            va = np.asarray(a["selected"][te]["test"])
            for other in ("lambdarank", "lambdamart"):
                pool = [r for r in got[other] if r["train"] == tr]
                if not pool:
                    continue
                vb = np.asarray(_best(pool, te)["selected"][te]["test"])
                pt = paired_tests(va, vb, alpha=args.alpha)
                lo, hi = bootstrap_ci(va - vb, level=1 - args.alpha, n_resamples=args.n_boot, seed=args.split_seed)
                comp.append({"train": tr, "test": te, "versus": other, "approx": 100 * va.mean(),
                             "other": 100 * vb.mean(), "alpha": a["alpha"], "beta": a["beta"],
                             "diff": 100 * pt.difference, "ci_low": 100 * lo, "ci_high": 100 * hi,
                             "sd_diff": 100 * float(np.std(va - vb, ddof=1)), "n_test_queries": len(va),
                             "p_t": pt.p_t})
    df = pd.DataFrame(comp)
    if len(df):
        m = len(df)
        df["n_claims"] = m
        df["mde"] = [100 * family_mde(sd / 100, n, n_claims=m, alpha=args.alpha, power=args.power)
                     for sd, n in zip(df.sd_diff, df.n_test_queries)]
        df["p_holm"] = adjust(df.p_t.to_numpy(), "holm")
        df["verdict"] = [verdict(r.diff, r.p_holm, r.mde, args.alpha) for r in df.itertuples()]
        names = {"lambdarank": "LambdaRank", "lambdamart": "LambdaMART"}
        df.insert(0, "claim", [f"Approx{r.train.upper()} > {names[r.versus]}-{r.train} on test {r.test}"
                               for r in df.itertuples()])
    atomic_write_csv(out / "approx_compare.csv", df)
    return df


def _own_test(train: str, tests) -> str:
    """The test metric that reads a training metric's own quality: itself, else its cut-off form."""
    for te in (train, f"{train}@10"):
        if te in tests:
            return te
    return tests[0]
