"""Speed of Theorem 3's exact moments (Sawade et al. 2013) against Monte Carlo, the obvious peer.

For B queries with two rankings of k documents from a union of U candidates with G grade levels,
E[delta^2] (delta = L(r_1) - L(r_2)) for ERR@k and DCG@k, exactly (``delta_moments``) and by
vectorised Monte Carlo with S label vectors per query: the time ratio and Monte Carlo's relative
error, which shrinks only as S^-1/2. Ratios, never asserted.

    python benchmarks/bench_active.py [--queries 2000 --k 10 --levels 5 --samples 1000]
"""
from __future__ import annotations

import time

import numpy as np

from _common import parser

from maxent.active import delta_moments, level_values
from maxent.metrics import parse_measure


def _mc(metric, P, d1, d2, S, rng):
    """Monte Carlo E[delta^2]: S label vectors per query, lists scored in closed form."""
    B, U, G = P.shape
    v = level_values(metric, G)
    cdf = np.cumsum(P, axis=2)
    Y = (rng.random((S, B, U, 1)) > cdf[None, :, :, :-1]).sum(axis=3)       # (S, B, U)
    vals = v[Y]

    def L(d):
        r = np.where(d >= 0, np.take_along_axis(vals, np.maximum(d, 0)[None].repeat(S, 0), axis=2), 0.0)
        n = np.arange(1, d.shape[1] + 1)
        if metric.NAME == "ERR":
            stop = np.cumprod(np.concatenate([np.ones((S, B, 1)), 1 - r[:, :, :-1]], axis=2), axis=2)
            return (r * stop / n).sum(axis=2)
        return (r / np.log2(n + 1)).sum(axis=2)

    delta = L(d1) - L(d2)
    return (delta ** 2).mean(axis=0)


def main(argv=None) -> int:
    p = parser(__doc__, evidence=False)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--levels", type=int, default=5)
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    B, k, G = a.queries, a.k, a.levels
    U = 2 * k
    P = rng.dirichlet(np.ones(G), size=(B, U))
    d1 = np.stack([rng.permutation(U)[:k] for _ in range(B)])
    d2 = np.stack([rng.permutation(U)[:k] for _ in range(B)])
    print(f"{B} queries, k={k}, {G} grades, union {U}; Monte Carlo with {a.samples} samples per query")
    for name in (f"ERR@{k}", f"DCG(gain=exp)@{k}"):
        m = parse_measure(name)
        t = time.perf_counter()
        exact = delta_moments(m, P, d1, d2)[3]
        t_exact = time.perf_counter() - t
        t = time.perf_counter()
        mc = _mc(m, P, d1, d2, a.samples, rng)
        t_mc = time.perf_counter() - t
        err = np.median(np.abs(mc - exact) / exact)
        print(f"{name:>18}: exact {t_exact:.3f} s, Monte Carlo {t_mc:.3f} s "
              f"(x{t_mc / t_exact:.1f} slower), Monte Carlo median relative error {err:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
