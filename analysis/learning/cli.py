"""The command line of ``python -m analysis.learning``: options, the order of the parts, and the
evidence a run commits (``--evidence``)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from analysis._cli import HelpFormatter, add_common, atomic_write_text, describe, run_main, split_names
from analysis._outputs import own_output, staged_outputs
from analysis.learning import data as _data
from analysis.learning.approx import part_approx
from analysis.learning.data import DEFAULT_PARTS, PARTS, ROOT, TRAINING_PARTS, _metric, _sets, out_dir
from analysis.learning.optimality import part_optimality, part_optimality001
from analysis.learning.parts import part_anchor, part_approx_error, part_curves, part_pairs, part_sweep
from analysis.learning.table import part_table
from maxent.cli.progress import phase
from maxent.errors import ParameterError
from maxent.letor import default_data_root
from maxent.ltr.train import check_objective

DESCRIPTION = "Informativeness versus learning: LambdaRank trained for one metric, tested on another."
# per part, the small outputs --evidence copies (never the per-run records)
EVIDENCE_FILES = {"table": ("table.csv", "table.txt", "claims.csv", "power.csv", "models.csv"),
                  "curves": ("curves.csv",), "sweep": ("sweep.csv",), "optimality": ("optimality.csv",),
                  "optimality001": ("optimality001_counts.csv",), "pairs": ("pairs.csv",), "anchor": ("anchor.csv",),
                  "approx_error": ("approx_error.csv",),
                  "approx": ("approx_grid.csv", "approx_restarts.csv", "approx_compare.csv")}
# BLAS thread counts change the last bits of the net's scores on large sets, hence the selected
# epochs: PROVENANCE.json records them (thread_env).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

EPILOG = """examples:
  python -m analysis.learning                              # Yahoo sample, all parts
  python -m analysis.learning --dataset mq2008 --model linear --epochs 60
  python -m analysis.learning --dataset artificial --n-queries 2000 --parts table,sweep
  python -m analysis.learning --dataset synthetic --n-queries 20000 --split-fractions 0.4,0.2,0.4 --model linear
  python -m analysis.learning --dataset robust03 --model linear --parts table,curves   # TREC runs as features
  python -m analysis.learning --train a.txt --test b.txt --vali c.txt --dataset mine
  python -m analysis.learning --resume --workers 2 --figures-dir figures/learning
  python -m analysis.learning --objective softrank --sigma-s 0.5 --train-metrics AP,nDCG,GAP,P@10
  python -m analysis.learning --objective approxrank --approx-alpha 100 --train-metrics AP,nDCG
  python -m analysis.learning --model lambdamart --parts table,curves   # LightGBM trees, our lambdas
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.learning", description=describe(DESCRIPTION),
                                formatter_class=HelpFormatter, epilog=EPILOG)
    add_common(p, "learning")
    p.set_defaults(dataset="yahoo", workers=2)
    d = p.add_argument_group("data")
    d.add_argument("--data-root", type=Path, default=default_data_root(),
                   help="folder holding the shared LTR samples (yahoo, mq2008, mslr; or 'artificial', 'synthetic'); "
                        "the TREC sets (robust03, dl2019, covid) are read from its parent")
    d.add_argument("--train", type=Path, help="training file (LETOR/SVMlight, or LibSVM + .query)")
    d.add_argument("--vali", type=Path, help="validation file (default: hold out --vali-fraction of train)")
    d.add_argument("--test", type=Path, help="test file (default: the dataset's test file)")
    d.add_argument("--vali-fraction", type=float, default=0.25, help="queries of train held out for validation")
    d.add_argument("--folds", type=int, default=1,
                   help="artificial and TREC sets: k-fold cross-validation (k >= 3; test = fold k, validation = "
                        "fold k+1); the table pools the test queries of all folds. 1 = one 60/20/20 split")
    d.add_argument("--normalize", choices=("zscore", "query-minmax", "query-zscore", "none"), default="zscore",
                   help="feature scaling: global z-score fitted on train, or per query")
    d.add_argument("--split-fractions", type=lambda s: [float(x) for x in split_names(s)],
                   default=[0.6, 0.2, 0.2],
                   help="pooled sets without --folds: train, validation and test shares of the queries")
    d.add_argument("--n-queries", type=int, default=None,
                   help="artificial, synthetic: queries (train+vali+test); default 1000 artificial, 10000 synthetic")
    d.add_argument("--feature-noise", type=float, default=2.0,
                   help="synthetic: noise on the informative features (the difficulty, maxent.synthetic)")
    d.add_argument("--relevance", choices=("cubic", "linear"), default="cubic", help="synthetic: relevance function")
    d.add_argument("--min-docs", type=int, default=10, help="synthetic: fewest documents per query")
    d.add_argument("--max-docs", type=int, default=200, help="synthetic: most documents per query")
    d.add_argument("--docs-per-query", type=int, default=30, help="artificial: documents per query")
    d.add_argument("--n-features", type=int, default=50, help="artificial: features")
    m = p.add_argument_group("metrics")
    m.add_argument("--train-metrics", type=split_names, default=split_names("AP,P@10,nDCG,nDCG@10,RR,GAP"),
                   help="rows: metrics to train for")
    m.add_argument("--test-metrics", type=split_names, default=split_names("AP,P@10,nDCG@10,nDCG,GAP"),
                   help="columns: metrics to test on (each is also its own validation metric)")
    m.add_argument("--gain", choices=("exp", "linear"), default="exp",
                   help="nDCG gain when a name gives none (papers: exp 2^g-1; trec_eval: linear)")
    m.add_argument("--rel", type=int, default=1, help="binary relevance threshold for AP, P@k, RR")
    t = p.add_argument_group("training")
    t.add_argument("--model", choices=("net", "linear", "lambdamart"), default="net",
                   help="two-layer tanh net, linear, or LambdaMART (LightGBM trees on our lambdas; "
                        "--learning-rates then defaults to 0.05,0.1)")
    t.add_argument("--hidden", type=int, default=10, help="hidden units of the net")
    t.add_argument("--epochs", type=int, default=30, help="epoch cap per run")
    t.add_argument("--patience", type=int, default=5,
                   help="early stopping: end a run when no validation metric has improved for this many "
                        "epochs (0: train to the cap)")
    t.add_argument("--learning-rates", type=lambda s: [float(x) for x in split_names(s)],
                   default=[1e-3, 1e-2],
                   help="learning-rate grid (the best per test metric is chosen on validation)")
    t.add_argument("--objective", choices=("lambdarank", "softrank", "approxrank"), default="lambdarank",
                   help="gradient: LambdaRank lambdas, SoftRank or ApproxRank (nDCG, P@k, RBP, AP, GAP)")
    t.add_argument("--sigma", type=float, default=1.0, help="RankNet sigma (lambdarank)")
    t.add_argument("--sigma-s", type=float, default=1.0, help="SoftRank score-noise standard deviation")
    t.add_argument("--approx-alpha", type=lambda s: [float(x) for x in split_names(s)], default=[100.0],
                   help="ApproxRank position scale alpha; a list is a grid chosen on validation (Qin et al. 2010: 50-300)")
    t.add_argument("--approx-beta", type=lambda s: [float(x) for x in split_names(s)], default=[10.0],
                   help="ApproxRank truncation scale beta; a list is a grid chosen on validation (Qin et al. 2010: 1-100)")
    t.add_argument("--batch-size", type=int, default=1, help="queries per update")
    t.add_argument("--restart-patience", type=int, default=16,
                   help="random restart after this many epochs without training improvement (0: off)")
    t.add_argument("--lr-decay", action="store_true", help="Donmez et al. 2009 decay: x0.8 w.p. 0.3 after a worse epoch")
    t.add_argument("--seeds", type=lambda s: [int(x) for x in split_names(s)], default=[0],
                   help="training seeds (per-query test values are averaged over seeds, unless --best-restart)")
    t.add_argument("--best-restart", action="store_true",
                   help="Qin et al. 2010: the seeds are K random restarts and validation picks the best one "
                        "(instead of averaging the seeds' test values)")
    t.add_argument("--split-seed", type=int, default=0, help="seed of the validation split and the sweeps")
    b = p.add_argument_group("lambdamart (--model lambdamart)")
    b.add_argument("--trees", type=int, default=100, help="boosting iterations (the best is chosen per "
                   "validation metric)")
    b.add_argument("--num-leaves", type=int, default=31, help="LightGBM num_leaves")
    b.add_argument("--min-data-in-leaf", type=int, default=20, help="LightGBM min_data_in_leaf")
    b.add_argument("--truncation", type=int, default=None,
                   help="only pairs with a document in the top k ranks (LightGBM lambdarank_truncation_level; "
                        "default all pairs)")
    e = p.add_argument_group("experiments")
    e.add_argument("--parts", type=split_names, default=list(DEFAULT_PARTS),
                   help=f"parts to run, from {','.join(PARTS)} (default all but approx)")
    e.add_argument("--fractions", type=lambda s: [float(x) for x in split_names(s)], default=[0.25, 0.5, 1.0],
                   help="sweep: fractions of the training queries")
    e.add_argument("--features", type=split_names, default=split_names("2,9,all"),
                   help="sweep: feature counts (the top ones by |correlation| with the grade on train)")
    e.add_argument("--sweep-epochs", type=int, default=None, help="sweep epoch budget (default --epochs)")
    e.add_argument("--mc-directions", type=int, default=459, help="optimality: random unit directions")
    e.add_argument("--optimum-epochs", type=int, default=300,
                   help="optimality, optimality001: epoch cap of the training-optimum runs (Yilmaz & Robertson "
                        "2010: 300)")
    e.add_argument("--converge-tol", type=float, default=1e-3,
                   help="optimality, optimality001: a training-optimum run has converged once the mean training "
                        "objective of its last --converge-window epochs differs from that of the window before by "
                        "less than this (0: no rule, train to --optimum-epochs)")
    e.add_argument("--converge-window", type=int, default=5, help="epochs per window of the convergence rule")
    e.add_argument("--mc-eps", type=float, default=0.003, help="optimality: improvement threshold epsilon")
    e.add_argument("--mc-weights", type=int, default=50,
                   help="optimality001: weights moved alone (+-e_j), a random sample; 0 = every weight")
    e.add_argument("--pairs-train", type=split_names, default=split_names("nDCG,nDCG@10,AP,RR"),
                   help="pairs: training metrics (Donmez et al. 2009 Fig. 5: NDCG, NDCG@10, MAP, MRR)")
    e.add_argument("--pairs-target", default="RR", help="pairs: the test metric (Donmez et al. 2009 Fig. 5: MRR)")
    e.add_argument("--approx-runs", nargs="+", default=[str(ROOT / "trec_runs" / "runs")],
                   help="approx_error: TREC run files or folders (real ranked lists)")
    e.add_argument("--approx-qrels", default=str(ROOT / "trec_runs" / "qrels-rnd1.txt"), help="approx_error: qrels")
    e.add_argument("--approx-alphas", type=lambda s: [float(x) for x in split_names(s)],
                   default=[1, 3, 10, 30, 100, 300, 1000, 3000], help="approx_error: alpha grid (scores min-max "
                   "normalised per list)")
    e.add_argument("--approx-depth", type=int, default=100, help="approx_error: top documents of each list")
    e.add_argument("--approx-restarts", type=int, default=3,
                   help="approx: random restarts per (metric, alpha, beta); the alpha x restarts table counts 1..K")
    e.add_argument("--n-boot", type=int, default=10000, help="table: bootstrap resamples of the 95%% CIs")
    e.add_argument("--power", type=float, default=0.8, help="table: power of the minimum detectable effect")
    e.add_argument("--alpha", type=float, default=0.05, help="significance level of the three paired tests")
    e.add_argument("--target-mde", type=float, default=0.5,
                   help="power.csv: the minimum detectable effect (points) the next run must reach on every claim")
    e.add_argument("--evidence", type=Path, default=None,
                   help="also copy the small CSVs to this folder with a PROVENANCE.json, e.g. results/learning/yahoo")
    e.add_argument("--figures-dir", type=Path, default=None,
                   help="also copy the curves and sweep figures (PNG + CSV) here, e.g. figures/learning")
    return p


