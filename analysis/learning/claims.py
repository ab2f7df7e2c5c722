"""The papers' learning claims, their verdicts, and the power analysis behind them.

One rule decides every claim of a run (:func:`verdict`): the family is the claims the run can
test; each claim's test is the two-sided paired t-test over the test queries (claimed better -
compared), Holm-adjusted over the family. **reproduces** / **reversed**: adjusted p below alpha
with a positive / negative difference; otherwise **undecided (MDE x)**, x the family's minimum
detectable effect in points (:func:`maxent.stats.family_mde`). The unadjusted bootstrap
interval, the Wilcoxon and sign tests are reported beside it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from maxent.stats import bootstrap_ci, family_mde, paired_tests, queries_needed

# (source, claimed better training metric, compared training metric, test metric):
# Yilmaz & Robertson (2010) Tables 2-4 and Robertson, Kanoulas & Yilmaz (2010) Tables 1-2
CLAIMS = (
    ("Yilmaz & Robertson 2010", "AP", "P@10", "P@10"),
    ("Yilmaz & Robertson 2010", "nDCG", "nDCG@10", "nDCG@10"),
    ("Yilmaz & Robertson 2010", "AP", "nDCG", "AP"),
    ("Yilmaz & Robertson 2010", "AP", "nDCG", "P@10"),
    ("Robertson et al. 2010", "GAP", "nDCG", "nDCG@10"), ("Robertson et al. 2010", "GAP", "AP", "nDCG@10"),
    ("Robertson et al. 2010", "GAP", "nDCG", "AP"), ("Robertson et al. 2010", "GAP", "AP", "AP"),
    ("Robertson et al. 2010", "GAP", "nDCG", "P@10"), ("Robertson et al. 2010", "GAP", "AP", "P@10"),
)

VERDICT_RULE = ("paired t-test, Holm-adjusted over the run's claims at alpha {alpha:g}: reproduces (adjusted p < "
                "alpha, difference > 0), reversed (adjusted p < alpha, difference < 0), otherwise undecided with "
                "the minimum detectable effect at power {power:g}")


def testable(vals: dict) -> list[tuple]:
    """The claims whose two training metrics and test metric are all in ``vals``."""
    return [c for c in CLAIMS if (c[1], c[3]) in vals and (c[2], c[3]) in vals]


def verdict(diff: float, p_holm: float, mde: float, alpha: float) -> str:
    """The one verdict rule (module docstring); ``diff`` and ``mde`` in points."""
    if p_holm < alpha:
        return "reproduces" if diff > 0 else "reversed"
    return f"undecided (MDE {mde:.2f})"


def claim_rows(vals: dict, args) -> pd.DataFrame:
    """claims.csv: per testable claim the mean paired difference (points), its 95% bootstrap CI,
    the three tests' p-values, ``n_test_queries``, the family ``mde``, Holm's adjusted p and the
    verdict."""
    from maxent.stats import adjust

    claims = testable(vals)
    m = len(claims)
    rows = []
    for paper, better, worse, test in claims:
        a, b = vals[(better, test)], vals[(worse, test)]
        d = a - b
        pt = paired_tests(a, b, alpha=args.alpha)
        lo, hi = bootstrap_ci(d, level=1 - args.alpha, n_resamples=args.n_boot, seed=args.split_seed)
        sd = float(np.std(d, ddof=1))
        rows.append({"paper": paper, "claim": f"train {better} > train {worse} on test {test}",
                     "better": better, "compared": worse, "test": test,
                     "diff": 100 * pt.difference, "ci_low": 100 * lo, "ci_high": 100 * hi,
                     "ci_excludes_zero": bool(lo > 0 or hi < 0), "sd_diff": 100 * sd,
                     "n_test_queries": len(d), "n_claims": m,
                     "mde": 100 * family_mde(sd, len(d), n_claims=m, alpha=args.alpha, power=args.power),
                     "p_t": pt.p_t, "p_wilcoxon": pt.p_wilcoxon, "p_sign": pt.p_sign,
                     "all_three": pt.significant})
    df = pd.DataFrame(rows)
    if len(df):
        df["p_holm"] = adjust(df["p_t"].to_numpy(), "holm")
        df["verdict"] = [verdict(r.diff, r.p_holm, r.mde, args.alpha) for r in df.itertuples()]
    return df


def power_rows(claims: pd.DataFrame, args) -> pd.DataFrame:
    """power.csv: per claim the pilot's standard deviation of the per-query differences, its MDE,
    and the test queries needed for an MDE of ``--target-mde`` points with Holm over the claims."""
    rows = []
    for r in claims.itertuples():
        need = queries_needed(r.sd_diff, args.target_mde, n_claims=int(r.n_claims), alpha=args.alpha,
                              power=args.power)
        rows.append({"claim": r.claim, "sd_diff": r.sd_diff, "n_test_queries": r.n_test_queries,
                     "n_claims": r.n_claims, "mde": r.mde, "target_mde": args.target_mde,
                     "queries_needed": need})
    return pd.DataFrame(rows)
