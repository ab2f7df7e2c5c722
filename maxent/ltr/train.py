r"""Training by LambdaRank, SoftRank or ApproxRank, with the protocol of Yilmaz & Robertson
(2010, section 5) and Donmez et al. (2009, section 7).

The objective's score gradient (``objective=``) is the lambdas of
:func:`~maxent.ltr.lambdas.lambda_gradients`, :func:`~maxent.ltr.softrank.softrank_gradients` or
:func:`~maxent.ltr.approx.approxrank_gradients`; all three ascend the metric, so the update
:math:`\theta \leftarrow \theta + \eta \sum_i \lambda_i \partial s_i / \partial \theta` is the
same. Updates are per ``batch_size`` queries in a random order every epoch; the best epoch is
chosen per validation metric, so that a model trained for X and tested on Y is selected by Y
(Yilmaz & Robertson 2010, footnote 3). Early stopping, convergence stop, random restarts and
learning-rate decay are options of :func:`train_ranker`. Deterministic for a given ``seed``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from maxent.errors import ParameterError
from maxent.letor import RankingData
from maxent.ltr.lambdas import DeltaContext, check_lambda_metric, lambda_gradients, rank_by_score
from maxent.ranked import RankedLists

__all__ = ["OBJECTIVES", "QuerySet", "TrainResult", "check_objective", "evaluate", "evaluate_many",
           "train_ranker", "train_lambdarank"]

OBJECTIVES = ("lambdarank", "softrank", "approxrank")

EVAL_ELEMENTS = 1 << 22
"""Padded scores (parameter vectors x queries x documents) :func:`evaluate_many` ranks at once."""


class QuerySet:
    """A :class:`~maxent.letor.RankingData` prepared for training and evaluation.

    Parameters
    ----------
    data : RankingData
    n_levels : int, optional
        Grade levels L of ``rel_counts`` (the same for train, validation and test); default
        max grade + 1.

    Attributes
    ----------
    X : (D, F) features; Xp : (Q, N, F) padded; yp : (Q, N) grades, -1 padding;
    lengths : (Q,); rel_counts : (Q, L); slot : (D,) flat index of each document in (Q * N).
    """

    def __init__(self, data: RankingData, n_levels: int | None = None):
        self.data = data
        self.X = data.X
        self.Xp, self.yp, self.lengths = data.padded()
        self.rel_counts = data.rel_counts(n_levels)
        Q, N = self.yp.shape
        pos = np.arange(data.n_docs) - np.repeat(data.offsets[:-1], data.sizes)
        self.slot = data.query_index * N + pos
        self._ctx: dict = {}

    @property
    def n_queries(self) -> int:
        return self.yp.shape[0]

    def context(self, metric) -> DeltaContext:
        """Per-query lambda constants of ``metric``, computed once and cached."""
        key = str(metric)
        if key not in self._ctx:
            self._ctx[key] = DeltaContext(metric, self.rel_counts)
        return self._ctx[key]

    def padded_scores(self, scores: np.ndarray) -> np.ndarray:
        """Flat document scores (..., D) -> padded (..., Q, N); padding gets -inf."""
        Q, N = self.yp.shape
        out = np.full(scores.shape[:-1] + (Q * N,), -np.inf)
        out[..., self.slot] = scores
        return out.reshape(scores.shape[:-1] + (Q, N))


def evaluate(model, theta: np.ndarray, qs: QuerySet, metrics) -> dict[str, np.ndarray]:
    """Per-query values (Q,) of each metric for the ranking by the model's scores (ties: input order)."""
    S = qs.padded_scores(model.score(theta, qs.X))
    order = rank_by_score(S, qs.lengths)
    lists = RankedLists.from_grades(np.take_along_axis(qs.yp, order, axis=1), qs.rel_counts, qs.lengths)
    return {str(m): m.value(lists) for m in metrics}