def body(args) -> int:
    t0 = time.perf_counter()
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        raise ParameterError(f"unknown parts {sorted(unknown)}; choose from {','.join(PARTS)}")
    _data._DATA.clear()                                    # main() may run twice in one process
    _data._BEST_RESTART[0] = args.best_restart
    fr = args.split_fractions
    if len(fr) != 3 or min(fr) <= 0 or sum(fr) > 1 + 1e-9:
        raise ParameterError(f"--split-fractions needs three positive shares (train, validation, test) summing to at "
                             f"most 1, got {','.join(f'{x:g}' for x in fr)}")
    if args.dataset == "synthetic":
        if not args.feature_noise >= 0:
            raise ParameterError(f"--feature-noise must be >= 0, got {args.feature_noise}")
        if not 1 <= args.min_docs <= args.max_docs:
            raise ParameterError(f"--min-docs and --max-docs need 1 <= min <= max, got {args.min_docs}, {args.max_docs}")
    if args.approx_restarts < 1:
        raise ParameterError(f"--approx-restarts must be >= 1, got {args.approx_restarts}")
    if args.target_mde <= 0:
        raise ParameterError(f"--target-mde must be > 0, got {args.target_mde}")
    if args.optimum_epochs < 1 or args.converge_tol < 0 or args.converge_window < 1:
        raise ParameterError(f"--optimum-epochs and --converge-window must be >= 1 and --converge-tol >= 0, got "
                             f"{args.optimum_epochs}, {args.converge_window}, {args.converge_tol:g}")
    if args.model == "lambdamart":                         # optional extra, boosting rates
        from maxent.ltr.boosting import import_lightgbm
        import_lightgbm()                                  # error: how to install it
        if args.objective != "lambdarank":
            raise ParameterError("--model lambdamart trains on LambdaRank lambdas; drop --objective")
        if args.learning_rates == [1e-3, 1e-2]:
            args.learning_rates = [0.05, 0.1]
        for part in ("optimality", "optimality001", "pairs"):
            if part in args.parts:
                print(f"{part} skipped: it perturbs or reads model weights, trees have none", file=sys.stderr)
    for n in set(args.train_metrics) | set(args.test_metrics):
        _metric(n, args)                                   # fail early on bad names
    for n in args.train_metrics:
        check_objective(args.objective, _metric(n, args))  # ... and on metrics the objective cannot train
    out = out_dir(args)
    started = time.time()
    with own_output(out, ()):   # the outputs are replaced only once all are written (staged_outputs)
        code = _run_parts(args, out, t0)
    if args.evidence is not None:
        write_evidence(args, out, started)
    return code


