"""Compare two ``check_convergence.py --save`` files problem by problem (e.g. an earlier commit's
solver and this one's), or two ``instances.csv`` of ``python -m analysis.maxent``.

Per (collection, count, metric), or per (metric, threshold): problems, status changes,
not_converged on each side, the largest relative entropy change of the problems optimal on both
sides, and how many move, or move to a lower entropy, by more than the allowance max(1e-10 max(1,
|H|), 1e-10 |b|) (the certificate's residual tolerance is worth 1e-10 |b| nats; instances: 1e-9
max(1, |H|), their 10 printed digits, and the largest change of the predicted P@10 and residual).

    python benchmarks/compare_solutions.py OLD.csv NEW.csv [--out results/.../solutions.csv]
        [--changed results/.../changed.csv]    # with --out: the problems whose status changed
        [--note "NEW.csv made under ..."]      # with --out: kept in PROVENANCE.json
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))     # the tests import this file too
from _common import write_provenance  # noqa: E402


def _summary(old: pd.DataFrame, new: pd.DataFrame, key: list, group: list, what: str, allow,
             derive=None, **extra) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary per ``group`` of the rows of ``old`` and ``new`` matched on ``key`` (see the
    module docstring; ``allow(m)``: the allowance of the merged rows; ``derive(m)``: more columns,
    which ``extra`` aggregates, name=(column, function)), and the matched rows (``_old``/``_new``
    columns, ``changed``: the status changed)."""
    m = old.merge(new, on=key, suffixes=("_old", "_new"), validate="one_to_one")
    if len(m) != len(old) or len(m) != len(new):
        raise SystemExit(f"error: the files hold different {what} "
                         f"({len(old)} vs {len(new)}, {len(m)} shared)")
    both = (m.status_old == "optimal") & (m.status_new == "optimal")
    dH = (m.entropy_new - m.entropy_old).where(both, 0.0)
    allowance = allow(m)
    m = m.assign(changed=m.status_old != m.status_new, rel=dH.abs() / np.maximum(1.0, m.entropy_old.abs()),
                 over=both & (dH.abs() > allowance), lower=both & (dH < -allowance),
                 nc_old=m.status_old == "not_converged", nc_new=m.status_new == "not_converged",
                 nit_diff=m.nit_old != m.nit_new, **(derive(m) if derive else {}))
    summary = m.groupby(group, sort=False).agg(
        problems=(key[-1], "size"), status_changed=("changed", "sum"), not_converged_old=("nc_old", "sum"),
        not_converged_new=("nc_new", "sum"), max_rel_dH=("rel", "max"), over_allowance=("over", "sum"),
        lower_entropy=("lower", "sum"), nit_changed=("nit_diff", "sum"), **extra).reset_index()
    return summary, m


PROBLEM_KEY = ["collection", "count", "metric", "i"]        # i: the list among the collection's
INSTANCE_KEY = ["run", "topic", "metric", "threshold"]      # of the analyses' instances.csv


def compare(old: pd.DataFrame, new: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _summary(old, new, PROBLEM_KEY, ["collection", "count", "metric"], "problems",
                    lambda m: np.maximum(1e-10 * np.maximum(1.0, m.entropy_old.abs()),
                                         1e-10 * m.b_old.abs().fillna(0.0)))


def compare_instances(old: pd.DataFrame, new: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _summary(old, new, INSTANCE_KEY, ["metric", "threshold"], "instances",
                    lambda m: 1e-9 * np.maximum(1.0, m.entropy_old.abs()),       # 10 printed digits
                    derive=lambda m: {"dpred": (m["pred P@10_new"] - m["pred P@10_old"]).abs(),
                                      "dres": (m["residual_new"] - m["residual_old"]).abs()},
                    max_abs_dpred_P10=("dpred", "max"), max_abs_dresidual=("dres", "max"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--out", default=None, help="write the summary CSV here")
    ap.add_argument("--changed", default=None,
                    help="with --out: write the rows whose status changed here, both sides' columns")
    ap.add_argument("--note", default=None,
                    help="with --out: how the files compared were made, when not on this machine "
                         "(kept in PROVENANCE.json)")
    args = ap.parse_args(argv)
    old, new = pd.read_csv(args.old), pd.read_csv(args.new)
    instances = "run" in old.columns
    out, matched = compare_instances(old, new) if instances else compare(old, new)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(out.to_string(index=False))
    tot = out[["problems", "status_changed", "not_converged_new", "over_allowance", "lower_entropy"]].sum()
    print("total:", ", ".join(f"{k} {v}" for k, v in tot.items()), f"max_rel_dH {out.max_rel_dH.max():.2e}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        out.to_csv(args.out, index=False, float_format="%.3g")
        if args.changed:
            key = INSTANCE_KEY if instances else PROBLEM_KEY
            cols = key + [f"{c}_{s}" for c in ("status", "entropy", "nit", "residual", "attained", "b")
                          for s in ("old", "new") if f"{c}_{s}" in matched.columns]
            matched.loc[matched.changed, cols].to_csv(args.changed, index=False, float_format="%.10g")
        write_provenance(Path(args.out).parent, argv, __file__, time.time(),
                         {"old": args.old, "new": args.new} | ({"note": args.note} if args.note else {}))
    return 0 if tot.status_changed == 0 and tot.not_converged_new == 0 and tot.lower_entropy == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
