"""LightGBM lambdarank as a peer (the ``bench`` extra, imported lazily): the sanity anchor of
``analysis.learning`` and ``analysis.active_eval``."""
from __future__ import annotations

import numpy as np

from maxent.letor import RankingData
from maxent.ltr.lambdas import rank_by_score
from maxent.ranked import RankedLists

__all__ = ["lightgbm_lambdarank", "evaluate_scores"]


def evaluate_scores(scores: np.ndarray, data: RankingData, metric, n_levels: int | None = None) -> np.ndarray:
    """Per-query values (Q,) of ``metric`` for flat document scores (D,) on ``data``."""
    Xp, yp, lengths = data.padded()
    Q, N = yp.shape
    pos = np.arange(data.n_docs) - np.repeat(data.offsets[:-1], data.sizes)
    S = np.full((Q, N), -np.inf)
    S[data.query_index, pos] = scores
    order = rank_by_score(S, lengths)
    lists = RankedLists.from_grades(np.take_along_axis(yp, order, axis=1), data.rel_counts(n_levels), lengths)
    return metric.value(lists)


def lightgbm_lambdarank(train: RankingData, valid: RankingData | None = None, *, num_trees: int = 100,
                        learning_rate: float = 0.1, num_leaves: int = 31, min_data_in_leaf: int = 50,
                        truncation: int = 30, seed: int = 0, early_stopping: int | None = 20,
                        eval_at: int = 10, num_threads: int = 1):
    """Train LightGBM's lambdarank (exponential gains 2^g - 1, its default ``label_gain``).

    Defaults follow LightGBM's ``examples/lambdarank/train.conf`` (the source of the Yahoo
    sample): 100 trees, learning rate 0.1, 31 leaves, min_data_in_leaf 50, with early stopping
    on ``valid`` by NDCG@``eval_at`` when given. Returns the fitted ``lightgbm.Booster``.
    """
    import lightgbm as lgb

    params = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [eval_at],
              "learning_rate": learning_rate, "num_leaves": num_leaves, "min_data_in_leaf": min_data_in_leaf,
              "lambdarank_truncation_level": truncation, "seed": seed, "deterministic": True,
              "num_threads": num_threads, "verbose": -1, "force_row_wise": True}
    dtr = lgb.Dataset(train.X, train.y, group=train.sizes)
    valid_sets, callbacks = [], []
    if valid is not None:
        valid_sets = [lgb.Dataset(valid.X, valid.y, group=valid.sizes, reference=dtr)]
        if early_stopping:
            callbacks.append(lgb.early_stopping(early_stopping, verbose=False))
    return lgb.train(params, dtr, num_boost_round=num_trees, valid_sets=valid_sets, callbacks=callbacks)