def write_evidence(args, out: Path, started: float) -> None:
    """Copy the run's small CSVs to --evidence and write its PROVENANCE.json (the exact command)."""
    from analysis._provenance import command_line, write_provenance

    dest = args.evidence
    dest.mkdir(parents=True, exist_ok=True)
    argv = getattr(args, "argv", None)
    # provenance first: the copies below would count as uncommitted changes
    write_provenance(dest, command_line(None if argv is None else ["learning", *argv], module="analysis.learning"), started,
                     extra={"parts": args.parts, "dataset": args.dataset,
                            "thread_env": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ}})
    for name in (f for part in args.parts for f in EVIDENCE_FILES.get(part, ())):
        if (out / name).exists():
            tmp = dest / f".{name}.tmp"
            shutil.copyfile(out / name, tmp)
            tmp.replace(dest / name)
    print(f"evidence: {dest}")


OUTPUTS = ("*.csv", "*.png", "table.txt", "summary.json")  # replaced together; runs/ is kept for --resume


def _run_parts(args, out: Path, t0: float) -> int:
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    with staged_outputs(out, OUTPUTS) as stage:   # a failed run leaves the last finished outputs
        wall = _write_parts(args, stage, runs_dir, t0)
    if args.figures_dir is not None:
        args.figures_dir.mkdir(parents=True, exist_ok=True)
        for name in ("curves.png", "curves.csv", "sweep.png", "sweep.csv", "optimality001.png",
                     "optimality001.csv", "approx_error.png", "approx_error.csv", "pairs.png", "pairs.csv"):
            if (out / name).exists():
                (args.figures_dir / name).write_bytes((out / name).read_bytes())
    print(f"\nwrote {out} in {wall:.0f} s")
    return 0


