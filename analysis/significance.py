"""``python -m analysis.significance``: uncertainty and paired tests for the informativeness
results (Yilmaz & Robertson 2010, Table 1 and Fig. 3; Robertson, Kanoulas & Yilmaz 2010, Fig. 3).

Reads the per-list outputs ``python -m analysis.evidence`` leaves in ``out/evidence/`` and writes
to ``results/significance/all/``: table1.csv (PR-curve RMS with 95% bootstrap intervals over
topics), paired.csv (AP vs nDCG vs GAP on PR RMS and P@10 error, per topic and per run),
protocol.csv and protocol_tests.csv (P@10 under each count constraint and gain),
alignment.csv (recall- against rank-aligned errors) and discriminative.csv (Wilson intervals,
exact McNemar tests against nDCG).

A topic's value is the sum over its lists scaled so that the mean over topics is the mean over
lists (``T * sum_t / N``). The paired t-test gives the verdict (Wilcoxon and sign test beside
it); Holm's correction runs over the collections of each comparison.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli
from analysis._provenance import RESULTS, command_line, write_provenance
from maxent.errors import InputError
from maxent.stats import adjust, bootstrap_ci, mcnemar_exact, paired_tests, wilson_interval

COLLECTIONS = ("trec_runs", "trec_covid_r1", "robust03", "trec_dl19_passage")
SOURCE = Path("out") / "evidence"
ALPHA = 0.05
B = 2000
_SOLVED = {"optimal", "optimal_inaccurate", "boundary"}


def _instances(kind: str, dataset: str) -> pd.DataFrame:
    path = SOURCE / kind / dataset / "instances.csv"
    if not path.exists():
        raise InputError(path, None, f"missing; run `python -m analysis.evidence --only {kind}/{dataset}` first")
    return pd.read_csv(path, dtype={"topic": str, "run": str})


def _topic_scaled(frame: pd.DataFrame, col: str) -> np.ndarray:
    """Per topic T * sum_t(col) / N: their mean over topics is the mean of ``col`` over lists."""
    s = frame.groupby("topic")[col].sum()
    return (s * len(s) / len(frame)).to_numpy()


def table1(inst: pd.DataFrame, dataset: str) -> pd.DataFrame:
    rows = []
    for (metric, t), g in inst[inst["eligible"]].groupby(["metric", "threshold"], sort=False):
        lo, hi = bootstrap_ci(_topic_scaled(g, "rms"), n_resamples=B, seed=0)
        rows.append(dict(dataset=dataset, metric=metric, threshold=t, lists=len(g), topics=g["topic"].nunique(),
                         rms=g["rms"].mean(), rms_lo=lo, rms_hi=hi, mae=g["mae"].mean()))
    return pd.DataFrame(rows)


def _wide(inst: pd.DataFrame, col: str, metrics) -> pd.DataFrame:
    """(run, topic, threshold) x metric values of ``col`` on the lists eligible for every metric."""
    e = inst[inst["eligible"] & inst["metric"].isin(metrics)]
    w = e.pivot_table(index=["run", "topic", "threshold"], columns="metric", values=col, aggfunc="first")
    return w.dropna().reset_index()


def _test(dataset, quantity, level, t, a, b, da, db, n_lists):
    """One paired comparison: a - b over units (topics or runs); negative favours a."""
    d = np.asarray(da) - np.asarray(db)
    r = paired_tests(da, db, alpha=ALPHA)
    lo, hi = bootstrap_ci(d, n_resamples=B, seed=0)
    return dict(dataset=dataset, quantity=quantity, unit=level, threshold=t, a=a, b=b, units=len(d),
                lists=n_lists, mean_a=r.mean_a, mean_b=r.mean_b, diff=r.difference, diff_lo=lo, diff_hi=hi,
                p_t=r.p_t, p_wilcoxon=r.p_wilcoxon, p_sign=r.p_sign)


PAIRS = (("AP", "nDCG"), ("AP", "GAP"), ("nDCG", "GAP"))


def paired(inst: pd.DataFrame, dataset: str) -> list[dict]:
    """PR RMS and P@10 error: per topic (lists scaled as in the table) and per run (Fig. 3)."""
    rows = []
    inst = inst.assign(p10_err=(inst["pred P@10"] - inst["actual P@10"]).abs(),
                       p10_sq=(inst["pred P@10"] - inst["actual P@10"]) ** 2)
    for t in sorted(inst["threshold"].unique()):
        it = inst[inst["threshold"] == t]
        for a, b in PAIRS:
            ma, mb = _metric_name(it, a), _metric_name(it, b)
            if ma is None or mb is None:
                continue
            for quantity, col in (("PR RMS", "rms"), ("P@10 abs error", "p10_err")):
                w = _wide(it, col, [ma, mb])
                if len(w) < 2:
                    continue
                xa = w.rename(columns={ma: "v"})[["topic", "v"]]
                xb = w.rename(columns={mb: "v"})[["topic", "v"]]
                rows.append(_test(dataset, quantity, "topic", t, a, b, _topic_scaled(xa, "v"),
                                  _topic_scaled(xb, "v"), len(w)))
            # Fig. 3: per-run means of actual and inferred P@10, on the lists both metrics solved
            w = _wide(it, "pred P@10", [ma, mb]).merge(
                it[["run", "topic", "actual P@10"]].drop_duplicates(["run", "topic"]), on=["run", "topic"])
            runs = w.groupby("run")[[ma, mb, "actual P@10"]].mean()
            rows.append(_test(dataset, "P@10 run-mean abs error", "run", t, a, b,
                              (runs[ma] - runs["actual P@10"]).abs(), (runs[mb] - runs["actual P@10"]).abs(),
                              len(w)))
    return rows


def _metric_name(inst, short: str) -> str | None:
    """The instance-table name of AP / nDCG / GAP (AP may carry its threshold, e.g. AP(rel=2))."""
    names = [m for m in inst["metric"].unique() if m == short or m.startswith(short + "(rel=")]
    return names[0] if names else None


def holm(rows: list[dict]) -> pd.DataFrame:
    """Holm over the collections of each (quantity, unit, threshold, a, b); verdict from the t-test."""
    df = pd.DataFrame(rows)
    for p in ("p_t", "p_wilcoxon", "p_sign"):
        df[p + "_holm"] = np.nan
    for _, g in df.groupby(["quantity", "unit", "threshold", "a", "b"], sort=False):
        for p in ("p_t", "p_wilcoxon", "p_sign"):
            df.loc[g.index, p + "_holm"] = adjust(g[p].to_numpy(), "holm")
    sig = df["p_t_holm"] < ALPHA
    df["verdict"] = np.where(~sig, "undecided", np.where(df["diff"] < 0, df["a"] + " lower", df["b"] + " lower"))
    return df


def protocol(dataset: str) -> tuple[pd.DataFrame, list[dict]]:
    """P@10 prediction of AP and nDCG (linear, exponential gain) with the count constraint of
    the default analysis (relevant retrieved) and of Yilmaz & Robertson (2010) (relevant in the
    collection), on the (run, topic) lists that every variant solved."""
    variants = {"retrieved": pd.concat([_instances("maxent", dataset), _instances("maxent/exp_gain", dataset)]),
                "total": _instances("maxent/protocol", dataset)}
    t = 2 if dataset == "trec_dl19_passage" else 1
    frames = []
    for count, inst in variants.items():
        e = inst[inst["eligible"] & (inst["threshold"] == t)].copy()
        e["variant"] = e["metric"].str.replace(r"\(rel=\d+\)", "", regex=True) + " / " + count
        frames.append(e)
    e = pd.concat(frames, ignore_index=True)
    w = e.pivot_table(index=["run", "topic"], columns="variant", values="pred P@10", aggfunc="first").dropna()
    actual = e.drop_duplicates(["run", "topic"]).set_index(["run", "topic"])["actual P@10"].reindex(w.index)
    runs = w.assign(actual=actual).groupby(level="run").mean()
    rows = []
    for v in sorted(w.columns):
        metric, count = v.split(" / ")
        rows.append(dict(dataset=dataset, threshold=t, metric=metric, count=count, lists=len(w),
                         rms_topics=float(np.sqrt(((w[v] - actual) ** 2).mean())),
                         rms_runs=float(np.sqrt(((runs[v] - runs["actual"]) ** 2).mean())),
                         tau_runs=_tau(runs[v], runs["actual"])))
    out = pd.DataFrame(rows)
    # paired per-run test of AP against each nDCG variant under the same count constraint
    tests = []
    for count in ("retrieved", "total"):
        for ndcg in ("nDCG", "nDCG(gain=exp)"):
            a, b = f"AP / {count}", f"{ndcg} / {count}"
            r = _test(dataset, "P@10 run-mean abs error", "run", t, f"AP ({count})", f"{ndcg} ({count})",
                      (runs[a] - runs["actual"]).abs(), (runs[b] - runs["actual"]).abs(), len(w))
            tests.append(r)
    return out, tests


def alignment(dataset: str) -> dict:
    """Recall- against rank-aligned PR errors on the same lists: the PR RMS changes, the inferred
    P@10 cannot (it is read from the distribution, not from the curve); both are recorded."""
    t = 2 if dataset == "trec_dl19_passage" else 1
    a = _instances("maxent", dataset)
    b = _instances("maxent/rank_aligned", dataset)
    key = ["run", "topic", "metric", "threshold"]
    m = a[a["threshold"] == t].merge(b, on=key, suffixes=("", "_rank"))
    m = m[m["eligible"] & m["eligible_rank"]]
    rows = []
    for metric, g in m.groupby("metric", sort=False):
        rows.append(dict(dataset=dataset, metric=metric, threshold=t, lists=len(g), rms_recall=g["rms"].mean(),
                         rms_rank=g["rms_rank"].mean(),
                         max_abs_diff_pred_p10=float((g["pred P@10"] - g["pred P@10_rank"]).abs().max())))
    return rows


def _tau(a, b) -> float:
    from maxent.inference import kendall_tau

    return float(kendall_tau(np.asarray(a), np.asarray(b)))


def discriminative(dataset: str) -> pd.DataFrame:
    """Share of significant run pairs per metric with Wilson intervals; McNemar against nDCG."""
    folder = RESULTS / "gap_thresholds" / dataset
    power = pd.read_csv(folder / "discriminative.csv")
    rows = []
    for r in power.to_dict("records"):
        rows.append(dict(dataset=dataset, metric=r["metric"], pairs=int(r["pairs"]), **_wilson(r)))
    out = pd.DataFrame(rows)
    asl_path = SOURCE / "gap_thresholds" / dataset / "asl.csv"
    if asl_path.exists():
        asl = pd.read_csv(asl_path)
        sig = asl.assign(sig=asl["asl"] < ALPHA).pivot_table(index=["run_a", "run_b"], columns="metric",
                                                               values="sig", aggfunc="first")
        ref = "nDCG"
        for m in out["metric"]:
            if m == ref or m not in sig or ref not in sig:
                continue
            only_m = int((sig[m] & ~sig[ref]).sum())
            only_ref = int((sig[ref] & ~sig[m]).sum())
            p = mcnemar_exact(only_m, only_ref)
            out.loc[out["metric"] == m, ["only_this", "only_nDCG", "p_mcnemar"]] = [only_m, only_ref, p]
    return out


def _family(metric: str) -> str:
    """The comparison a McNemar test belongs to, the same in every collection: AP, GAP with
    uniform g, or GAP at another g (best or a vertex, which differ between collections)."""
    if not metric.startswith("GAP"):
        return metric
    g = [float(x) for x in metric[metric.index("=") + 1:-1].split(",")]
    return "GAP uniform" if max(g) - min(g) < 1e-9 else "GAP other g"


def holm_mcnemar(df: pd.DataFrame) -> pd.DataFrame:
    """Holm over the collections of each family of McNemar tests against nDCG; the verdict names
    the more discriminative metric when the corrected p is below ALPHA."""
    df = df.copy()
    df["p_mcnemar_holm"] = np.nan
    tested = df["p_mcnemar"].notna() if "p_mcnemar" in df else pd.Series(False, index=df.index)
    fam = df["metric"].map(_family)
    for _, g in df[tested].groupby(fam[tested]):
        df.loc[g.index, "p_mcnemar_holm"] = adjust(g["p_mcnemar"].to_numpy(), "holm")
    more = np.where(df["only_this"] > df["only_nDCG"], df["metric"], "nDCG") if tested.any() else ""
    df["verdict"] = np.where(~tested, "", np.where(df["p_mcnemar_holm"] < ALPHA, pd.Series(more, index=df.index)
                                                   + " more", "undecided"))
    return df


def _wilson(r: dict) -> dict:
    """The significant pairs of a discriminative.csv row (stored as a fraction) and their 95% Wilson interval."""
    n = int(r["pairs"])
    k = int(round(r["significant"] * n))
    lo, hi = wilson_interval(k, n, 0.95)
    return dict(significant=k, fraction=k / n, lo=lo, hi=hi)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.significance", description=_cli.describe(__doc__.splitlines()[0]),
                                formatter_class=_cli.HelpFormatter)
    p.add_argument("--out", type=Path, default=RESULTS / "significance" / "all", help="evidence folder written")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _body(args) -> int:
    started = time.time()
    t1, rows, prot, ptests, disc, align = [], [], [], [], [], []
    for d in COLLECTIONS:
        print(f"significance: {d}", file=sys.stderr, flush=True)
        inst = _instances("maxent", d)
        t1.append(table1(inst, d))
        rows += paired(inst, d)
        pr, pt = protocol(d)
        prot.append(pr)
        ptests += pt
        align += alignment(d)
        if (RESULTS / "gap_thresholds" / d / "discriminative.csv").exists():
            disc.append(discriminative(d))
    out = args.out
    _cli.atomic_write_csv(out / "table1.csv", pd.concat(t1, ignore_index=True))
    _cli.atomic_write_csv(out / "paired.csv", holm(rows))
    _cli.atomic_write_csv(out / "protocol.csv", pd.concat(prot, ignore_index=True))
    _cli.atomic_write_csv(out / "protocol_tests.csv", holm(ptests))
    _cli.atomic_write_csv(out / "alignment.csv", pd.DataFrame(align))
    if disc:
        _cli.atomic_write_csv(out / "discriminative.csv", holm_mcnemar(pd.concat(disc, ignore_index=True)))
    write_provenance(out, command_line(module="analysis.significance"), started)
    print(f"results in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
