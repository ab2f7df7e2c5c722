"""Models, LambdaRank training protocol, evaluation and the Monte-Carlo optimality test."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.letor import split_queries
from maxent.synthetic import artificial, make_synthetic
from maxent.ltr.models import LinearModel, TwoLayerNet, make_model
from maxent.ltr.optimality import directions_needed, local_optimality
from maxent.ltr.train import QuerySet, evaluate, evaluate_many, train_lambdarank
from maxent.metrics import parse_measure

LTR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ltr"


@pytest.fixture(scope="module")
def art():
    d = make_synthetic(60, **artificial(12, 6), seed=11)
    tr, va = split_queries(d, (0.7, 0.3), seed=0)
    return QuerySet(tr, 5), QuerySet(va, 5)


@pytest.mark.parametrize("model", [LinearModel(4), TwoLayerNet(4, hidden=3)])
def test_gradient_matches_finite_differences(model):
    """Oracle: central differences of sum_i c_i s_i(theta)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((7, 4))
    c = rng.standard_normal(7)
    th = model.init(rng) + 0.1 * rng.standard_normal(model.n_params)
    g = model.gradient(th, X, c)
    h = 1e-6
    fd = np.array([(c @ model.score(th + h * e, X) - c @ model.score(th - h * e, X)) / (2 * h)
                   for e in np.eye(model.n_params)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    many = model.score_many(np.stack([th, 2 * th]), X)
    np.testing.assert_allclose(many, np.stack([model.score(th, X), model.score(2 * th, X)]), atol=1e-12)


def test_scoring_and_evaluating_in_blocks_changes_no_bit(art, monkeypatch):
    """Oracles: the unblocked batch formula (every parameter vector's hidden activations at once)
    and one evaluation per vector; blocks of one vector must give the same bits as one block."""
    import maxent.ltr.models as models
    import maxent.ltr.train as train

    tr, _ = art
    net = TwoLayerNet(tr.X.shape[1], hidden=4)
    rng = np.random.default_rng(1)
    thetas = rng.standard_normal((9, net.n_params))
    W1, b1, w2, b2 = net._unpack(thetas)
    whole = np.einsum("kdh,kh->kd", np.tanh(np.einsum("df,kfh->kdh", tr.X, W1, optimize=True) + b1[:, None, :]),
                      w2) + b2[:, None]
    metrics = [parse_measure("AP"), parse_measure("nDCG@10")]
    one_block = evaluate_many(net, thetas, tr, metrics)
    np.testing.assert_array_equal(net.score_many(thetas, tr.X), whole)
    monkeypatch.setattr(models, "BLOCK_ELEMENTS", 1)          # one parameter vector per block
    monkeypatch.setattr(train, "EVAL_ELEMENTS", 1)            # ... and per ranking chunk
    np.testing.assert_array_equal(net.score_many(thetas, tr.X), whole)
    blocked = evaluate_many(net, thetas, tr, metrics)
    for m in metrics:
        np.testing.assert_array_equal(blocked[str(m)], one_block[str(m)])
        singles = [evaluate(net, th, tr, [m])[str(m)].mean() for th in thetas]
        np.testing.assert_allclose(blocked[str(m)], singles, rtol=0, atol=1e-12)
    assert len(set(one_block["AP"])) > 1                         # the vectors rank differently


def test_make_model():
    assert make_model("net", 5).n_params == 5 * 10 + 10 + 10 + 1
    with pytest.raises(ParameterError):
        make_model("tree", 5)


def test_evaluate_uses_library_on_ranked_scores():
    # one query, grades [0, 1, 2]; scores put grade 2 first, then 0, then 1:
    # AP = (1/1 + 2/3) / 2 = 5/6 (hand calculation)
    from maxent.letor import RankingData
    d = RankingData(np.array([[0.5], [0.1], [0.9]]), np.array([0, 1, 2]), np.array([0, 3]),
                    np.array(["q"], dtype=object))
    qs = QuerySet(d)
    v = evaluate(LinearModel(1), np.array([1.0]), qs, [parse_measure("AP")])
    assert v["AP"][0] == pytest.approx(5 / 6)
    many = evaluate_many(LinearModel(1), np.array([[1.0], [-1.0]]), qs, [parse_measure("AP")])
    # reversed: grade 1 at rank 1, grade 2 at rank 3: AP = (1/1 + 2/3) / 2 as well
    np.testing.assert_allclose(many["AP"], [5 / 6, 5 / 6])


def test_training_is_deterministic_and_learns(art):
    tr, va = art
    m = parse_measure("nDCG@10")
    model = LinearModel(tr.X.shape[1])
    kw = dict(valid=va, track=[m, parse_measure("AP")], epochs=6, learning_rate=0.05, seed=3)
    r1 = train_lambdarank(model, tr, m, **kw)
    r2 = train_lambdarank(model, tr, m, **kw)
    np.testing.assert_array_equal(r1.theta, r2.theta)
    assert r1.history == r2.history
    r3 = train_lambdarank(model, tr, m, **dict(kw, seed=4))
    assert not np.array_equal(r1.theta, r3.theta)
    curve = [h["train:nDCG@10"] for h in r1.history]
    assert max(curve[1:]) > curve[0] + 0.05        # learns well beyond the random start
    # selection: the recorded best is the maximum of the validation curve, first on ties
    vals = [h["valid:AP"] for h in r1.history]
    assert r1.best["AP"]["value"] == max(vals) and r1.best["AP"]["epoch"] == int(np.argmax(vals))


def test_convergence_stop_matches_the_rule_on_the_full_trajectory(art):
    """Oracle: the uncapped run with the same seed is the same trajectory; the convergence rule,
    applied by brute force to its history (windows within one restart segment, read off the
    ``restarts`` column), names the epoch at which the converging run must stop."""
    tr, va = art
    m = parse_measure("AP")
    for restart_patience, tol, window in ((None, 2e-3, 3), (2, 5e-3, 2), (None, 1e-3, 25)):
        kw = dict(valid=va, track=[m], learning_rate=0.3, seed=5, restart_patience=restart_patience)
        full = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=40, **kw)
        obj = np.array([h["train:AP"] for h in full.history])
        seg = np.array([h["restarts"] for h in full.history])
        expect = None
        for e in range(1, 41):
            vals = obj[:e + 1][seg[:e + 1] == seg[e]]
            if len(vals) > 2 * window and abs(vals[-window:].mean() - vals[-2 * window:-window].mean()) < tol:
                expect = e
                break
        r = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=40, converge_tol=tol,
                             converge_window=window, **kw)
        assert r.history == full.history[:len(r.history)]
        assert r.stopped_epoch == (expect or 40) == len(r.history) - 1
        assert r.stop_reason == ("converged" if expect else "epoch_cap")
        if window == 25:
            assert expect is None                  # two windows of 25 need more than 40 epochs
        else:
            assert expect is not None and expect < 40   # the rule fires in the cases built for it
    with pytest.raises(ParameterError):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=3, converge_tol=0.0)