def _write_parts(args, out: Path, runs_dir: Path, t0: float) -> float:
    """Run the parts asked for, writing their outputs into ``out``; the wall time."""
    with phase("reading the data"):
        tr, va, te = _sets(args)
    print(f"dataset {args.dataset}: train {tr.n_queries} queries / {tr.X.shape[0]} docs, "
          f"validation {va.n_queries}, test {te.n_queries}, {tr.X.shape[1]} features; model {args.model}")
    by_train = None
    need_table = any(p in args.parts for p in TRAINING_PARTS)   # the sweep reuses the table's learning rates
    if need_table:
        with phase("part table"):
            by_train, text = part_table(args, out, runs_dir)
        if "table" in args.parts:
            print("\nTest metric (0-100) by training metric (Yilmaz & Robertson 2010 Tables 2-4):\n" + text)
    steps = {"curves": lambda: part_curves(args, out, by_train),
             "sweep": lambda: part_sweep(args, out, runs_dir, by_train),
             "optimality": lambda: part_optimality(args, out, runs_dir, by_train),
             "optimality001": lambda: part_optimality001(args, out, runs_dir, by_train),
             "pairs": lambda: part_pairs(args, out, runs_dir, by_train),
             "approx_error": lambda: part_approx_error(args, out),
             "approx": lambda: part_approx(args, out, runs_dir),
             "anchor": lambda: part_anchor(args, out, by_train)}
    for name, run in steps.items():
        if name not in args.parts:
            continue
        if args.model == "lambdamart" and name in ("optimality", "optimality001", "pairs", "approx"):
            if name == "approx":       # the others: said in body()
                print("approx skipped: it trains ApproxRank and LambdaRank nets (and LambdaMART itself); "
                      "drop --model lambdamart", file=sys.stderr)
            continue
        with phase(f"part {name}"):
            df = run()
        if df is not None:
            print(_part_text(name, df, args))
    wall = time.perf_counter() - t0
    atomic_write_text(out / "summary.json", json.dumps({"wall_seconds": wall, "parts": args.parts,
                                                        "dataset": args.dataset}, indent=1))
    return wall


