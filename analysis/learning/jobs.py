"""Training jobs of the learning-to-rank experiments: one job trains one model and records its
validation-selected weights per test metric (epoch, weight norm, checksum: identical models are
visible as such); records are saved as they finish so that --resume skips them."""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from analysis._cli import atomic_write_text, parallel_map, progress, report_resumed
from analysis.learning.data import _BEST_RESTART, _metric, _sets
from maxent.ltr.models import make_model
from maxent.ltr.train import evaluate, train_ranker


def fingerprint(values) -> dict:
    """``{"norm", "checksum"}`` of a weight vector: its Euclidean norm and the first 16 hex digits
    of the SHA-256 of its float64 bytes (equal checksums: bit-identical weights)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    return {"norm": float(np.linalg.norm(v)), "checksum": hashlib.sha256(v.tobytes()).hexdigest()[:16]}


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
    kind = job.get("model") or args.model
    if kind == "lambdamart":
        rec = _lambdamart_job(dict(job, tests=names), qtr, qva, qte, metric, tracked)
        rec["fold"] = job.get("fold", 0)
        return rec
    model = make_model(kind, qtr.X.shape[1], hidden=args.hidden)
    t0 = time.perf_counter()
    res = train_ranker(model, qtr, metric, valid=qva, track=tracked, epochs=job["epochs"],
                           learning_rate=job["lr"], sigma=args.sigma, batch_size=args.batch_size,
                           seed=job["seed"], restart_patience=args.restart_patience or None,
                           lr_decay=args.lr_decay,
                           objective=job.get("objective") or getattr(args, "objective", "lambdarank"),
                           sigma_s=getattr(args, "sigma_s", 1.0),
                           alpha=job["alpha"] if job.get("alpha") is not None else args.approx_alpha[0],
                           beta=job["beta"] if job.get("beta") is not None else args.approx_beta[0],
                           patience=job.get("patience", getattr(args, "patience", 0)) or None,
                           converge_tol=job.get("converge_tol"), converge_window=job.get("converge_window") or 5)
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
    out["final"] = {"epoch": res.stopped_epoch, **fingerprint(res.theta)}
    for m, name in zip(tracked, names):
        b = res.best[str(m)]
        test_vals = evaluate(model, b["theta"], qte, [m])[str(m)]
        out["selected"][name] = {"epoch": b["epoch"], "valid": b["value"], "test": test_vals.tolist(),
                                 **fingerprint(b["theta"])}
        thetas[name] = b["theta"]
    out["thetas"] = {k: v.tolist() for k, v in thetas.items()}
    return out


def _lambdamart_job(job: dict, qtr, qva, qte, metric, tests) -> dict:
    """One LambdaMART run (LightGBM), as a record of :func:`run_job`'s format. Trees have no
    weight vector: the checksum is that of the selected model's test scores, the norm is NaN."""
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
        scores = res.predict(qte.data.X, m)
        vals = metric_values(m, scores, groups)
        out["selected"][name] = {"epoch": b["epoch"], "valid": b["value"], "test": vals.tolist(),
                                 "norm": float("nan"), "checksum": fingerprint(scores)["checksum"]}
    return out


def _run_all(fn, jobs, args, desc, on_result=None):
    """``fn`` over the jobs in job order; ``on_result(r)`` is called as each result arrives (so
    finished work is saved before the next job starts, and --resume keeps it after a crash)."""
    if not jobs:
        return []
    results = []
    with progress(len(jobs), desc, args.no_progress) as bar:
        for r in parallel_map(fn, jobs, args):      # local, process pool or Dask (--scheduler)
            if on_result is not None:
                on_result(r)
            results.append(r)
            bar.update(1)
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
         alpha=None, beta=None, patience=None, objective=None, model=None, converge=None):
    """One training job; ``patience`` overrides --patience (0: train to the cap), ``objective``
    and ``model`` override --objective and --model; ``converge`` = (tolerance, window) ends the
    run by the convergence rule of :func:`maxent.ltr.train.train_ranker`."""
    patience = getattr(args, "patience", 0) if patience is None else patience
    name = f"{tag}__{train}__lr{lr:g}__s{seed}"
    if patience:                         # early-stopped runs differ from fixed-budget ones (--resume)
        name += f"__pat{patience}"
    if converge is not None:             # ... and so do runs to convergence, by rule and cap
        name += f"__conv{converge[0]:g}w{converge[1]}e{epochs}"
    if getattr(args, "folds", 1) > 1:
        name += f"__fold{fold}of{args.folds}"
    if alpha is not None:
        name += f"__a{alpha:g}__b{beta:g}"
    objective = objective or getattr(args, "objective", "lambdarank")
    if objective != "lambdarank":       # keep LambdaRank run names (and --resume) unchanged
        name = f"{objective}__{name}"
    if (model or args.model) == "lambdamart":      # boosted runs never resume from net runs
        name = f"lambdamart__{name}"
    if tag != "table":
        name += f"__f{n_features}__p{fraction:g}"
    name = name.replace("@", "at").replace("(", "_").replace(")", "").replace(",", "_").replace("=", "")
    return {"args": args, "name": name, "train": train, "tests": list(tests), "lr": lr, "seed": seed,
            "epochs": epochs, "features": features, "n_features": n_features, "fraction": fraction, "fold": fold,
            "alpha": alpha, "beta": beta, "patience": patience, "objective": objective, "model": model,
            "converge_tol": None if converge is None else converge[0],
            "converge_window": None if converge is None else converge[1]}


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

