"""Yilmaz & Robertson (2010) Tables 2-4: the train-metric x test-metric table with the papers'
significance marks, the claims and their verdicts (:mod:`analysis.learning.claims`), the power
analysis, and the list of every trained model (``models.csv``: selected epoch, weight norm and
checksum)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis._cli import atomic_write_csv, atomic_write_text
from analysis.learning.claims import VERDICT_RULE, claim_rows, power_rows
from analysis.learning.jobs import _approx_grid, _job, _run_training, _select, _test_values
from maxent.stats import bootstrap_ci, minimum_detectable_effect, paired_tests


def cell_marks(row) -> str:
    """The marks of one table cell from its CSV flags: ``*`` (sig_vs_self), ``o`` (sig_ap_ndcg);
    NaN (no test for that cell) marks nothing."""
    def flag(key):
        v = row.get(key, False)
        return bool(v) if isinstance(v, (bool, np.bool_)) else (v == 1 if isinstance(v, (int, float)) else False)

    return ("*" if flag("sig_vs_self") else "") + ("o" if flag("sig_ap_ndcg") else "")


def model_rows(recs: list[dict]) -> pd.DataFrame:
    """models.csv: one row per trained model and selection metric: the epoch validation selected,
    the weight norm and checksum (equal checksums: identical weights), and the mean test value;
    ``selection`` "final" is the run's last epoch."""
    rows = []
    for r in recs:
        key = {"run": r["name"], "train": r["train"], "lr": r["lr"], "seed": r["seed"], "fold": r.get("fold", 0),
               "alpha": r.get("alpha"), "beta": r.get("beta"), "features": r.get("features"),
               "fraction": r.get("fraction", 1.0)}
        for name, s in r["selected"].items():
            rows.append({**key, "selection": name, "epoch": s["epoch"], "norm": s.get("norm", np.nan),
                         "checksum": s.get("checksum", ""), "valid": s["valid"], "test": 100 * float(np.mean(s["test"]))})
        if "final" in r:
            rows.append({**key, "selection": "final", "epoch": r["final"]["epoch"], "norm": r["final"]["norm"],
                         "checksum": r["final"]["checksum"], "valid": np.nan, "test": np.nan})
    return pd.DataFrame(rows)


def part_table(args, out: Path, runs_dir: Path):
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
                   "epoch": sel["selected"][te]["epoch"], "norm": sel["selected"][te].get("norm", np.nan),
                   "checksum": sel["selected"][te].get("checksum", ""),
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
    atomic_write_csv(out / "models.csv", model_rows([recs[j["name"]] for j in jobs]))
    claims = claim_rows(vals, args)
    text = table_text(table, args.train_metrics, tests, args.alpha, args.power)
    if len(claims):
        atomic_write_csv(out / "claims.csv", claims)
        power = power_rows(claims, args)
        atomic_write_csv(out / "power.csv", power)
        text += "\n\n" + claims_text(claims, power, args)
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
    sels = [(te, r) for tr in args.train_metrics for te in tests
            for r in _select(by_train[tr], te, args.best_restart).values()]
    at0 = sum(r["selected"][te]["epoch"] == 0 for te, r in sels)
    chosen = ", ".join(f"{lr:g}: {sum(r['lr'] == lr for _, r in sels)}"
                       for lr in sorted(set(args.learning_rates)))
    last = max(int(r.get("stopped_epoch") or 0) for r in recs)
    return (f"training runs: {n_pat} stopped by patience ({args.patience} epochs), {n_cap} hit the epoch cap "
            f"({args.epochs}); latest stop at epoch {last}\nvalidation selections (cell x fold x seed): "
            f"{len(sels)}, {at0} kept epoch 0 (untrained); learning rates chosen: {chosen}")


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


def claims_text(claims: pd.DataFrame, power: pd.DataFrame, args) -> str:
    """The claims' verdicts under the one rule, and the power analysis for the next run."""
    lines = ["Claims (claims.csv); verdict: " + VERDICT_RULE.format(alpha=args.alpha, power=args.power)]
    for r in claims.itertuples():
        lines.append(f"  {r.claim:<42} {r.diff:+6.2f} [{r.ci_low:+.2f},{r.ci_high:+.2f}] p_holm={r.p_holm:.3f}  "
                     f"{r.verdict}")
    need = int(power.queries_needed.max())
    lines.append(f"power (power.csv): {int(claims.n_test_queries.iloc[0])} test queries, MDE "
                 f"{claims.mde.min():.2f}-{claims.mde.max():.2f} points over {len(claims)} claims; an MDE of "
                 f"{args.target_mde:g} on every claim needs {need} test queries")
    return "\n".join(lines)
