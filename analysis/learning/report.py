"""Markdown tables of the committed learning-to-rank evidence (``results/learning/<dataset>/``),
registered in :data:`BLOCKS` for ``python -m analysis.report``; ``python -m
analysis.learning.report`` prints them."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis._cli import md_table
from analysis._provenance import RESULTS

ORDER = ("synthetic", "yahoo", "mq2008", "mslr", "dl2019", "covid", "robust03")


def _folders(root: Path, name: str) -> list[Path]:
    """Folders holding ``name``, known data sets first; pilots (sizing runs) are left out."""
    found = [p.parent for p in sorted(root.glob(f"*/{name}")) if "pilot" not in p.parent.name]

    def rank(folder: Path):
        base = folder.name.split("-")[0]
        return (ORDER.index(base) if base in ORDER else len(ORDER), folder.name)

    return sorted(found, key=rank)


def claims_table(root: Path = RESULTS / "learning") -> str:
    """One row per (data set, claim): difference [95% CI], test queries, MDE, Holm p, verdict."""
    rows = [[folder.name, r.claim, f"{r.diff:+.2f} [{r.ci_low:+.2f}, {r.ci_high:+.2f}]", r.n_test_queries,
             f"{r.mde:.2f}", f"{r.p_holm:.3f}", r.verdict]
            for folder in _folders(root, "claims.csv")
            for r in pd.read_csv(folder / "claims.csv").itertuples()]
    return md_table(["data set", "claim", "difference [95% CI]", "test queries", "MDE", "Holm p", "verdict"],
                    rows)


def _run_length(s: pd.DataFrame, weights: str) -> str:
    """Epochs the model's run trained and, for the training optimum, whether it converged
    (``-`` in evidence written before optimality.csv recorded them)."""
    if "epochs_run" not in s or pd.isna(s.epochs_run.iloc[0]):
        return "-"
    ran = int(s.epochs_run.iloc[0])
    if weights != "optimum":
        return str(ran)
    return f"{ran}, {'converged' if bool(s.converged.iloc[0]) else 'not converged'}"


def optimality_table(root: Path = RESULTS / "learning") -> str:
    """Table 5 of Yilmaz & Robertson (2010): alterations improving the test metric by > 0 and > eps,
    with the epoch of the weights and the epochs their run trained (optimum: whether it converged)."""
    rows = []
    for folder in _folders(root, "optimality.csv"):
        df = pd.read_csv(folder / "optimality.csv")
        for (tr, te, w), d in df.groupby(["train_metric", "test_metric", "weights"], sort=False):
            s = d.set_index("split")
            rows.append([folder.name, tr, te, f"{w} ({int(s.epoch.iloc[0])})", _run_length(s, w),
                         *(s[c][sp] for sp in ("train", "test") for c in ("improved", "improved_eps")),
                         s.alterations.iloc[0]])
    return md_table(["data set", "train", "test", "weights (epoch)", "epochs run", "train > 0", "train > eps",
                     "test > 0", "test > eps", "of"], rows)


def donmez_table(root: Path = RESULTS / "learning") -> str:
    """Donmez et al. (2009): per data set and weights, how many models (training metric x seed x
    fold) pass the local-optimality test over random directions, counting ties as the paper does
    (no direction with A(w) <= A(w + eta r) at any step) and strictly (no direction raising it)."""
    rows = []
    for folder in _folders(root, "optimality001_counts.csv"):
        df = pd.read_csv(folder / "optimality001_counts.csv")
        df = df[df.directions == "random"]
        for w, d in df.groupby("weights", sort=False):
            per = d.groupby(["train_metric", "seed", "fold"])
            first = d[d.step == d.step.min()]
            rows.append([folder.name.replace("-optimality001", ""), w, per.ngroups, _epochs_run(per, w),
                         f"{int(d.n_directions.iloc[0])} x {d.step.nunique()}",
                         int((per.not_worse.sum() == 0).sum()), int((per.improved.sum() == 0).sum()),
                         f"{100 * first.not_worse.sum() / first.n_directions.sum():.0f}%"])
    return md_table(["data set", "weights", "models", "epochs run", "directions x steps", "no tie or rise "
                     "(paper's count)", "no rise (strict)", "share not worse at eta 0.1"], rows)


def _epochs_run(per, weights: str) -> str:
    """The range of epochs the models' runs trained and, for training optima, how many converged
    (``-`` in evidence written before the counts recorded them)."""
    first = per.first()
    if "epochs_run" not in first or first.epochs_run.isna().any():
        return "-"
    text = f"{int(first.epochs_run.min())}-{int(first.epochs_run.max())}"
    if weights == "optimum":
        text += f", {int(first.converged.astype(bool).sum())} of {len(first)} converged"
    return text


def approx_table(root: Path = RESULTS / "learning") -> str:
    """Qin, Liu & Li (2010): ApproxAP and ApproxNDCG against LambdaRank and LambdaMART, with the
    alpha and beta validation chose, under the one verdict rule."""
    rows = [[folder.name.replace("-approx", ""), r.claim, f"{r.approx:.2f}", f"{r.other:.2f}",
             f"{r.diff:+.2f} [{r.ci_low:+.2f}, {r.ci_high:+.2f}]", f"{r.alpha:g}, {r.beta:g}", f"{r.mde:.2f}",
             f"{r.p_holm:.3f}", r.verdict]
            for folder in _folders(root, "approx_compare.csv")
            for r in pd.read_csv(folder / "approx_compare.csv").itertuples()]
    return md_table(["data set", "comparison", "Approx", "other", "difference [95% CI]", "alpha, beta", "MDE",
                     "Holm p", "verdict"], rows)


def restarts_table(root: Path = RESULTS / "learning") -> str:
    """The alpha-versus-restarts table: test value of the run validation picks among K restarts."""
    tables = []
    for folder in _folders(root, "approx_restarts.csv"):
        df = pd.read_csv(folder / "approx_restarts.csv")
        ks = sorted(df.restarts.unique())
        rows = [[folder.name.replace("-approx", ""), tr, te, f"{a:g}"]
                + [f"{v:.2f}" for v in d.set_index("restarts").value[ks]]
                for (tr, te, a), d in df.groupby(["train", "test", "alpha"], sort=False)]
        tables.append(md_table(["data set", "train", "test", "alpha"] + [f"K = {k}" for k in ks], rows))
    return "\n\n".join(tables)


def evidence_table(root: Path = RESULTS / "learning") -> str:
    """Every evidence folder with the command that made it and its wall time (PROVENANCE.json)."""
    import json

    rows = []
    for folder in sorted(p.parent for p in root.glob("*/PROVENANCE.json")):
        prov = json.loads((folder / "PROVENANCE.json").read_text())
        rows.append([f"`results/learning/{folder.name}`", f"`{prov['command']}`",
                     f"{prov['wall_time_s'] / 60:.0f} min"])
    return md_table(["folder", "command", "wall time"], rows)


BLOCKS = {"evidence": evidence_table, "claims": claims_table, "optimality": optimality_table, "donmez": donmez_table, "approx": approx_table,
          "restarts": restarts_table}


def main(argv: list[str] | None = None) -> int:
    for name, fn in BLOCKS.items():
        print(f"<!-- report:learning_{name} -->\n{fn()}\n<!-- /report:learning_{name} -->\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