def test_early_stopping_by_validation_patience(art):
    """Oracles: the run without patience (same seed) is the same trajectory, so the stopped run's
    history is its prefix; and it stops exactly ``patience`` epochs after the last epoch at
    which a selection metric reached its best (read off the full run's validation curves)."""
    tr, va = art
    m = parse_measure("AP")
    track = [m, parse_measure("P@5")]
    kw = dict(valid=va, track=track, learning_rate=0.3, seed=2)
    full = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=40, **kw)
    assert full.stop_reason == "epoch_cap" and full.stopped_epoch == 40
    for patience in (1, 3):
        r = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=40, patience=patience, **kw)
        assert r.history == full.history[:len(r.history)]
        # brute force: first epoch e with no running-best improvement of any metric in (e-p, e]
        curves = np.array([[h[f"valid:{t}"] for h in full.history] for t in track])
        runmax = np.maximum.accumulate(curves, axis=1)
        improved = np.r_[True, (curves[:, 1:] > runmax[:, :-1]).any(axis=0)]
        last_imp = np.maximum.accumulate(np.where(improved, np.arange(41), 0))
        hits = [e for e in range(1, 41) if e - last_imp[e] >= patience]
        expect = hits[0] if hits else 40
        assert r.stopped_epoch == expect == len(r.history) - 1
        assert r.stop_reason == ("patience" if hits else "epoch_cap")
        for t in track:                           # selected weights are the prefix's best epoch
            vals = [h[f"valid:{t}"] for h in r.history]
            assert r.best[str(t)]["epoch"] == int(np.argmax(vals))
    short = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=40, patience=1, **kw)
    assert short.stop_reason == "patience" and short.stopped_epoch < 40     # the case is exercised
    with pytest.raises(ParameterError):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=3, patience=0)


@pytest.mark.parametrize("name", ["AP", "P@5", "RR", "GAP", "nDCG(gain=exp)", "ERR@5"])
def test_every_objective_trains(art, name):
    tr, va = art
    m = parse_measure(name)
    r = train_lambdarank(TwoLayerNet(tr.X.shape[1]), tr, m, epochs=3, learning_rate=0.05, seed=0)
    curve = [h[f"train:{m}"] for h in r.history]
    assert max(curve[1:]) > curve[0]


