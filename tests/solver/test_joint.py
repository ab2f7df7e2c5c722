"""Maximum entropy from several metric values at once (maxent/solver/joint.py).

Oracles: cvxpy (every constraint in one exponential-cone problem) for sets linear in p,
scipy's SLSQP from the count-only start for non-linear sets on short lists, the compiled
single-metric solver at k = 1, a linear program's verdict computed here by hand (which
values a list can take together), and the metrics' own values.
"""
from __future__ import annotations

import glob
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import xlogy

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from maxent.solver import Status, solve
from maxent.solver.joint import SetForm, solve_set


def _lists(grades, rel_counts, lengths=None):
    return RankedLists.from_grades(np.asarray(grades), np.asarray(rel_counts), lengths=lengths)


def _random_lists(seed, B=6, N=30, levels=3):
    rng = np.random.default_rng(seed)
    g = rng.integers(-1, levels, size=(B, N))
    g[:, 0] = 1                                              # at least one relevant retrieved
    return _lists(g, np.tile([3 * N, 8, 4][:levels], (B, 1)))


def _values(names, lists):
    ms = [parse_measure(x) for x in names]
    return ms, np.stack([m.value(lists) for m in ms], axis=1)


def _solve(names, lists, targets=None, **kw):
    ms, T = _values(names, lists)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return solve(ms, T if targets is None else targets, lists, **kw)


def _check_certificate(res, lists, names, tol=1e-9):
    ms = [parse_measure(x) for x in names]
    ok = res.success
    for j, m in enumerate(ms):
        p = res.p if (m.GRADED or res.p.ndim == 2) else res.p
        E = m.expectation(p, lists)
        np.testing.assert_allclose(E[ok], res.target[ok, j], atol=tol)
    assert (res.residual[ok] <= tol).all()


def test_shapes_and_api():
    lists = _random_lists(0)
    res = _solve(["P@10", "nDCG@10"], lists)
    assert res.p.shape == (6, 30, 3) and res.target.shape == (6, 2) and res.attained.shape == (6, 2)
    assert res.multipliers.shape == (6, 2 + 2)
    assert res.method == "newton-dual"
    res = _solve(["AP", "P@10"], lists)
    assert res.p.shape == (6, 30) and res.method == "linearize"
    _check_certificate(res, lists, ["AP", "P@10"])
    # one metric in a list: today's solver, targets as a column
    one = _solve(["AP"], lists)
    alone = solve("AP", parse_measure("AP").value(lists), lists)
    np.testing.assert_array_equal(one.status, alone.status)
    np.testing.assert_array_equal(one.p, alone.p)
    assert one.target.shape == (6, 1)


@pytest.mark.parametrize("bad, match", [
    (dict(metric=["AP", "AP"]), "each metric once"),
    (dict(metric=["AP", "P@10"], target=np.zeros((6, 3))), r"shape \(6, 2\)"),
    (dict(metric=["AP", "P@10"], target=np.full((6, 2), np.nan)), "finite"),
    (dict(metric=["AP", "P@10"], method="newton-kkt"), "successive linearisation"),
    (dict(metric=["AP", "bpref"]), "expectation"),
    (dict(metric=[]), "at least one"),
])
def test_refuses_bad_input(bad, match):
    lists = _random_lists(1)
    kw = dict(metric=["AP", "P@10"], target=np.zeros((6, 2)))
    kw.update(bad)
    with pytest.raises(ParameterError, match=match):
        solve(kw.pop("metric"), kw.pop("target"), lists, **kw)


def _cvxpy_set(W, v, counts, n):
    """Entropy and p of one list under counts and several linear constraints (cvxpy)."""
    import cvxpy as cp

    k, L, _ = W.shape
    zs = np.flatnonzero(counts > 0)
    P = cp.Variable((n, len(zs)))
    cons = [cp.sum(P, axis=1) == 1, cp.sum(P, axis=0) == counts[zs]]
    for j in range(k):
        scale = np.abs(W[j]).max() or 1.0
        cons.append(cp.sum(cp.multiply(W[j][zs, :n].T / scale, P)) == v[j] / scale)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(P))), cons)
    prob.solve(solver="CLARABEL")
    return prob.value, np.asarray(P.value), zs


