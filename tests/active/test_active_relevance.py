"""Relevance models of Sawade et al. (2013) section 5.1: ordered logit (MAP) and cumulative random forests."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import expit

from maxent.active import CumulativeForest, OrderedLogit, make_model, uniform_probs
from maxent.errors import ParameterError


def _ordinal_data(rng, n, w, theta):
    X = rng.normal(size=(n, len(w)))
    u = rng.logistic(size=n)
    y = (X @ w + u > theta[:, None]).sum(axis=0)     # P(y <= k) = sigma(theta_k - w.x)
    return X, y


def test_ordered_logit_gradient_matches_finite_differences(rng):
    X, y = _ordinal_data(rng, 200, np.array([1.0, -0.5, 0.3]), np.array([-1.0, 0.5, 2.0]))
    model = OrderedLogit(alpha=0.7)
    v = rng.normal(size=3 + 1 + 2)
    f = lambda v: model._objective(v, X, y)[0]
    g = model._objective(v, X, y)[1]
    np.testing.assert_allclose(g, approx_fprime(v, f, 1e-6), rtol=1e-4, atol=1e-4)


def test_ordered_logit_recovers_generating_parameters():
    """Oracle: the parameters the data were drawn from (n = 20,000, weak prior)."""
    rng = np.random.default_rng(11)
    w, theta = np.array([1.0, -0.5, 0.3]), np.array([-1.0, 0.5, 2.0])
    X, y = _ordinal_data(rng, 20_000, w, theta)
    X = X * np.array([1.0, 2.0, 0.5]) + 3.0        # the model standardises internally
    m = OrderedLogit(alpha=1e-3).fit(X, y)
    # map back to the original scale: s = (X - mu)/sd . coef
    w_hat = m.coef_ / m.sd_ * np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(w_hat, w, atol=0.05)
    p = m.predict_proba(X[:5])
    X0 = (X[:5] - 3.0) / np.array([1.0, 2.0, 0.5])
    cdf = expit(theta[None, :] - (X0 @ w)[:, None])
    ref = np.diff(np.concatenate([np.zeros((5, 1)), cdf, np.ones((5, 1))], axis=1), axis=1)
    np.testing.assert_allclose(p, ref, atol=0.03)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_ordered_logit_handles_unseen_top_grade(rng):
    X, y = _ordinal_data(rng, 300, np.array([1.0]), np.array([0.0, 5.0]))
    y = np.minimum(y, 1)
    p = OrderedLogit(levels=4).fit(X, y).predict_proba(X)
    assert p.shape == (300, 4) and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert p[:, 2:].max() < 0.05


def test_forest_probabilities_are_a_distribution(rng):
    pytest.importorskip("sklearn")
    X, y = _ordinal_data(rng, 400, np.array([2.0, 0.0]), np.array([-1.0, 0.5, 1.5]))
    f = CumulativeForest(n_estimators=20, levels=5).fit(X, y)
    p = f.predict_proba(X)
    assert p.shape == (400, 5)
    assert (p >= -1e-12).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # the forest ranks by expected grade in the direction of the signal
    assert np.corrcoef(f.score(X), X[:, 0])[0, 1] > 0.7


def test_uniform_model_and_names():
    np.testing.assert_allclose(uniform_probs((2, 3), 4), 0.25)
    assert isinstance(make_model("logit", 3), OrderedLogit)
    with pytest.raises(ParameterError, match="unknown relevance model"):
        make_model("svm", 3)
    with pytest.raises(ParameterError, match="finite"):
        OrderedLogit().fit(np.array([[np.nan]]), np.array([1]))