def _part_text(name: str, df, args) -> str:
    """What the command prints of a part's frame."""
    if name == "curves":
        last = df.groupby(["train", "test"], sort=False).last()
        cols = ["train_objective", "test_metric_on_train", "test_metric_on_valid"]
        return "\nLearning curves (curves.csv/png), last epoch:\n" + last[cols].round(4).to_string()
    if name == "sweep":
        piv = df.pivot_table(index=["test", "features", "fraction"], columns="train", values="value",
                             sort=False)
        return ("\nTraining-set size x features (sweep.csv/png; Yilmaz & Robertson 2010 Fig. 4):\n"
                + piv.round(2).to_string())
    if name == "optimality":
        piv = df.pivot_table(index=["train_metric", "test_metric", "weights"], columns="split",
                             values=["improved", "improved_eps"], sort=False)
        return ("\nMonte-Carlo local optimality (optimality.csv; Yilmaz & Robertson 2010 Table 5): "
                f"{args.mc_directions} directions x 10 steps\n" + piv.to_string())
    if name == "optimality001":
        piv = df[df.directions == "random"].pivot_table(index=["train_metric", "weights"], columns="step",
                                                        values="not_worse", aggfunc="sum", sort=False)
        return ("\nLocal optimality as Donmez et al. 2009 count it (optimality001_counts.csv, "
                "optimality001.png): random directions with A(w) <= A(w + eta r) for each model's own training "
                "metric on train, summed over seeds and folds, by step size\n" + piv.to_string())
    if name == "pairs":
        return ("\nEffective training pairs vs test (pairs.csv/png; Donmez et al. 2009 Fig. 5):\n"
                + df.round(3).to_string(index=False))
    if name == "approx_error":
        piv = df.pivot_table(index=["metric", "beta"], columns="alpha", values="mean_abs_error", sort=False)
        return ("\nApproxRank approximation error (approx_error.csv/png; Qin et al. 2010 Figs. 1-2): mean "
                f"|approx - true| over {int(df.n_lists.iloc[0])} run lists, by alpha\n"
                + piv.round(4).to_string())
    if name == "approx":
        cols = ["claim", "approx", "other", "diff", "p_holm", "verdict"]
        text = ("\nApproxAP / ApproxNDCG against LambdaRank and LambdaMART (approx_compare.csv; Qin et al. "
                "2010; alpha x restarts in approx_restarts.csv):")
        return text + "\n" + df[cols].round(3).to_string(index=False) if len(df) else text
    return "\nSanity anchor (anchor.csv):\n" + df.round(4).to_string(index=False)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)

    def run(args):
        args.argv = argv                     # the exact command, for PROVENANCE.json
        return body(args)

    return run_main(run, build_parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