@pytest.mark.parametrize("objective,name,kw", [
    ("softrank", "nDCG(gain=exp)", {"sigma_s": 0.5}), ("softrank", "AP", {"sigma_s": 0.5}),
    ("softrank", "GAP", {"sigma_s": 0.5}), ("softrank", "P@5", {"sigma_s": 0.5}),
    ("approxrank", "nDCG(gain=exp)", {"alpha": 10.0}), ("approxrank", "AP", {"alpha": 10.0, "beta": 5.0}),
])
def test_soft_and_approx_objectives_train(art, objective, name, kw):
    """Oracle: the library metric on the training set rises above the random start."""
    tr, _ = art
    m = parse_measure(name)
    r = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=4, learning_rate=0.5, seed=0,
                         objective=objective, **kw)
    curve = [h[f"train:{m}"] for h in r.history]
    assert max(curve[1:]) > curve[0]


def test_objective_update_is_the_objective_gradient(art):
    """One query, one step of a linear model: theta moves by lr * X^T grad (softrank gradient)."""
    from maxent.ltr.softrank import softrank_gradients

    tr, _ = art
    m = parse_measure("AP")
    model = LinearModel(tr.X.shape[1])
    th0 = np.linspace(-1, 1, model.n_params)
    sub = QuerySet(tr.data.subset([0]), 5)
    assert sub.n_queries == 1
    r = train_lambdarank(model, sub, m, epochs=1, learning_rate=0.1, theta0=th0, objective="softrank",
                         sigma_s=0.3)
    n = int(sub.lengths[0])
    X = sub.Xp[0, :n]
    g = softrank_gradients(model.score(th0, X)[None], sub.yp[:1, :n], sub.context(m), rows=[0],
                           sigma_s=0.3)[0]
    assert np.abs(g).max() > 0
    np.testing.assert_allclose(r.theta, th0 + 0.1 * model.gradient(th0, X, g), atol=1e-12)


def test_unknown_objective_and_unsupported_metric(art):
    tr, _ = art
    with pytest.raises(ParameterError):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, parse_measure("AP"), objective="listnet")
    with pytest.raises(ParameterError):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, parse_measure("RR"), objective="softrank")
    with pytest.raises(ParameterError, match="position-additive or pairwise"):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, parse_measure("ERR@10"), objective="approxrank")
    with pytest.raises(ParameterError, match="no LambdaRank swap delta"):     # no delta: refused
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, parse_measure("Rprec"))
    with pytest.raises(ParameterError, match="no LambdaRank swap delta"):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, parse_measure("AP@10"), objective="softrank")


def test_restarts_and_decay(art):
    tr, va = art
    m = parse_measure("P@5")
    r = train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, epochs=8, learning_rate=1e-9,
                         restart_patience=1, seed=0)
    assert r.restarts >= 1 and r.history[-1]["restarts"] == r.restarts
    r = train_lambdarank(TwoLayerNet(tr.X.shape[1]), tr, m, epochs=25, learning_rate=2.0, lr_decay=True, seed=1)
    lrs = np.array([h["learning_rate"] for h in r.history])
    k = np.log(lrs / 2.0) / np.log(0.8)               # every rate is 2.0 * 0.8^k, k integer
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)
    assert np.all(np.diff(lrs) <= 0) and lrs[-1] < 2.0
    with pytest.raises(ParameterError):
        train_lambdarank(LinearModel(tr.X.shape[1]), tr, m, learning_rate=0)


def test_monte_carlo_local_optimality():
    assert directions_needed(0.01, 0.01) == 459       # Donmez et al. 2009 section 5
    # one feature equal to the grade: w = +1 ranks perfectly, no alteration can improve;
    # w = -1 ranks worst-first, and the step to w = 0 (all scores tie: input order, which is
    # grade-descending here) improves.
    from maxent.letor import RankingData
    y = np.array([2, 1, 0, 3, 2, 1, 0])
    d = RankingData(y[:, None].astype(float), y, np.array([0, 3, 7]), np.array(["a", "b"], dtype=object))
    qs = QuerySet(d)
    model = LinearModel(1)
    m = parse_measure("nDCG")
    best = local_optimality(model, np.array([1.0]), {"train": qs}, [m], n_directions=20)
    assert best[0]["improved"] == 0 and best[0]["base"] == 1.0 and best[0]["alterations"] == 200
    worst = local_optimality(model, np.array([-1.0]), {"train": qs}, [m], n_directions=20, eps=0.003)
    assert worst[0]["improved_eps"] > 0


