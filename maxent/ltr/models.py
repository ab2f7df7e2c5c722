r"""Scoring models for LambdaRank (Yilmaz & Robertson 2010; Donmez, Svore & Burges 2009).

A model is stateless: its parameters are one flat float64 vector ``theta`` (P,), so training,
restarts and the local-optimality test (random directions in parameter space) work on arrays.

* :class:`LinearModel`: :math:`s = X w` (no bias: a shift does not change a ranking).
* :class:`TwoLayerNet`: :math:`s = w_2^\top \tanh(W_1^\top x + b_1) + b_2` with ``hidden`` units.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError

__all__ = ["LinearModel", "TwoLayerNet", "make_model"]

BLOCK_ELEMENTS = 1 << 21
"""Hidden activations (vectors x documents x units) :meth:`TwoLayerNet.score_many` holds at once."""


class LinearModel:
    """Linear scores :math:`s = X w`.

    Parameters
    ----------
    n_features : int
        F, the number of input features.
    """

    kind = "linear"

    def __init__(self, n_features: int):
        self.n_features = int(n_features)
        self.n_params = self.n_features

    def __repr__(self) -> str:
        return f"LinearModel(n_features={self.n_features})"

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """Random parameters, uniform on +-1/sqrt(F), shape (P,)."""
        a = 1.0 / np.sqrt(max(self.n_features, 1))
        return rng.uniform(-a, a, self.n_params)

    def score(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Scores (D,) of documents X (D, F)."""
        return X @ theta

    def score_many(self, thetas: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Scores (K, D) for K parameter vectors thetas (K, P)."""
        return thetas @ X.T

    def gradient(self, theta: np.ndarray, X: np.ndarray, dscore: np.ndarray) -> np.ndarray:
        r""":math:`\sum_i dscore_i\, \partial s_i / \partial \theta` = ``X.T @ dscore``, shape (P,)."""
        return X.T @ dscore


class TwoLayerNet:
    """Two-layer net with ``hidden`` tanh units and a linear output.

    Parameters are packed as ``[W1 (F x H) row-major, b1 (H), w2 (H), b2 (1)]``.
    """

    kind = "net"

    def __init__(self, n_features: int, hidden: int = 10):
        if hidden < 1:
            raise ParameterError(f"hidden must be >= 1, got {hidden}")
        self.n_features = int(n_features)
        self.hidden = int(hidden)
        F, H = self.n_features, self.hidden
        self.n_params = F * H + H + H + 1

    def __repr__(self) -> str:
        return f"TwoLayerNet(n_features={self.n_features}, hidden={self.hidden})"

    def _unpack(self, theta):
        F, H = self.n_features, self.hidden
        W1 = theta[..., : F * H].reshape(theta.shape[:-1] + (F, H))
        b1 = theta[..., F * H: F * H + H]
        w2 = theta[..., F * H + H: F * H + 2 * H]
        b2 = theta[..., -1]
        return W1, b1, w2, b2

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """Random parameters: W1 uniform on +-1/sqrt(F), w2 on +-1/sqrt(H), biases 0."""
        F, H = self.n_features, self.hidden
        theta = np.zeros(self.n_params)
        theta[: F * H] = rng.uniform(-1, 1, F * H) / np.sqrt(max(F, 1))
        theta[F * H + H: F * H + 2 * H] = rng.uniform(-1, 1, H) / np.sqrt(H)
        return theta

    def score(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        W1, b1, w2, b2 = self._unpack(theta)
        return np.tanh(X @ W1 + b1) @ w2 + b2

    def score_many(self, thetas: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Scores (K, D) for K parameter vectors thetas (K, P), in blocks of :data:`BLOCK_ELEMENTS`."""
        W1, b1, w2, b2 = self._unpack(np.atleast_2d(thetas))
        K, D = W1.shape[0], X.shape[0]
        out = np.empty((K, D))
        step = max(1, BLOCK_ELEMENTS // max(1, D * self.hidden))
        for a in range(0, K, step):
            s = slice(a, a + step)
            h = np.einsum("df,kfh->kdh", X, W1[s], optimize=True)
            h += b1[s, None, :]
            np.tanh(h, out=h)
            out[s] = np.einsum("kdh,kh->kd", h, w2[s])
            out[s] += b2[s, None]
        return out

    def gradient(self, theta: np.ndarray, X: np.ndarray, dscore: np.ndarray) -> np.ndarray:
        r""":math:`\sum_i dscore_i\, \partial s_i / \partial \theta` by backpropagation, shape (P,)."""
        W1, b1, w2, b2 = self._unpack(theta)
        h = np.tanh(X @ W1 + b1)                     # (D, H)
        g_w2 = h.T @ dscore
        g_b2 = dscore.sum()
        dh = np.outer(dscore, w2) * (1.0 - h * h)    # (D, H)
        g_W1 = X.T @ dh
        g_b1 = dh.sum(axis=0)
        return np.concatenate([g_W1.ravel(), g_b1, g_w2, [g_b2]])


def make_model(kind: str, n_features: int, *, hidden: int = 10):
    """``linear`` -> :class:`LinearModel`, ``net`` -> :class:`TwoLayerNet` (``hidden`` units)."""
    if kind == "linear":
        return LinearModel(n_features)
    if kind == "net":
        return TwoLayerNet(n_features, hidden)
    raise ParameterError(f"model must be 'linear' or 'net', got {kind!r}")