@pytest.mark.parametrize("names", [["P@10", "nDCG@10"], ["P@5", "RBP(p=0.8)", "nDCG"], ["R-prec", "P@20"]])
def test_linear_sets_match_cvxpy(names):
    lists = _random_lists(2, B=4, N=25)
    res = _solve(names, lists)
    form = SetForm([parse_measure(x) for x in names], lists, "retrieved")
    W = form.features(np.zeros((4, form.L, 25)), np.arange(4))
    for b in np.flatnonzero(res.status == Status.OPTIMAL.value):
        n = int(lists.lengths[b])
        H, P, zs = _cvxpy_set(W[b], res.target[b], form.counts[b], n)
        assert res.entropy[b] == pytest.approx(H, rel=1e-6, abs=1e-6)
        mine = res.p[b] if res.p.ndim == 3 else np.stack((1 - res.p[b], res.p[b]), axis=1)
        # the entropy is flat at its maximum: the interior point method gives p to ~sqrt of its
        # tolerance, ours meets every constraint to 1e-10
        np.testing.assert_allclose(mine[:n][:, zs], P, atol=1e-4)
    assert (res.status == Status.OPTIMAL.value).sum() >= 2


def _slsqp(names, lists, b, v):
    """Maximum entropy of binary list b under counts and the metrics' values: SLSQP."""
    ms = [parse_measure(x) for x in names]
    one = lists.take([b])
    n = int(one.lengths[0])
    K = float((one.grades[0, :n] >= 1).sum())

    def negent(q):
        return float(np.sum(xlogy(q, q) + xlogy(1 - q, 1 - q)))

    def full(q):
        x = np.zeros((1, one.depth))
        x[0, :n] = q
        return x

    cons = [{"type": "eq", "fun": lambda q: q.sum() - K}]
    for m, t in zip(ms, v):
        cons.append({"type": "eq", "fun": lambda q, m=m, t=t: m.expectation(full(q), one)[0] - t,
                     "jac": lambda q, m=m: m.gradient(full(q), one)[0, :n]})
    r = minimize(negent, np.full(n, K / n), method="SLSQP", bounds=[(1e-12, 1 - 1e-12)] * n,
                 constraints=cons, options={"maxiter": 500, "ftol": 1e-14})
    return -r.fun, r.success


@pytest.mark.parametrize("names", [["AP", "P@5"], ["RR", "P@5"], ["AP", "RR"]])
def test_nonlinear_sets_match_slsqp(names):
    rng = np.random.default_rng(3)
    g = (rng.random((5, 12)) < 0.35).astype(np.int64)
    g[:, 3] = 1
    g[:, 0] = 0
    lists = _lists(g, np.tile([30, 9], (5, 1)))
    ms, T = _values(names, lists)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(ms, T, lists)
    checked = 0
    for b in np.flatnonzero(res.status == Status.OPTIMAL.value):
        H, ok = _slsqp(names, lists, b, res.target[b])
        if ok:
            # a KKT point of the same problem; the maximum-entropy one is not below SLSQP's
            assert res.entropy[b] >= H - 1e-6
            assert res.entropy[b] == pytest.approx(H, abs=1e-5)
            checked += 1
    assert checked >= 3
    _check_certificate(res, lists, names)
    assert (res.stationarity[res.status == Status.OPTIMAL.value] <= 1e-9).all()


@pytest.mark.parametrize("name", ["nDCG@10", "P@10", "AP", "GAP"])
def test_one_metric_through_the_set_path_matches_the_compiled_solver(name, monkeypatch):
    """k = 1 taken through the successive linearisation from the count-only start (not the
    compiled start): the same statuses and entropies as the compiled kernels."""
    import maxent.solver.joint as joint

    lists = _random_lists(4, B=8, N=40)
    m = parse_measure(name)
    v = m.value(lists)[:, None]
    ref = solve(m, v[:, 0], lists)
    out = {"P": np.zeros(ref.p.shape), "status": np.full(8, "", dtype=object),
           "message": np.full(8, "", dtype=object), "nit": np.zeros(8, dtype=np.int64),
           "residual": np.zeros(8), "stationarity": np.zeros(8), "entropy": np.zeros(8),
           "mult": np.zeros((8, ref.multipliers.shape[1])), "attained": np.zeros((8, 1))}
    monkeypatch.setattr(joint, "_start", _count_only_start)
    solve_set([m], v, lists, count="retrieved", tol=1e-10, kkt_tol=1e-9, max_iter=500, out=out, s=0,
              solve_one=solve)
    np.testing.assert_array_equal(out["status"], ref.status)
    ok = ref.success
    np.testing.assert_allclose(out["entropy"][ok], ref.entropy[ok], rtol=1e-10)