def test_shift_profile_and_directions(art):
    """Oracle: evaluate() at each shifted parameter vector, one at a time."""
    from maxent.ltr.optimality import shift_profile, unit_directions

    tr, _ = art
    model = TwoLayerNet(tr.X.shape[1], hidden=3)
    th = model.init(np.random.default_rng(0))
    V = unit_directions(model.n_params, "random", n=4, seed=1)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0)
    W = unit_directions(model.n_params, "weights")
    assert W.shape == (2 * model.n_params, model.n_params) and (np.abs(W).sum(axis=1) == 1).all()
    m = parse_measure("AP")
    steps = [0.0, 0.5, 1.0]
    prof = shift_profile(model, th, tr, m, np.concatenate([V, W[:3]]), steps)
    for k, v in enumerate(np.concatenate([V, W[:3]])):
        for j, eta in enumerate(steps):
            assert prof[k, j] == pytest.approx(evaluate(model, th + eta * v, tr, [m])["AP"].mean(), abs=1e-12)
    with pytest.raises(ParameterError):
        unit_directions(3, "sideways")


@pytest.mark.slow
@pytest.mark.skipif(not LTR.exists(), reason=f"shared LTR data not found at {LTR}")
def test_anchor_against_lightgbm():
    """LambdaRank-nDCG (net) within 5 nDCG@10 points of LightGBM lambdarank on the Yahoo
    sample (test split), both selected on the same validation split."""
    pytest.importorskip("lightgbm")
    from maxent.letor import read_letor, standardize
    from analysis.learning.peer import evaluate_scores, lightgbm_lambdarank
    tr = read_letor(LTR / "yahoo_lightgbm_sample" / "rank.train")
    te = read_letor(LTR / "yahoo_lightgbm_sample" / "rank.test", n_features=tr.n_features)
    tr, va = split_queries(tr, (0.75, 0.25), seed=0)
    tr, va, te = standardize(tr, va, te)
    target = parse_measure("nDCG@10(gain=exp)")
    booster = lightgbm_lambdarank(tr, va)
    lgb = evaluate_scores(booster.predict(te.X), te, target, 5).mean()
    qtr, qva, qte = QuerySet(tr, 5), QuerySet(va, 5), QuerySet(te, 5)
    model = TwoLayerNet(tr.n_features)
    r = train_lambdarank(model, qtr, parse_measure("nDCG(gain=exp)"), valid=qva, track=[target],
                         epochs=30, learning_rate=1e-2, seed=0)
    ours = evaluate(model, r.best[str(target)]["theta"], qte, [target])[str(target)].mean()
    assert abs(ours - lgb) < 0.05, (ours, lgb)


def test_effective_pairs_brute_force(art):
    """Oracle: swap every pair of the ranked list and recompute the metric with the library;
    count pairs with different grades whose swap changes it. Structural check: RR has fewer
    effective pairs than nDCG (Donmez et al. 2009 section 7.1)."""
    from maxent.ltr.lambdas import rank_by_score
    from maxent.ltr.pairs import candidate_pairs, effective_pairs
    from maxent.ranked import RankedLists

    tr, _ = art
    model = LinearModel(tr.X.shape[1])
    th = model.init(np.random.default_rng(0))
    S = tr.padded_scores(model.score(th, tr.X))
    Y = np.take_along_axis(tr.yp, rank_by_score(S, tr.lengths), axis=1)
    counts = {}
    for name in ("AP", "RR", "P@5", "nDCG(gain=exp)", "nDCG@5"):
        m = parse_measure(name)
        got = effective_pairs(model, th, tr, m, chunk=7)
        for q in range(0, tr.n_queries, 5):                          # a sample of queries
            n = tr.lengths[q]
            y = Y[q, :n]
            base = m.value(RankedLists.from_grades(y[None], tr.rel_counts[q:q + 1], np.array([n])))[0]
            want = 0
            for a in range(n):
                for b in range(a + 1, n):
                    if y[a] == y[b]:
                        continue
                    z = y.copy()
                    z[[a, b]] = z[[b, a]]
                    v = m.value(RankedLists.from_grades(z[None], tr.rel_counts[q:q + 1], np.array([n])))[0]
                    want += abs(v - base) > 1e-12
            assert got[q] == want, (name, q)
        counts[name] = got.sum()
    cand = candidate_pairs(tr)
    assert (cand >= effective_pairs(model, th, tr, parse_measure("nDCG(gain=exp)"))).all()
    assert counts["RR"] < counts["AP"] and counts["nDCG@5"] <= counts["nDCG(gain=exp)"]
