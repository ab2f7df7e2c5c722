r"""LambdaMART for any metric: LightGBM and XGBoost custom objectives and evaluation metrics.

LambdaMART (Burges 2010) fits each tree to the per-document gradient and Hessian of the
:math:`|\Delta M|`-weighted pairwise logistic loss, swap deltas held fixed: for every pair
:math:`l_i > l_j` of a query ranked by the current scores,

.. math:: \rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad
          g_i = -\sum_j \sigma |\Delta M_{ij}| \rho_{ij} + \sum_j \sigma |\Delta M_{ji}| \rho_{ji},
          \qquad h_i = \sum_{j} \sigma^2 |\Delta M_{ij}| \rho_{ij} (1 - \rho_{ij}).

:math:`g = -\lambda` of :func:`maxent.ltr.lambdas.lambda_gradients` (the peers minimise);
:math:`\Delta M` is the metric object's, so every metric with a swap delta is a target.

Conventions against the peers' built-in objectives (LightGBM ``LambdarankNDCG``, XGBoost
``lambdarank_obj``):

* ties are ranked by input order (a stable sort, as both peers);
* ``sigma`` = LightGBM ``sigmoid`` (XGBoost: 1); ``truncation`` = LightGBM
  ``lambdarank_truncation_level`` = XGBoost ``lambdarank_num_pair_per_sample`` with ``topk``;
* LightGBM divides the nDCG delta by the ideal DCG at the truncation level:
  ``ideal_cutoff=truncation`` reproduces it;
* ``norm`` scales a query by :math:`\log_2(1 + S)/S`, S = the sum of pair lambdas; the peers'
  score normalisation (dividing by :math:`0.01 + |s_i - s_j|`) is not applied, so compare with
  ``lambdarank_norm=False`` / ``lambdarank_normalization=False,
  lambdarank_score_normalization=False``;
* the sigmoid is exact (LightGBM tabulates it: equal on the first iteration, within the table
  resolution after); XGBoost's Hessian is twice ours (``hessian_factor=2``); gradients are
  float64 (the peers': float32);
* LightGBM weights multiply each document's gradient and Hessian; XGBoost's per-query weights
  multiply the query's, times (queries / sum of weights).

The evaluation metrics average ``metric.value`` over queries; a query without a relevant
document scores 0 (trec_eval; LightGBM's ``ndcg`` gives it 1). Neither peer is imported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maxent.errors import MaxEntError, ParameterError
from maxent.ltr.lambdas import DeltaContext, check_lambda_metric, lambda_gradients, rank_by_score
from maxent.metrics._kernels import ideal_dcg
from maxent.ranked import RankedLists

__all__ = ["QueryGroups", "LambdaMARTObjective", "metric_values", "lightgbm_objective",
           "lightgbm_metric", "lightgbm_ranker_objective", "lightgbm_ranker_metric", "xgboost_objective",
           "xgboost_metric", "BoostingResult", "train_lambdamart", "LIGHTGBM_INSTALL", "XGBOOST_INSTALL"]

LIGHTGBM_INSTALL = 'LightGBM is an optional extra: pip install -e ".[lightgbm]"'
XGBOOST_INSTALL = 'XGBoost is an optional extra: pip install -e ".[xgboost]"'


@dataclass(frozen=True, eq=False)
class QueryGroups:
    """Documents grouped by query in contiguous groups, as the boosting libraries hold them.

    Attributes
    ----------
    labels : ndarray, shape (D,), int64
    offsets : ndarray, shape (Q + 1,), int64
        Query q owns documents ``offsets[q]:offsets[q + 1]`` (XGBoost's ``group_ptr``).
    rows, cols : ndarray, shape (D,)
        Position of every document in the padded (Q, N) layout.
    grades : ndarray, shape (Q, N), int64
        Padded grades, -1 after each query's documents.
    lengths : ndarray, shape (Q,)
        Documents per query (LightGBM's ``group``).
    rel_counts : ndarray, shape (Q, L)
        Documents of each grade per query.
    """

    labels: np.ndarray
    offsets: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    grades: np.ndarray
    lengths: np.ndarray
    rel_counts: np.ndarray

    @classmethod
    def from_sizes(cls, labels, sizes, n_levels: int | None = None) -> "QueryGroups":
        """From labels (D,) and group sizes (Q,) (LightGBM ``group`` / ``.query`` file)."""
        sizes = np.asarray(sizes, dtype=np.int64).ravel()
        return cls.from_offsets(labels, np.concatenate(([0], np.cumsum(sizes))), n_levels)

    @classmethod
    def from_offsets(cls, labels, offsets, n_levels: int | None = None) -> "QueryGroups":
        """From labels (D,) and group boundaries (Q + 1,) (XGBoost ``group_ptr``).

        ``n_levels``: grade levels L of ``rel_counts`` (default largest label + 1); GAP and ERR
        depend on it, so use the same L for training, validation and test.
        """
        raw = np.asarray(labels, dtype=np.float64).ravel()
        offsets = np.asarray(offsets, dtype=np.int64).ravel()
        if len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(raw) or np.any(np.diff(offsets) <= 0):
            raise ParameterError(f"query groups must be positive sizes summing to the {len(raw)} labels; "
                                 f"got boundaries {offsets[:5].tolist()}...{offsets[-3:].tolist()}")
        bad = ~np.isfinite(raw) | (raw < 0) | (raw != np.round(raw))
        if bad.any():
            i = int(np.argmax(bad))
            raise ParameterError(f"labels must be non-negative integer grades; document {i} has {float(raw[i]):g}")
        y = raw.astype(np.int64)
        sizes = np.diff(offsets)
        Q, N = len(sizes), int(sizes.max())
        rows = np.repeat(np.arange(Q), sizes)
        cols = np.arange(len(y)) - offsets[rows]
        grades = np.full((Q, N), -1, dtype=np.int64)
        grades[rows, cols] = y
        L = int(y.max(initial=0)) + 1
        if n_levels is not None:
            if int(n_levels) < L:
                raise ParameterError(f"n_levels={n_levels} but a label is {L - 1}")
            L = int(n_levels)
        rel_counts = np.bincount(rows * L + y, minlength=Q * L).reshape(Q, L)
        return cls(y, offsets, rows, cols, grades, sizes, rel_counts)

    @property
    def n_queries(self) -> int:
        return len(self.lengths)

    def pad(self, scores) -> np.ndarray:
        """Flat scores (D,) -> padded (Q, N), 0 in the padding."""
        s = np.asarray(scores, dtype=np.float64).ravel()
        if s.shape != self.labels.shape:
            raise ParameterError(f"got {s.size} scores for {self.labels.size} documents")
        out = np.zeros(self.grades.shape)
        out[self.rows, self.cols] = s
        return out


def metric_values(metric, scores, groups: QueryGroups) -> np.ndarray:
    """Per-query values (Q,) of ``metric`` for the documents ranked by ``scores`` (D,); ties: input order."""
    S = groups.pad(scores)
    order = rank_by_score(S, groups.lengths)
    ys = np.take_along_axis(groups.grades, order, axis=1)
    lists = RankedLists.from_grades(ys, groups.rel_counts, groups.lengths)
    return np.asarray(metric.value(lists), dtype=np.float64)


class LambdaMARTObjective:
    r"""Per-document gradient and Hessian of LambdaMART for one metric (module docstring).

    Parameters
    ----------
    metric : metric object
        Any metric with a swap delta (nDCG, DCG, P@k, R@k, AP, RR, GAP, ERR, RBP).
    sigma : float
        RankNet sigma (LightGBM ``sigmoid``), > 0.
    truncation : int, optional
        Only pairs with a document in the top ``truncation`` ranks; default all pairs.
    norm : bool
        Scale each query by :math:`\log_2(1 + S) / S`.
    ideal_cutoff : int, optional
        nDCG only: divide the DCG deltas by the ideal DCG at this depth (LightGBM:
        ``lambdarank_truncation_level``); applied after ``norm``.
    hessian_factor : float
        Multiplies the Hessian (XGBoost uses 2).
    """

    def __init__(self, metric, *, sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                 ideal_cutoff: int | None = None, hessian_factor: float = 1.0):
        check_lambda_metric(metric)                     # raises for metrics without a swap delta
        if not sigma > 0:
            raise ParameterError(f"sigma must be > 0, got {sigma}")
        if truncation is not None and int(truncation) < 1:
            raise ParameterError(f"truncation must be >= 1, got {truncation}")
        if ideal_cutoff is not None:
            if getattr(type(metric), "NAME", None) != "nDCG":
                raise ParameterError(f"ideal_cutoff applies to nDCG only, not {metric!s}")
            if int(ideal_cutoff) < 1:
                raise ParameterError(f"ideal_cutoff must be >= 1, got {ideal_cutoff}")
        if not hessian_factor > 0:
            raise ParameterError(f"hessian_factor must be > 0, got {hessian_factor}")
        self.metric = metric
        self.sigma = float(sigma)
        self.truncation = None if truncation is None else int(truncation)
        self.norm = bool(norm)
        self.ideal_cutoff = None if ideal_cutoff is None else int(ideal_cutoff)
        self.hessian_factor = float(hessian_factor)
        self._cache: tuple | None = None

    def __repr__(self) -> str:
        return (f"LambdaMARTObjective({self.metric!s}, sigma={self.sigma:g}, truncation={self.truncation}, "
                f"norm={self.norm}, ideal_cutoff={self.ideal_cutoff}, hessian_factor={self.hessian_factor:g})")

    def _prepare(self, groups: QueryGroups):
        """(context, per-query scale or None), cached for the last groups seen."""
        if self._cache is not None and self._cache[0] is groups:
            return self._cache[1], self._cache[2]
        context = DeltaContext(self.metric, groups.rel_counts)
        scale = None
        if self.ideal_cutoff is not None:
            m = self.metric
            gains = np.asarray(m.gains(groups.rel_counts.shape[1]), dtype=np.float64)
            own_cut = m.cutoff if getattr(m, "ideal_cut", False) else None
            own = ideal_dcg(groups.rel_counts, gains, own_cut, m.discount)
            wanted = ideal_dcg(groups.rel_counts, gains, self.ideal_cutoff, m.discount)
            scale = np.divide(own, wanted, out=np.zeros_like(own), where=wanted > 0)
        self._cache = (groups, context, scale)
        return context, scale

    def gradients(self, scores, groups: QueryGroups, weights=None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian per document, both (D,), in data order (descent sign); ``weights``
        (D,) multiplies both."""
        context, scale = self._prepare(groups)
        lam, hess = _lambda_kernel(groups.pad(scores), groups.grades, context, groups.lengths,
                                   self.sigma, self.truncation, self.norm)
        if scale is not None:
            lam *= scale[:, None]
            hess *= scale[:, None]
        grad = -lam[groups.rows, groups.cols]
        hess = hess[groups.rows, groups.cols]
        if self.hessian_factor != 1.0:
            hess *= self.hessian_factor
        if weights is not None:
            w = np.asarray(weights, dtype=np.float64).ravel()
            if w.shape != grad.shape:
                raise ParameterError(f"got {w.size} weights for {grad.size} documents")
            grad *= w
            hess *= w
        return grad, hess


def _lambda_kernel(scores, grades, context, lengths, sigma, truncation, norm):
    """Lambdas (ascent) and Hessians (Q, N), queries batched by ceil(log2 length) so that short
    queries are not padded to the longest and each bucket gets its own kernel method."""
    Q, N = scores.shape
    bucket = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    levels = np.unique(bucket)
    kw = dict(sigma=sigma, truncation=truncation, norm=norm, return_hessian=True, method="auto")
    if len(levels) == 1:
        return lambda_gradients(scores, grades, context, lengths=lengths, **kw)
    lam, hess = np.zeros((Q, N)), np.zeros((Q, N))
    for level in levels:
        rows = np.flatnonzero(bucket == level)
        n = int(lengths[rows].max())
        lam[rows, :n], hess[rows, :n] = lambda_gradients(scores[rows, :n], grades[rows, :n], context, rows=rows,
                                                         lengths=lengths[rows], **kw)
    return lam, hess


class _PerDataset:
    """QueryGroups of a library's data object, built once per object (held by identity)."""

    def __init__(self, build, n_levels):
        self._build = build
        self._n_levels = n_levels
        self._key = None
        self._groups = None

    def __call__(self, data) -> QueryGroups:
        if self._key is None or self._key() is not data:
            import weakref

            self._groups = self._build(data, self._n_levels)
            try:
                self._key = weakref.ref(data)
            except TypeError:                               # pragma: no cover
                self._key = lambda: data
        return self._groups


def _lgb_groups(data, n_levels) -> QueryGroups:
    group = data.get_group()
    if group is None:
        raise ParameterError("the LightGBM Dataset has no query groups: pass group=sizes to lightgbm.Dataset")
    return QueryGroups.from_sizes(data.get_label(), group, n_levels)


def _lgb_weight(data):
    """Per-document weights of a LightGBM Dataset (None without), constructed or not."""
    try:
        return data.get_weight()
    except Exception:                   # LightGBM raises on an unconstructed Dataset
        return getattr(data, "weight", None)


def _xgb_groups(dmat, n_levels) -> QueryGroups:
    ptr = dmat.get_uint_info("group_ptr")
    if ptr is None or len(ptr) < 2:
        raise ParameterError("the XGBoost DMatrix has no query groups: "
                             "pass qid= or group= to xgboost.DMatrix")
    return QueryGroups.from_offsets(dmat.get_label(), ptr, n_levels)


def lightgbm_objective(metric, *, sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                       ideal_cutoff: int | None = None, n_levels: int | None = None):
    """A LightGBM custom objective ``f(preds, train_data) -> (grad, hess)`` for ``metric``.

    ``params["objective"]`` of ``lightgbm.train`` (LightGBM >= 4); the Dataset needs ``group``.
    Parameters as :class:`LambdaMARTObjective`, ``n_levels`` as :meth:`QueryGroups.from_offsets`.
    LightGBM's ``lambdarank`` with ``lambdarank_norm=False`` is metric ``nDCG(gain=exp)``,
    ``truncation`` = ``ideal_cutoff`` = ``lambdarank_truncation_level``, ``sigma`` = ``sigmoid``.
    """
    obj = LambdaMARTObjective(metric, sigma=sigma, truncation=truncation, norm=norm, ideal_cutoff=ideal_cutoff)
    groups = _PerDataset(_lgb_groups, n_levels)

    def objective(preds, train_data):
        return obj.gradients(preds, groups(train_data), _lgb_weight(train_data))

    objective.objective = obj
    return objective


def lightgbm_ranker_objective(metric, *, sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                              ideal_cutoff: int | None = None, n_levels: int | None = None):
    """The same objective for ``LGBMRanker(objective=...)``: ``f(y_true, y_pred, weight, group) ->
    (grad, hess)``, ``group`` = query sizes. Parameters as :func:`lightgbm_objective`."""
    obj = LambdaMARTObjective(metric, sigma=sigma, truncation=truncation, norm=norm, ideal_cutoff=ideal_cutoff)
    groups = _PerArrays(n_levels)

    def objective(y_true, y_pred, weight, group):
        return obj.gradients(y_pred, groups(y_true, group), weight)

    objective.objective = obj
    return objective


def lightgbm_ranker_metric(metric, name: str | None = None, n_levels: int | None = None):
    """The custom metric for ``LGBMRanker.fit(..., eval_metric=...)``: ``f(y_true, y_pred,
    weight, group) -> (name, mean value, True)`` (weights are ignored)."""
    label = name or str(metric)
    groups = _PerArrays(n_levels)

    def feval(y_true, y_pred, weight, group):
        return label, float(metric_values(metric, y_pred, groups(y_true, group)).mean()), True

    return feval


class _PerArrays:
    """QueryGroups of (labels, sizes) arrays, rebuilt only when their contents change."""

    def __init__(self, n_levels):
        self.n_levels = n_levels
        self._key = None
        self._groups = None

    def __call__(self, labels, sizes) -> QueryGroups:
        if sizes is None:
            raise ParameterError("no query groups: pass group=sizes to LGBMRanker.fit")
        labels, sizes = np.asarray(labels), np.asarray(sizes)
        key = self._key
        if key is None or not (np.array_equal(key[0], labels) and np.array_equal(key[1], sizes)):
            self._groups = QueryGroups.from_sizes(labels, sizes, self.n_levels)
            self._key = (labels.copy(), sizes.copy())
        return self._groups


def lightgbm_metric(metric, name: str | None = None, n_levels: int | None = None):
    """A LightGBM custom evaluation ``f(preds, eval_data) -> (name, mean value, True)`` for ``feval=``."""
    label = name or str(metric)
    groups = _PerDataset(_lgb_groups, n_levels)

    def feval(preds, eval_data):
        return label, float(metric_values(metric, preds, groups(eval_data)).mean()), True

    return feval


def xgboost_objective(metric, *, sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                      ideal_cutoff: int | None = None, hessian_factor: float = 2.0,
                      n_levels: int | None = None):
    """An XGBoost custom objective ``f(predt, dtrain) -> (grad, hess)`` for ``metric``.

    ``obj=`` of ``xgboost.train``; the DMatrix needs query groups (``qid=`` or ``group=``).
    ``rank:map`` is metric ``AP`` on binary labels with ``lambdarank_pair_method="topk"``,
    ``lambdarank_num_pair_per_sample`` = ``truncation``, both normalisations off; ``rank:ndcg``
    is ``nDCG(gain=exp)`` with ``truncation`` = ``ideal_cutoff`` = ``lambdarank_num_pair_per_sample``.
    """
    obj = LambdaMARTObjective(metric, sigma=sigma, truncation=truncation, norm=norm, ideal_cutoff=ideal_cutoff,
                              hessian_factor=hessian_factor)
    groups = _PerDataset(_xgb_groups, n_levels)

    def objective(predt, dtrain):
        g = groups(dtrain)
        w = dtrain.get_weight()
        if w is not None and len(w):                 # one weight per query, normalised to mean 1
            w = np.asarray(w, dtype=np.float64)
            if len(w) != g.n_queries:
                raise ParameterError(f"XGBoost ranking weights are per query: got {len(w)} for {g.n_queries} queries")
            w = (w * (len(w) / w.sum()))[g.rows]
        else:
            w = None
        return obj.gradients(predt, g, w)

    objective.objective = obj
    return objective


def xgboost_metric(metric, name: str | None = None, n_levels: int | None = None):
    """An XGBoost custom metric ``f(predt, dtrain) -> (name, mean value)`` for ``custom_metric=``
    (with ``maximize=True``; ``disable_default_eval_metric=1`` to drop the default ``rmse``)."""
    label = name or str(metric)
    groups = _PerDataset(_xgb_groups, n_levels)

    def custom_metric(predt, dtrain):
        return label, float(metric_values(metric, predt, groups(dtrain)).mean())

    return custom_metric


def import_lightgbm():
    """``lightgbm``, or a :class:`~maxent.errors.MaxEntError` saying how to install it."""
    try:
        import lightgbm
    except ImportError as e:
        raise MaxEntError(LIGHTGBM_INSTALL) from e
    return lightgbm


@dataclass(frozen=True, eq=False)
class BoostingResult:
    """A LambdaMART run: the booster, per-iteration history and per-metric selection.

    Attributes
    ----------
    booster : lightgbm.Booster
    history : list of dict
        Per iteration: ``epoch`` (trees), ``train:<metric>`` and ``valid:<metric>`` for every
        tracked metric, ``restarts`` (always 0, the nets' record format).
    best : dict
        ``str(metric)`` -> ``{"epoch", "value"}`` of the best validation value (first on ties;
        training values without a validation set).
    """

    booster: object
    history: list
    best: dict

    def predict(self, X, metric=None) -> np.ndarray:
        """Scores (D,) with the trees selected for ``metric`` (all trees when None)."""
        k = None if metric is None else int(self.best[str(metric)]["epoch"])
        return self.booster.predict(X, num_iteration=k)


def train_lambdamart(train, metric, *, valid=None, track=(), num_trees: int = 100, learning_rate: float = 0.1,
                     num_leaves: int = 31, min_data_in_leaf: int = 20, sigma: float = 1.0,
                     truncation: int | None = None, seed: int = 0, n_levels: int | None = None,
                     num_threads: int = 1) -> BoostingResult:
    """LambdaMART (LightGBM trees, our lambdas for ``metric``) with selection per validation metric.

    Parameters
    ----------
    train, valid : maxent.letor.RankingData
    metric : metric object with a swap delta (the training objective).
    track : metric objects evaluated after every tree, each selecting its own best iteration
        on ``valid`` (Yilmaz & Robertson 2010 section 5).
    num_trees, learning_rate, num_leaves, min_data_in_leaf, seed, num_threads :
        LightGBM parameters.
    sigma, truncation : as :class:`LambdaMARTObjective`.
    n_levels : grade levels L for the metrics' ``rel_counts`` (same for every set).
    """
    lgb = import_lightgbm()
    L = n_levels or int(max(train.y.max(), 0 if valid is None else valid.y.max())) + 1
    tracked = list({str(m): m for m in [metric, *track]}.values())
    params = {"objective": lightgbm_objective(metric, sigma=sigma, truncation=truncation, n_levels=L),
              "learning_rate": learning_rate, "num_leaves": num_leaves, "min_data_in_leaf": min_data_in_leaf,
              "seed": seed, "deterministic": True, "num_threads": num_threads, "verbose": -1,
              "force_row_wise": True, "metric": "None"}
    dtr = lgb.Dataset(train.X, train.y.astype(np.float64), group=np.diff(train.offsets), free_raw_data=False)
    sets, names = [dtr], ["train"]
    if valid is not None:
        sets.append(lgb.Dataset(valid.X, valid.y.astype(np.float64), group=np.diff(valid.offsets),
                                reference=dtr, free_raw_data=False))
        names.append("valid")
    rec: dict = {}
    booster = lgb.train(params, dtr, num_boost_round=num_trees, valid_sets=sets, valid_names=names,
                        feval=[lightgbm_metric(m, n_levels=L) for m in tracked],
                        callbacks=[lgb.record_evaluation(rec)])
    history = [{"epoch": i + 1, "restarts": 0,
                **{f"{s}:{m}": float(rec[s][str(m)][i]) for s in names for m in tracked}}
               for i in range(num_trees)]
    best = {}
    for m in tracked:
        v = np.asarray(rec[names[-1]][str(m)])
        best[str(m)] = {"epoch": int(np.argmax(v)) + 1, "value": float(v.max())}
    return BoostingResult(booster, history, best)
