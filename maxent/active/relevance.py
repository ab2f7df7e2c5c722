"""Graded relevance models p(y = z | query, document) for the sampling distributions of Sawade
et al. (2013) section 4: ordered logit (MAP; McCullagh 1980), random forests on the cumulative
problems y > k (section 5.1, Li et al. 2007), and the uniform label model of ``active uniD``.
Each model has ``fit(X, y)`` and ``predict_proba(X) -> (D, G)``.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from maxent.errors import ParameterError

__all__ = ["OrderedLogit", "CumulativeForest", "uniform_probs", "make_model", "MODELS"]

MODELS = ("logit", "forest")


def _check_xy(X, y=None):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ParameterError(f"features must be a finite (D, F) array, got shape {X.shape}")
    if y is None:
        return X
    y = np.asarray(y)
    if y.shape != (X.shape[0],) or (y < 0).any():
        raise ParameterError("grades must be one non-negative integer per row of X")
    return X, y.astype(np.int64)


class OrderedLogit:
    r"""Ordered logistic regression, MAP with a Gaussian prior on the weights.

    .. math:: P(y \le k \mid x) = \sigma(\theta_k - w^\top x),\quad k = 0..G-2,

    :math:`\theta_0 < \theta_1 < \dots`, minimising :math:`-\sum_i \log P(y_i \mid x_i)
    + \frac{\alpha}{2}(\|w\|^2 + \|\theta\|^2 / 100)` by L-BFGS on standardised features.

    Parameters
    ----------
    alpha : prior precision (L2 strength)
    levels : number of grades G (default: max(y) + 1)
    """

    def __init__(self, alpha: float = 1.0, levels: int | None = None):
        self.alpha = float(alpha)
        self.levels = levels

    def _unpack(self, v, F):
        w = v[:F]
        t0, eta = v[F], v[F + 1:]
        theta = t0 + np.concatenate(([0.0], np.cumsum(np.exp(eta))))
        return w, theta

    def _objective(self, v, X, y):
        D, F = X.shape
        w, theta = self._unpack(v, F)
        G = len(theta) + 1
        s = X @ w
        # P(y = z) = sigma(theta_z - s) - sigma(theta_{z-1} - s), with theta_{-1} = -inf, theta_{G-1} = +inf
        up = np.where(y < G - 1, theta[np.minimum(y, G - 2)] - s, np.inf)
        lo = np.where(y > 0, theta[np.maximum(y - 1, 0)] - s, -np.inf)
        # stably: sigma(up) - sigma(lo) = sigma(up) sigma(-lo) (1 - e^{lo - up})
        with np.errstate(invalid="ignore"):
            diff = lo - up
        ll = (np.where(np.isfinite(up), log_expit(up), 0.0) + np.where(np.isfinite(lo), log_expit(-lo), 0.0)
              + np.where(np.isfinite(diff), np.log(-np.expm1(np.where(np.isfinite(diff), diff, -1.0))), 0.0))
        reg = 0.5 * self.alpha * (w @ w + theta @ theta / 100.0)
        f = -ll.sum() + reg
        # gradient: ll = log(F(up) - F(lo)), F = sigma; d ll/d up = f(up)/prob, d ll/d lo = -f(lo)/prob
        Fu = np.where(np.isfinite(up), expit(up), 1.0)
        Fl = np.where(np.isfinite(lo), expit(-lo), 1.0)      # 1 - F(lo)
        prob = np.maximum(Fu - (1.0 - Fl), 1e-300)
        d_up = Fu * (1.0 - Fu) / prob
        d_lo = -Fl * (1.0 - Fl) / prob
        g_theta = np.zeros(G - 1)
        np.add.at(g_theta, np.minimum(y, G - 2)[y < G - 1], d_up[y < G - 1])
        np.add.at(g_theta, np.maximum(y - 1, 0)[y > 0], d_lo[y > 0])
        grad_w = (d_up + d_lo) @ X + self.alpha * w           # up, lo = theta - s, s = X w
        grad_theta = -g_theta + self.alpha * theta / 100.0
        # chain rule theta -> (t0, eta): theta_j = t0 + sum_{i<j} exp(eta_i)
        g_t0 = grad_theta.sum()
        g_eta = np.exp(v[F + 1:]) * np.cumsum(grad_theta[::-1])[::-1][1:]
        return f, np.concatenate([grad_w, [g_t0], g_eta])

    def fit(self, X, y) -> "OrderedLogit":
        X, y = _check_xy(X, y)
        G = int(y.max()) + 1 if self.levels is None else int(self.levels)
        if G < 2:
            raise ParameterError("ordered logit needs at least two grade levels")
        self.levels_ = G
        self.mu_ = X.mean(axis=0)
        self.sd_ = X.std(axis=0)
        self.sd_[self.sd_ == 0] = 1.0
        Z = (X - self.mu_) / self.sd_
        F = Z.shape[1]
        cum = np.cumsum(np.bincount(y, minlength=G))[:-1] / len(y)
        logits = np.log(np.clip(cum, 1e-3, 1 - 1e-3) / (1 - np.clip(cum, 1e-3, 1 - 1e-3)))
        logits = np.maximum.accumulate(logits + np.arange(G - 1) * 1e-3)
        v0 = np.concatenate([np.zeros(F), [logits[0]], np.log(np.maximum(np.diff(logits), 1e-3))])
        res = minimize(self._objective, v0, args=(Z, y), jac=True, method="L-BFGS-B",
                       options={"maxiter": 500})
        self.coef_, self.thresholds_ = self._unpack(res.x, F)
        self.result_ = res
        return self

    def predict_proba(self, X) -> np.ndarray:
        """(D, G) grade distribution of each row."""
        Z = (_check_xy(X) - self.mu_) / self.sd_
        s = Z @ self.coef_
        cdf = expit(self.thresholds_[None, :] - s[:, None])                  # P(y <= k)
        cdf = np.concatenate([np.zeros((len(s), 1)), cdf, np.ones((len(s), 1))], axis=1)
        return np.clip(np.diff(cdf, axis=1), 0.0, 1.0)

    def score(self, X) -> np.ndarray:
        """Expected grade, for ranking by this model (a pointwise ranker)."""
        p = self.predict_proba(X)
        return p @ np.arange(p.shape[1])


class CumulativeForest:
    """Random forest regression on the binary problems y > k (Sawade et al. (2013) section 5.1): the
    estimates of P(y > k), made non-increasing in k, are differenced. Needs scikit-learn."""

    def __init__(self, n_estimators: int = 100, min_samples_leaf: int = 5, levels: int | None = None,
                 random_state: int = 0, n_jobs: int = 1):
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.levels = levels
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y) -> "CumulativeForest":
        try:
            from sklearn.ensemble import RandomForestRegressor
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ParameterError('the random-forest relevance model needs scikit-learn: '
                                 'pip install -e ".[active]" (or pip install scikit-learn)') from e
        X, y = _check_xy(X, y)
        G = int(y.max()) + 1 if self.levels is None else int(self.levels)
        self.levels_ = G
        self.forests_ = []
        for k in range(G - 1):
            target = (y > k).astype(np.float64)
            if target.min() == target.max():
                self.forests_.append(float(target[0]))   # constant problem
                continue
            f = RandomForestRegressor(n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
                                      random_state=self.random_state + k, n_jobs=self.n_jobs)
            self.forests_.append(f.fit(X, target))
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = _check_xy(X)
        above = np.stack([np.full(len(X), f) if isinstance(f, float) else f.predict(X)
                          for f in self.forests_], axis=1)                   # P(y > k)
        above = np.minimum.accumulate(np.clip(above, 0.0, 1.0), axis=1)
        surv = np.concatenate([np.ones((len(X), 1)), above, np.zeros((len(X), 1))], axis=1)
        return -np.diff(surv, axis=1)

    score = OrderedLogit.score


def uniform_probs(shape: tuple[int, ...], levels: int) -> np.ndarray:
    """p(y = z) = 1/G for every document (the ``active uniD`` ablation of Sawade et al. (2013))."""
    return np.full((*shape, levels), 1.0 / levels)


def make_model(name: str, levels: int, seed: int = 0):
    """A fresh relevance model by name: ``logit`` (default) or ``forest``."""
    if name == "logit":
        return OrderedLogit(levels=levels)
    if name == "forest":
        return CumulativeForest(levels=levels, random_state=seed)
    raise ParameterError(f"unknown relevance model {name!r}; choose from {', '.join(MODELS)}")
