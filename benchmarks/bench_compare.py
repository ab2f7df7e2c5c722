"""Speed and agreement of the randomisation and t tests against ranx (the peer).

On seeded per-topic values of R runs over T topics, every pair of runs: Fisher's randomisation
test with P random sign vectors and the paired t-test, ours (``maxent.stats.randomisation_test``
on all pairs at once, ``paired_t`` per pair) against ranx's (numba, after a warm-up call). The
p-values are checked first: t-tests equal, randomisation within 5 binomial standard deviations.
A ratio measured in the same run, never asserted.

    python benchmarks/bench_compare.py [--runs 20 --topics 50 --permutations 10000]   # needs ranx
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from _common import parser

from maxent.stats import paired_t, randomisation_test


def main(argv=None) -> int:
    ap = parser(__doc__, evidence=False)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        from ranx.statistical_tests.fisher_randomization_test import fisher_randomization_test
        from ranx.statistical_tests.paired_student_t_test import paired_student_t_test
    except ImportError:
        raise SystemExit('error: the peer ranx is not installed: pip install -e ".[bench]"')

    rng = np.random.default_rng(args.seed)
    base = rng.random(args.topics)
    noise = rng.normal(0, 0.03, (args.runs, 1)) + rng.normal(0, 0.1, (args.runs, args.topics))
    values = np.clip(base + noise, 0, 1)
    pairs = list(itertools.combinations(range(args.runs), 2))
    P = args.permutations
    fisher_randomization_test(values[0], values[1], n_permutations=10, max_p=0.05, random_seed=0)  # JIT

    t0 = time.perf_counter()
    d = np.stack([values[a] - values[b] for a, b in pairs])
    ours_r = randomisation_test(d, n_permutations=P, seed=args.seed)
    ours_t = np.array([paired_t(values[a], values[b]) for a, b in pairs])
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    peer_r = np.array([fisher_randomization_test(values[a], values[b], n_permutations=P, max_p=0.05,
                                                 random_seed=args.seed)[0] for a, b in pairs])
    peer_t = np.array([paired_student_t_test(values[a], values[b], max_p=0.05)[0] for a, b in pairs])
    t_peer = time.perf_counter() - t0

    assert np.allclose(ours_t, peer_t, rtol=1e-12, atol=0), "t-test p-values differ"
    # Monte-Carlo p-values: compare against each other within 5 sd of the larger estimate
    sd = np.sqrt(np.maximum(ours_r, peer_r) * (1 - np.minimum(ours_r, peer_r)) / P) * np.sqrt(2)
    worst = float(np.max(np.abs(ours_r - peer_r) / np.maximum(sd, 1e-12)))
    assert worst < 5, f"randomisation p-values disagree by {worst:.1f} sd"
    print(f"{len(pairs)} pairs x {args.topics} topics, {P} permutations")
    print(f"agreement: t-test p equal (max |diff| {np.max(np.abs(ours_t - peer_t)):.1e}); randomisation p "
          f"within {worst:.2f} Monte-Carlo sd (max |diff| {np.max(np.abs(ours_r - peer_r)):.4f})")
    print(f"ours {t_ours:.3f} s, ranx {t_peer:.3f} s: ours is {t_peer / t_ours:.1f}x the peer's speed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
