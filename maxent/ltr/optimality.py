r"""Monte-Carlo test of local optimality (Donmez et al. 2009 section 5; Yilmaz & Robertson 2010
section 5.2, Table 5).

The metric is evaluated at :math:`\theta + \eta v_k` for K random unit directions and steps
:math:`\eta \in \{0.1, \dots, 1.0\}`, counting alterations that improve it by more than 0 and
by more than :math:`\varepsilon = 0.003`. With K = 459 and no improvement the weights are a
local optimum with 99% confidence for :math:`p_Z \ge 0.01`.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.ltr.train import QuerySet, evaluate_many

__all__ = ["local_optimality", "directions_needed", "unit_directions", "shift_profile"]


def directions_needed(eps: float = 0.01, delta: float = 0.01) -> int:
    r""":math:`K = \lceil \ln\delta / \ln(1 - \epsilon) \rceil` (Donmez et al. 2009 section 5)."""
    return int(np.ceil(np.log(delta) / np.log1p(-eps)))


def unit_directions(n_params: int, kind: str = "random", *, n: int = 459, seed: int = 0) -> np.ndarray:
    """(K, P) unit directions: ``"random"`` (n normalised standard normal vectors, uniform on
    the sphere) or ``"weights"`` (the 2P signed coordinate vectors +e_j, -e_j)."""
    if kind == "random":
        V = np.random.default_rng(seed).standard_normal((n, n_params))
        return V / np.linalg.norm(V, axis=1, keepdims=True)
    if kind == "weights":
        return np.concatenate([np.eye(n_params), -np.eye(n_params)])
    raise ParameterError(f"direction kind must be 'random' or 'weights', got {kind!r}")


def shift_profile(model, theta, qs: QuerySet, metric, directions, steps) -> np.ndarray:
    r"""Mean metric over the queries of ``qs`` at :math:`\theta + \eta v` for every direction
    v (rows of ``directions``, shape (K, P)) and step :math:`\eta` in ``steps`` (S,).

    Returns (K, S) values; a step of 0 gives the learned model's value in every row.
    """
    V = np.atleast_2d(np.asarray(directions, dtype=np.float64))
    thetas = _shifted(theta, V, steps)
    return evaluate_many(model, thetas, qs, [metric])[str(metric)].reshape(len(V), len(steps))


def _shifted(theta, V, steps) -> np.ndarray:
    """(K * S, P) parameter vectors theta + eta v, direction-major."""
    theta = np.asarray(theta, dtype=np.float64)
    steps = np.asarray(steps, dtype=np.float64)
    return (theta[None, None, :] + steps[None, :, None] * V[:, None, :]).reshape(-1, theta.size)


def local_optimality(model, theta, sets: dict[str, QuerySet], metrics, *, n_directions: int = 459,
                     steps=tuple(np.round(np.arange(1, 11) / 10, 1)), eps: float = 0.003,
                     seed: int = 0) -> list[dict]:
    """Run the Monte-Carlo test for each (set, metric).

    Parameters
    ----------
    model, theta
        The model and its learned parameters (P,).
    sets : dict
        Name -> QuerySet.
    metrics : sequence of metric objects
    n_directions, steps, eps, seed
        K random unit directions, step sizes eta, the threshold epsilon, and the seed.

    Returns
    -------
    list of dict
        One row per (set, metric): ``set``, ``metric``, ``base``, ``alterations``
        (K x len(steps)), ``improved`` (gain > 0, read as > 1e-12 to ignore float noise),
        ``improved_eps`` (gain > eps) and ``best_gain``.
    """
    theta = np.asarray(theta, dtype=np.float64)
    thetas = _shifted(theta, unit_directions(theta.size, "random", n=n_directions, seed=seed), steps)
    rows = []
    for name, qs in sets.items():
        base = evaluate_many(model, theta[None], qs, metrics)
        alt = evaluate_many(model, thetas, qs, metrics)
        for m in metrics:
            gain = alt[str(m)] - base[str(m)][0]
            rows.append({"set": name, "metric": str(m), "base": float(base[str(m)][0]),
                         "alterations": int(gain.size), "improved": int((gain > 1e-12).sum()),
                         "improved_eps": int((gain > eps).sum()), "best_gain": float(gain.max())})
    return rows