def _count_only_start(form, targets, rows, *args):
    K = form.counts[rows]
    N = form.lists.grades.shape[1]
    active = (np.arange(N)[None, :] < form.lists.lengths[rows, None])[:, None, :]
    return K[:, :, None] / np.maximum(K.sum(axis=1), 1.0)[:, None, None] * active


def test_values_not_attainable_together_are_infeasible():
    # 20 ranks, 4 relevant: P@5 = 0.8 needs four relevant in the top five, P@10 = 0.1 one
    # (each within its own range: P@5 in [0, 0.8], P@10 in [0, 0.4])
    lists = _lists([[1, 1, 1, 1] + [0] * 16], [[20, 4]])
    res = solve(["P@5", "P@10"], [[0.8, 0.1]], lists)
    assert res.status[0] == Status.INFEASIBLE.value and "not attainable together" in res.message[0]
    # each within its own range, on an end: P@5 = 1 pins relevance, P@10 = 0 forbids it
    lists = _lists([[1] * 6 + [0] * 24], [[40, 6]])
    res = solve(["P@5", "P@10"], [[1.0, 0.0]], lists)
    assert res.status[0] == Status.INFEASIBLE.value and "exclude each other" in res.message[0]
    # a target beyond its metric's range names the metric
    res = solve(["AP", "P@10"], [[0.5, 0.9]], lists)
    assert res.status[0] == Status.INFEASIBLE.value and res.message[0].startswith("P@10")
    # feasible together: a KKT point meeting both
    res = solve(["P@5", "P@10"], [[0.6, 0.4]], lists)
    assert res.status[0] == Status.OPTIMAL.value
    np.testing.assert_allclose(res.attained[0], [0.6, 0.4], atol=1e-10)


def test_target_on_an_end_holds_the_face():
    # P@10 = 0: no relevance in the first ten ranks; AP is met on the rest
    g = np.zeros((1, 40), dtype=np.int64)
    g[0, [12, 15, 30]] = 1
    lists = _lists(g, [[60, 3]])
    res = _solve(["AP", "P@10"], lists)
    assert res.status[0] == Status.BOUNDARY.value and "P@10" in res.message[0]
    assert (res.p[0, :10] == 0).all()
    assert res.multipliers[0, -1] == -np.inf
    np.testing.assert_allclose(res.attained[0], res.target[0], atol=1e-10)


def test_undefined_when_a_metric_has_no_relevant_document():
    lists = _lists([[0, 0, 0, 0]], [[10, 0]])
    res = solve(["AP", "P@10"], [[0.0, 0.0]], lists)
    assert res.status[0] == Status.UNDEFINED.value


def test_mixed_binary_and_graded_share_the_graded_form():
    lists = _random_lists(5, B=5, N=30)
    res = _solve(["AP", "nDCG@10"], lists)
    assert res.p.shape == (5, 30, 3)
    _check_certificate(res, lists, ["AP", "nDCG@10"])
    assert res.success.sum() >= 4


