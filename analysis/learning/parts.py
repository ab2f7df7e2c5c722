"""Learning curves (Yilmaz & Robertson 2010 Fig. 5), the training-size x feature-count sweep
(their Fig. 4), effective training pairs (Donmez et al. 2009 Fig. 5), ApproxRank's approximation
error (Qin, Liu & Li 2010 Figs. 1-2) and the LightGBM anchor."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis._cli import atomic_write_csv, progress, pyplot, save_figure
from analysis.plots import outside_legend
from analysis.learning.data import _DATA, PAIRS, ROOT, _metric, _sets, top_features
from analysis.learning.jobs import _job, _run_training, _select, _test_values
from maxent.ltr.models import make_model
from maxent.stats import paired_tests


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
    plt = pyplot()
    pairs = list(dict.fromkeys(zip(df.train, df.test)))
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 3.6), sharey=False, squeeze=False,
                             layout="constrained")
    for ax, (tr, te) in zip(axes[0], pairs):
        d = df[(df.train == tr) & (df.test == te)]
        # one legend for every panel: the labels name roles, the titles the metrics
        ax.plot(d.epoch, d.train_objective, ":", color="tab:blue", label="training metric (train set)")
        ax.plot(d.epoch, d.test_metric_on_train, "-", color="tab:red", label="test metric (train set)")
        ax.plot(d.epoch, d.test_metric_on_valid, "-.", color="tab:green", label="test metric (validation)")
        sel = int(d.selected_epoch.iloc[0])
        ax.axvline(sel, color="k", lw=0.8, ls="--", label="epoch validation selects")
        ax.plot([sel], [d.test_metric_on_valid[d.epoch == sel].iloc[0]], "k*", ms=9)
        ax.set_title(f"train {tr}, test {te}\nselected epoch {sel}, stopped at {int(d.stopped_epoch.iloc[0])}",
                     fontsize=9)
        ax.set_xlabel("epoch")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"Learning curves ({args.dataset}, {args.model}; Yilmaz & Robertson 2010 Fig. 5); dashed line: epoch "
                 f"validation selects; patience {args.patience}, cap {args.epochs}", fontsize=9)
    save_figure(fig, out / "curves.png")
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
                own = _select(group[te], te, args.best_restart)[(args.seeds[0], 0)]["selected"][te]
                for tr, rs in group.items():
                    v = _test_values(rs, te)
                    pt = paired_tests(v, ref, alpha=args.alpha) if tr != te else None
                    sel = _select(rs, te, args.best_restart)[(args.seeds[0], 0)]["selected"][te]
                    rows.append({"features": k, "fraction": frac, "n_train_queries": None, "train": tr,
                                 "test": te, "value": 100 * v.mean(),
                                 "diff_vs_self": 0.0 if pt is None else 100 * pt.difference,
                                 "significant": False if pt is None else pt.significant,
                                 "epoch": sel["epoch"], "norm": sel.get("norm", np.nan),
                                 "checksum": sel.get("checksum", ""),
                                 "same_weights_as_self": sel.get("checksum") == own.get("checksum")})
    df = pd.DataFrame(rows)
    n_tr = splits[0].n_queries
    df["n_train_queries"] = [max(2, int(round(f * n_tr))) if f < 1 else n_tr for f in df.fraction]
    atomic_write_csv(out / "sweep.csv", df)
    plt = pyplot()
    tests = list(dict.fromkeys(df.test))
    fig, axes = plt.subplots(1, len(tests), figsize=(6.4 * len(tests), 3.8), squeeze=False, layout="constrained")
    for ax, te in zip(axes[0], tests):
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
        outside_legend(ax)
    fig.suptitle(f"Training-set size x features ({args.dataset}; Yilmaz & Robertson 2010 Fig. 4)", fontsize=10)
    save_figure(fig, out / "sweep.png")
    return df



def part_pairs(args, out: Path, runs_dir: Path, by_train: dict | None):
    """Donmez et al. (2009) Fig. 5: effective pairs of each training metric vs the target's test value.

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
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for tr, d in df.groupby("train", sort=False):
        ax.plot(np.log10(np.maximum(d.effective_pairs, 1)), d.value, marker="o", label=f"train {tr}")
    ax.set_xlabel("log10 effective training pairs (non-zero lambda, at the selected weights)")
    ax.set_ylabel(f"test {target} (0-100)")
    outside_legend(ax)
    ax.set_title(f"Effective pairs vs test {target} ({args.dataset}; Donmez et al. 2009 Fig. 5)", fontsize=9)
    save_figure(fig, out / "pairs.png")
    return df


def part_approx_error(args, out: Path):
    """Qin, Liu & Li (2010) Figs. 1-2: approximation error of ApproxRank metrics on real run lists vs alpha."""
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
    with progress(len(names), "approx_error", args.no_progress) as bar:
        for name in names:
            m = _metric(name, args)
            true = m.value(RankedLists.from_grades(G, rc, lengths))
            for beta in args.approx_beta:                  # every beta of the grid, not only the first
                approx = approx_values(DeltaContext(m, rc), S, G, lengths, args.approx_alphas, beta=beta)
                for a, alpha in enumerate(args.approx_alphas):
                    err = approx[a] - true
                    rows.append({"metric": name, "alpha": alpha, "beta": beta, "n_lists": len(true),
                                 "true_mean": true.mean(), "approx_mean": approx[a].mean(),
                                 "mean_abs_error": np.abs(err).mean(), "max_abs_error": np.abs(err).max()})
            bar.update(1)
    df = pd.DataFrame(rows)
    atomic_write_csv(out / "approx_error.csv", df)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), layout="constrained")
    for name, d in df[df.beta == args.approx_beta[0]].groupby("metric", sort=False):    # the plot: first beta
        axes[0].loglog(d.alpha, d.mean_abs_error, marker="o", label=name)
        axes[1].semilogx(d.alpha, d.approx_mean, marker="o", label=f"Approx{name}")
        axes[1].axhline(d.true_mean.iloc[0], color=axes[1].lines[-1].get_color(), ls=":", lw=0.8)
    axes[0].set_xlabel("alpha")
    axes[0].set_ylabel("mean |approx - true| per list")
    axes[1].set_xlabel("alpha")
    axes[1].set_ylabel("mean over lists (dotted: true metric)")
    handles, labels = axes[0].get_legend_handles_labels()   # one colour per metric in both panels
    fig.legend(handles, [f"{x} (right: Approx{x})" for x in labels], loc="outside lower center", ncol=len(labels),
               fontsize=7, frameon=False)
    fig.suptitle(f"ApproxRank approximation error on {len(runs)} TREC runs, top {args.approx_depth} per topic, "
                 f"beta {args.approx_beta[0]:g} (Qin et al. 2010 Figs. 1-2)", fontsize=9)
    save_figure(fig, out / "approx_error.png")
    return df


def part_anchor(args, out: Path, by_train: dict):
    """LightGBM lambdarank (bench extra) on the same split, vs our LambdaRank-nDCG."""
    try:
        import lightgbm  # noqa: F401  (optional peer)
    except ImportError:
        print("anchor skipped: lightgbm not installed (pip install -e .[bench])", file=sys.stderr)
        return None
    from analysis.learning.peer import evaluate_scores, lightgbm_lambdarank
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