def evaluate_many(model, thetas: np.ndarray, qs: QuerySet, metrics, *, chunk: int = 256) -> dict[str, np.ndarray]:
    """Mean metric over queries for K parameter vectors, (K,) per metric, ``chunk`` vectors at a
    time (fewer when their padded scores would exceed :data:`EVAL_ELEMENTS`)."""
    thetas = np.atleast_2d(thetas)
    K = len(thetas)
    out = {str(m): np.empty(K) for m in metrics}
    Q, N = qs.yp.shape
    chunk = max(1, min(chunk, EVAL_ELEMENTS // max(1, Q * N)))
    for a in range(0, K, chunk):
        th = thetas[a:a + chunk]
        S = qs.padded_scores(model.score_many(th, qs.X)).reshape(-1, N)       # (k*Q, N)
        lengths = np.tile(qs.lengths, len(th))
        order = rank_by_score(S, lengths)
        grades = np.take_along_axis(np.tile(qs.yp, (len(th), 1)), order, axis=1)
        lists = RankedLists.from_grades(grades, np.tile(qs.rel_counts, (len(th), 1)), lengths)
        for m in metrics:
            out[str(m)][a:a + len(th)] = m.value(lists).reshape(len(th), Q).mean(axis=1)
    return out


@dataclass
class TrainResult:
    """Outcome of :func:`train_ranker`.

    Attributes
    ----------
    theta : ndarray (P,)
        Parameters after the last epoch.
    best : dict
        Per validation metric: ``{"epoch", "value", "theta"}`` of its best mean validation value
        (first on ties; epoch 0 is the initial model).
    history : list of dict
        Per epoch: ``epoch``, ``learning_rate``, ``restarts``, ``train:<objective>`` and, per
        tracked metric M, ``train:M`` and ``valid:M``.
    restarts : int
    best_train : dict
        ``{"epoch", "value", "theta"}`` of the best training objective.
    stopped_epoch : int
        Last epoch trained.
    stop_reason : str
        ``"patience"``, ``"converged"`` or ``"epoch_cap"``.
    """

    theta: np.ndarray
    best: dict
    history: list
    restarts: int
    objective: str
    learning_rate: float
    seed: int
    best_train: dict = field(default_factory=dict)
    stopped_epoch: int = 0
    stop_reason: str = "epoch_cap"


def check_objective(objective: str, metric) -> None:
    """Raise ParameterError unless ``objective`` can train for ``metric`` (a swap delta, and for
    SoftRank and ApproxRank a ``SMOOTH_FORM``)."""
    if objective not in OBJECTIVES:
        raise ParameterError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    check_lambda_metric(metric)
    if objective != "lambdarank" and metric.SMOOTH_FORM not in ("positional", "pairwise"):
        raise ParameterError(f"{objective} cannot train for {metric!s}: it needs a position-additive or "
                             "pairwise metric (SMOOTH_FORM), e.g. nDCG, P@k, RBP, AP, GAP")


def _gradient_function(objective: str, metric, sigma: float, sigma_s: float, alpha: float, beta: float):
    """(scores, grades, ctx, rows, lengths) -> (b, n) ascent direction of the objective."""
    check_objective(objective, metric)
    if objective == "lambdarank":
        return lambda s, y, ctx, rows, lengths: lambda_gradients(s, y, ctx, rows=rows, lengths=lengths,
                                                                 sigma=sigma)
    if objective == "softrank":
        from maxent.ltr.softrank import softrank_gradients

        return lambda s, y, ctx, rows, lengths: softrank_gradients(s, y, ctx, rows=rows, lengths=lengths,
                                                                   sigma_s=sigma_s)
    from maxent.ltr.approx import approxrank_gradients

    return lambda s, y, ctx, rows, lengths: approxrank_gradients(s, y, ctx, rows=rows, lengths=lengths,
                                                                 alpha=alpha, beta=beta)


def train_ranker(model, train: QuerySet, metric, *, valid: QuerySet | None = None, track=(),
                     epochs: int = 100, learning_rate: float = 1e-2, sigma: float = 1.0,
                     batch_size: int = 1, seed: int = 0, restart_patience: int | None = None,
                     lr_decay: bool = False, theta0: np.ndarray | None = None,
                     callback=None, objective: str = "lambdarank", sigma_s: float = 1.0,
                     alpha: float = 100.0, beta: float = 10.0, patience: int | None = None,
                     converge_tol: float | None = None, converge_window: int = 5) -> TrainResult:
    """Train ``model`` for ``metric`` with LambdaRank, SoftRank or ApproxRank gradients
    (``train_lambdarank`` is the same function).

    Parameters
    ----------
    model : LinearModel or TwoLayerNet
    train : QuerySet
    metric : metric object
        The training objective (refused unless :func:`check_objective` accepts it).
    valid : QuerySet, optional
        Validation set; without it, selection uses the training set.
    track : sequence of metric objects
        Metrics recorded per epoch on train and validation and used for selection.
    epochs, learning_rate, sigma, batch_size, seed
        Epoch cap, step size eta, RankNet sigma, queries per update, random seed.
    restart_patience : int, optional
        Re-initialise at random when the training objective has not improved for this many
        epochs (Yilmaz & Robertson 2010 section 5.2 uses 16).
    lr_decay : bool
        After an epoch that lowers the training objective, multiply the learning rate by 0.8
        with probability 0.3 (Donmez et al. 2009 section 7).
    theta0 : ndarray, optional
        Initial parameters (default: ``model.init`` from the seed).
    callback : callable, optional
        Called with the history row after each epoch.
    objective : {"lambdarank", "softrank", "approxrank"}
    sigma_s : float
        SoftRank score-noise standard deviation.
    alpha, beta : float
        ApproxRank position and truncation scales.
    patience : int, optional
        Stop when no selection metric has improved on validation for this many epochs.
    converge_tol, converge_window : float, int
        Stop once the mean training objective of the last ``converge_window`` epochs differs
        from that of the window before by less than ``converge_tol`` (windows after the last
        restart; ``None``: off).

    Returns
    -------
    TrainResult
    """
    if epochs < 0 or not learning_rate > 0 or batch_size < 1:
        raise ParameterError("epochs >= 0, learning_rate > 0 and batch_size >= 1 are required")
    if patience is not None and patience < 1:
        raise ParameterError(f"patience must be >= 1 (or None for no early stopping), got {patience}")
    if converge_tol is not None and not (converge_tol > 0 and converge_window >= 1):
        raise ParameterError(f"converge_tol must be > 0 and converge_window >= 1, got {converge_tol}, "
                             f"{converge_window}")
    grad_fn = _gradient_function(objective, metric, sigma, sigma_s, alpha, beta)
    rng = np.random.default_rng(seed)
    theta = model.init(rng) if theta0 is None else np.array(theta0, dtype=np.float64)
    ctx = train.context(metric)
    obj = str(metric)
    track = list(track)
    select = track or [metric]                   # metrics whose validation best is kept
    sel_set = valid if valid is not None else train
    lr = float(learning_rate)
    best: dict = {}
    best_train: dict = {}
    history: list = []
    restarts = 0
    since_best = 0
    since_valid = 0                              # epochs since any selection metric improved
    Q = train.n_queries

    def record(epoch):
        nonlocal since_valid
        row = {"epoch": epoch, "learning_rate": lr, "restarts": restarts}
        tv = evaluate(model, theta, train, [metric, *track])
        row[f"train:{obj}"] = float(tv[obj].mean())
        if not best_train or row[f"train:{obj}"] > best_train["value"]:
            best_train.update(epoch=epoch, value=row[f"train:{obj}"], theta=theta.copy())
        for m in track:
            row[f"train:{m}"] = float(tv[str(m)].mean())
        vv = evaluate(model, theta, sel_set, select)
        since_valid += 1
        for m in select:
            v = float(vv[str(m)].mean())
            row[f"valid:{m}"] = v
            if str(m) not in best or v > best[str(m)]["value"]:
                best[str(m)] = {"epoch": epoch, "value": v, "theta": theta.copy()}
                since_valid = 0
        history.append(row)
        if callback is not None:
            callback(row)
        return row[f"train:{obj}"]

    prev_obj = record(0)
    best_obj = prev_obj
    since_restart = [prev_obj]                   # training objective of the epochs since the last restart
    stopped, reason = 0, "epoch_cap"
    for epoch in range(1, epochs + 1):
        perm = rng.permutation(Q)
        for a in range(0, Q, batch_size):
            rows = perm[a:a + batch_size]
            n = int(train.lengths[rows].max())
            Xb = train.Xp[rows, :n].reshape(-1, train.Xp.shape[-1])   # (b * n, F)
            s = model.score(theta, Xb).reshape(len(rows), n)
            lam = grad_fn(s, train.yp[rows, :n], ctx, rows, train.lengths[rows])
            theta += lr * model.gradient(theta, Xb, lam.ravel())
        if not np.all(np.isfinite(theta)):
            raise ParameterError(f"training diverged at epoch {epoch} (learning rate {lr} too large?)")
        cur = record(epoch)
        stopped = epoch
        since_restart.append(cur)
        if patience is not None and since_valid >= patience:
            reason = "patience"
            break
        if converge_tol is not None and len(since_restart) > 2 * converge_window:
            last, before = since_restart[-converge_window:], since_restart[-2 * converge_window:-converge_window]
            if abs(np.mean(last) - np.mean(before)) < converge_tol:
                reason = "converged"
                break
        if cur > best_obj:
            best_obj, since_best = cur, 0
        else:
            since_best += 1
        if lr_decay and cur < prev_obj and rng.random() < 0.3:
            lr *= 0.8
        prev_obj = cur
        if restart_patience is not None and since_best >= restart_patience and epoch < epochs:
            theta = model.init(rng)
            restarts += 1
            since_best = 0
            best_obj = -np.inf
            since_restart = []                   # the restarted weights are first scored after the next epoch
    return TrainResult(theta, best, history, restarts, obj, float(learning_rate), seed, best_train,
                       stopped, reason)


train_lambdarank = train_ranker