def _bundled():
    from maxent.inputs import as_qrels, as_run
    from maxent.ranked import rank_runs

    runs = [as_run(f) for f in sorted(glob.glob("trec_runs/runs/*"))[:2]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank_runs(runs, as_qrels("trec_runs/qrels-rnd1.txt"), depth=100)


@pytest.mark.parametrize("names", [["AP", "P@10"], ["nDCG", "P@10"], ["RR", "AP"], ["ERR@20", "nDCG"], ["GAP", "AP"]])
def test_bundled_sample_certified(names):
    lists = _bundled()
    ms, T = _values(names, lists)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(ms, T, lists)
    # the real list meets every value: no set is infeasible; what is solved is certified
    assert not (res.status == Status.INFEASIBLE.value).any()
    _check_certificate(res, lists, names)
    assert (res.stationarity[res.status == Status.OPTIMAL.value] <= 1e-9).all()
    assert res.success.mean() >= 0.9


def test_linear_set_certified_at_the_duals_rounding_floor():
    """R-prec and R@100 on five bundled runs at depth 1000: on some lists the multipliers reach
    thousands, and the dual's gradient stops at its rounding floor, just above the inner
    tolerance, with every count and value met to 1e-12. The certificate on p decides, so every
    list is solved (optimal, or boundary where a value is at an end of its range)."""
    from maxent.inputs import as_qrels, as_run
    from maxent.ranked import rank_runs

    runs = [as_run(f) for f in sorted(glob.glob("trec_runs/runs/*"))[:5]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs(runs, as_qrels("trec_runs/qrels-rnd1.txt"), depth=1000)
    lists = lists.take(np.flatnonzero(lists.n_rel(1) > 0))
    res = _solve(["R-prec", "R@100"], lists)
    assert res.success.all()
    _check_certificate(res, lists, ["R-prec", "R@100"], tol=1e-10)
    b = res.multipliers[res.status == Status.OPTIMAL.value, -2:]
    assert np.abs(b).max() > 1e3                                 # the lists that reach the floor


def test_large_opposite_multipliers_certified_by_the_second_pass(monkeypatch):
    """nDCG and GAP, whose gradients are nearly parallel, on three lists of a bundled run at
    depth 1000: the tangent problems' multipliers reach hundreds, large and opposite, and the
    first pass stalls short of the certificate. The second pass (Anderson's mixing in ln p)
    certifies all three; without it none is."""
    from maxent.inputs import as_qrels, as_run
    from maxent.ranked import rank_runs
    from maxent.solver import joint

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs([as_run("trec_runs/runs/BITEM_df.gz")], as_qrels("trec_runs/qrels-rnd1.txt"), depth=1000)
    lists = lists.take(np.flatnonzero(np.isin(lists.topics, ["23", "24", "25"])))
    assert len(lists) == 3
    ms, T = _values(["nDCG", "GAP"], lists)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(ms, T, lists)
    assert (res.status == Status.OPTIMAL.value).all()
    _check_certificate(res, lists, ["nDCG", "GAP"], tol=1e-10)
    assert (res.stationarity <= 1e-9).all()
    assert (np.abs(res.multipliers[:, -2:]) > 100).all()
    monkeypatch.setattr(joint, "_mixed", lambda form, targets, allowed, pinned, rows, tol, kkt_tol, max_iter,
                        start, theta: (start, theta, 0, np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = solve(ms, T, lists)
    assert (first.status == Status.NOT_CONVERGED.value).all()


@pytest.mark.parametrize("collection", ["robust03", "trec_covid_r1", "trec_dl19_passage"])
@pytest.mark.parametrize("names", [["AP", "P@10"], ["nDCG@10", "RR"], ["GAP", "nDCG"]])
def test_shared_collections_certified(collection, names):
    """60 lists of each shared collection cut at depth 100: whatever is solved meets every value
    and is a KKT point; the real list meets them all, so nothing is infeasible."""
    from maxent.informativeness import at_threshold
    from tests._realdata import BINARY_THRESHOLD, ranked

    lists = ranked(collection)
    lists = lists.take(np.random.default_rng(7).choice(len(lists), 60, replace=False)).truncate(100)
    t = BINARY_THRESHOLD[collection]
    ms = [at_threshold(parse_measure(x), t) for x in names]     # binary at the collection's threshold
    keep = np.flatnonzero(lists.n_rel(t) > 0)
    lists = lists.take(keep)
    T = np.stack([m.value(lists) for m in ms], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(ms, T, lists)
    assert not (res.status == Status.INFEASIBLE.value).any()
    ok = res.success
    for j, m in enumerate(ms):
        np.testing.assert_allclose(m.expectation(res.p, lists)[ok], T[ok, j], atol=1e-9)
    assert (res.stationarity[res.status == Status.OPTIMAL.value] <= 1e-9).all()
    # not every list converges: GAP and nDCG have nearly parallel gradients, and their tangent
    # problems' multipliers grow large and opposite (docs/design/solver.md); the bound fails
    # on robust03 without the second pass
    if "GAP" in names:
        assert res.success.mean() >= 0.75
    else:
        assert res.success.all()


def test_newton_step_on_singular_and_broken_hessians():
    from maxent.solver.joint import _newton_step

    H = np.array([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]]])
    g = np.array([[2.0, 4.0], [1.0, 1.0], [1.0, 1.0]])
    d = _newton_step(H, g)
    np.testing.assert_allclose(d[0], [-1.0, -1.0])
    np.testing.assert_allclose(d[1], -np.linalg.lstsq(H[1], g[1], rcond=None)[0])   # singular
    np.testing.assert_array_equal(d[2], [0.0, 0.0])                                   # not finite
