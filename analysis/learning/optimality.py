"""Local optimality of learned weights: Yilmaz & Robertson (2010) Table 5 and the protocol of
Donmez, Svore & Burges (2009), for two kinds of weights (column ``weights``):

* ``optimum``: the training optimum, from a run of the same training metric and learning rate
  without early stopping, until the mean training objective of its last ``--converge-window``
  epochs differs from that of the window before by less than ``--converge-tol`` (capped at
  ``--optimum-epochs``); an unconverged run gives its epoch of best training objective;
* ``selected``: the weights validation selects for the test metric (the table's models).

``optimality.csv`` (Table 5): per (train, test) pair and ``split``, the alterations of random
unit directions x steps 0.1..1.0 that improve the test metric by > 0 and by > epsilon.
``optimality001_counts.csv`` (Donmez et al. 2009, Figs. 1-4): per model, the directions along
which its own training metric on the training set is not lower, ``A(w) <= A(w + eta r)``
(ties counted as the paper does), and strictly higher, for random and per-weight directions.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis._cli import atomic_write_csv, pyplot, save_figure
from analysis.learning.data import PAIRS, _metric, _sets
from analysis.learning.jobs import _job, _run_all, _run_training, _select, fingerprint
from maxent.ltr.models import make_model
from maxent.ltr.optimality import local_optimality, shift_profile, unit_directions

TIE = 1e-12  # differences of mean metric values within this are float noise


def optimum_runs(args, runs_dir: Path, by_train: dict, trains, keys) -> dict:
    """The training-optimum run of each training metric and (seed, fold) key, at the learning
    rate validation chose for the metric itself (module docstring)."""
    converge = (args.converge_tol, args.converge_window) if args.converge_tol > 0 else None
    jobs = {}
    for tr in trains:
        sel = _select(by_train[tr], tr, args.best_restart)     # runs track their training metric
        for seed, fold in keys:
            lr = sel[(seed, fold)]["lr"]
            jobs[(tr, seed, fold)] = _job(args, tr, [tr], lr, seed, args.optimum_epochs, tag="optimum",
                                          n_features="all", fold=fold, patience=0, converge=converge)
    recs = _run_training(list(jobs.values()), runs_dir, args, "optimum runs")
    return {k: recs[j["name"]] for k, j in jobs.items()}


def optimum_weights(rec: dict) -> tuple[list, int, int, bool]:
    """(weights, their epoch, epochs run, converged) of a training-optimum run: the last epoch
    when the convergence rule ended the run, else the epoch with the best training objective."""
    converged = rec.get("stop_reason") == "converged"
    if converged:
        return rec["thetas"]["final"], rec["stopped_epoch"], rec["stopped_epoch"], True
    return rec["thetas"]["best_train"], rec["best_train_epoch"], rec["stopped_epoch"], False


def run_optimality(job: dict) -> list[dict]:
    args = job["args"]
    qtr, _, qte = _sets(args, fold=job["fold"])
    model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
    theta = np.asarray(job["theta"])
    rows = local_optimality(model, theta, {"train": qtr, "test": qte}, [_metric(job["test"], args)],
                            n_directions=args.mc_directions, eps=args.mc_eps, seed=job["seed"])
    for r in rows:
        r.update({"train_metric": job["train"], "test_metric": job["test"], "weights": job["weights"],
                  "split": r.pop("set"), "epoch": job["epoch"], "epochs_run": job["epochs_run"],
                  "converged": job["converged"], "fold": job["fold"], **fingerprint(theta)})
    return rows


def part_optimality(args, out: Path, runs_dir: Path, by_train: dict):
    """Table 5 of Yilmaz & Robertson (2010), both halves, at the optimum and the selected weights
    of the first seed and fold."""
    pairs = [(tr, te) for tr, te in PAIRS if tr in by_train and te in args.test_metrics]
    if not pairs:
        print("optimality skipped: no (train, test) pair of Yilmaz & Robertson (2010) Table 5 among the "
              "metrics asked", file=sys.stderr)
        return None
    key = (args.seeds[0], 0)
    optimum = optimum_runs(args, runs_dir, by_train, dict.fromkeys(tr for tr, _ in pairs), [key])
    jobs = []
    for tr, te in pairs:
        rec = _select(by_train[tr], te, args.best_restart)[key]
        theta, epoch, ran, converged = optimum_weights(optimum[(tr, *key)])
        jobs.append({"args": args, "train": tr, "test": te, "weights": "optimum", "theta": theta, "epoch": epoch,
                     "epochs_run": ran, "converged": converged, "fold": 0, "seed": args.split_seed})
        jobs.append({"args": args, "train": tr, "test": te, "weights": "selected", "theta": rec["thetas"][te],
                     "epoch": rec["selected"][te]["epoch"], "epochs_run": rec["stopped_epoch"],
                     "converged": rec.get("stop_reason") == "converged", "fold": 0, "seed": args.split_seed})
    rows = [r for rs in _run_all(run_optimality, jobs, args, "optimality") for r in rs]
    df = pd.DataFrame(rows)[["train_metric", "test_metric", "weights", "split", "epoch", "epochs_run", "converged",
                             "norm", "checksum", "base", "alterations", "improved", "improved_eps", "best_gain"]]
    atomic_write_csv(out / "optimality.csv", df)
    return df


def run_optimality001(job: dict) -> dict:
    """One model: its own metric on its training set along random and per-weight directions."""
    args = job["args"]
    qtr, _, _ = _sets(args, fold=job["fold"])
    model = make_model(args.model, qtr.X.shape[1], hidden=args.hidden)
    theta = np.asarray(job["theta"])
    metric = _metric(job["train"], args)
    steps = np.round(np.arange(0, 11) / 10, 1)
    W = unit_directions(theta.size, "weights")
    if args.mc_weights and args.mc_weights < theta.size:
        pick = np.sort(np.random.default_rng(args.split_seed).choice(theta.size, args.mc_weights, replace=False))
        W = np.concatenate([W[pick], W[theta.size + pick]])
    R = unit_directions(theta.size, "random", n=args.mc_directions, seed=args.split_seed)
    profiles = {kind: shift_profile(model, theta, qtr, metric, V, steps) for kind, V in (("random", R), ("weights", W))}
    return {**{k: job[k] for k in ("train", "weights", "seed", "fold", "epoch", "epochs_run", "converged")},
            "steps": steps,
            **fingerprint(theta), "profiles": profiles}


def part_optimality001(args, out: Path, runs_dir: Path, by_train: dict):
    """Donmez et al. (2009) section 5 (Figs. 1-4) at the optimum and the selected weights of every
    seed and fold."""
    keys = sorted({k for tr in args.train_metrics for k in _select(by_train[tr], tr, args.best_restart)})
    optimum = optimum_runs(args, runs_dir, by_train, args.train_metrics, keys)
    jobs = []
    for tr in args.train_metrics:
        sel = _select(by_train[tr], tr, args.best_restart)
        for seed, fold in keys:
            theta, epoch, ran, converged = optimum_weights(optimum[(tr, seed, fold)])
            jobs.append({"args": args, "train": tr, "weights": "optimum", "seed": seed, "fold": fold,
                         "theta": theta, "epoch": epoch, "epochs_run": ran, "converged": converged})
            rec = sel[(seed, fold)]
            jobs.append({"args": args, "train": tr, "weights": "selected", "seed": seed, "fold": fold,
                         "theta": rec["thetas"][tr], "epoch": rec["selected"][tr]["epoch"],
                         "epochs_run": rec["stopped_epoch"], "converged": rec.get("stop_reason") == "converged"})
    res = _run_all(run_optimality001, jobs, args, "optimality001")
    rows, curves = [], []
    for r in res:
        steps = r["steps"]
        for kind, P in r["profiles"].items():
            gain = P - P[:, :1]
            for j, eta in enumerate(steps):
                if eta == 0:
                    continue
                rows.append({"train_metric": r["train"], "weights": r["weights"], "seed": r["seed"], "fold": r["fold"],
                             "epoch": r["epoch"], "epochs_run": r["epochs_run"], "converged": r["converged"],
                             "norm": r["norm"], "checksum": r["checksum"], "directions": kind,
                             "n_directions": len(P), "step": eta, "base": P[0, 0],
                             "not_worse": int((gain[:, j] >= -TIE).sum()), "improved": int((gain[:, j] > TIE).sum()),
                             "improved_eps": int((gain[:, j] > args.mc_eps).sum()),
                             "mean_value": float(P[:, j].mean()), "best_gain": float(gain[:, j].max())})
        if r["seed"] == args.seeds[0] and r["fold"] == 0:
            P = r["profiles"]["random"]
            for k in range(min(4, len(P))):                      # the 4 plotted directions of Figs. 1-4
                for j, eta in enumerate(steps):
                    curves.append({"train_metric": r["train"], "weights": r["weights"], "direction": k, "step": eta,
                                   "value": P[k, j]})
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "optimality001_counts.csv", df)
    cdf = pd.DataFrame(curves)
    atomic_write_csv(out / "optimality001.csv", cdf)
    _plot001(df, cdf, args, out)
    return df


def _plot001(df, cdf, args, out: Path):
    plt = pyplot()
    trains = list(dict.fromkeys(df.train_metric))
    fig, axes = plt.subplots(2, len(trains), figsize=(3.2 * len(trains), 6.4), squeeze=False, layout="constrained")
    for i, tr in enumerate(trains):
        ax = axes[0, i]
        for k, d in cdf[(cdf.train_metric == tr) & (cdf.weights == "optimum")].groupby("direction"):
            ax.plot(d.step, d.value, marker=".", label=f"top: direction {k + 1}")
        ax.set_title(f"LambdaRank-{tr}: {tr} on train", fontsize=8)
        ax.set_xlabel("step size eta")
        ax = axes[1, i]
        d = df[(df.train_metric == tr) & (df.directions == "random")]
        for w, dw in d.groupby("weights"):
            g = dw.groupby("step")
            share = 100 * g.not_worse.sum() / g.n_directions.sum()
            ax.plot(share.index, share.values, marker="o", label=f"bottom, {w}: A(w) <= A(w + eta r)")
            strict = 100 * g.improved.sum() / g.n_directions.sum()
            ax.plot(strict.index, strict.values, ls=":", marker=".", label=f"bottom, {w}: strictly higher")
        ax.set_ylabel("% random directions", fontsize=8)
        ax.set_xlabel("step size eta")
    # the series are the same in every column: one legend under the panels covers no data
    handles, labels = [], []
    for ax in (axes[0, 0], axes[1, 0]):
        h, lab = ax.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"Local optimality on the training set ({args.dataset}, {args.model}; Donmez et al. 2009 "
                 "Figs. 1-4); top: optimum weights, four directions", fontsize=9)
    save_figure(fig, out / "optimality001.png")
