"""The synthetic learning-to-rank generator (maxent.synthetic): seeded, fast, web-like labels and
query lengths, and a default difficulty that a trained ranker leaves mid-range."""
import dataclasses
import time

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.letor import split_queries, standardize
from maxent.metrics import parse_measure
from maxent.synthetic import DEFAULT_GRADE_FRACTIONS, artificial, make_synthetic


def test_seeded_and_deterministic():
    a, b = make_synthetic(300, seed=3), make_synthetic(300, seed=3)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y) and np.array_equal(a.offsets, b.offsets)
    c = make_synthetic(300, seed=4)
    assert c.n_docs != a.n_docs or not np.array_equal(c.X[:50], a.X[:50])


def test_task_seed_fixes_the_problem_seed_the_sample():
    """Same task_seed: the same grade thresholds, so the grade shares agree; the samples differ."""
    a = make_synthetic(3000, seed=1, task_seed=9)
    b = make_synthetic(3000, seed=2, task_seed=9)
    assert not np.array_equal(a.sizes[:100], b.sizes[:100])
    pa, pb = (np.bincount(d.y, minlength=5) / d.n_docs for d in (a, b))
    assert np.abs(pa - pb).max() < 0.02


def test_ten_thousand_queries_in_seconds():
    t0 = time.perf_counter()
    d = make_synthetic(10_000)
    assert time.perf_counter() - t0 < 30          # about 3 s on one core; generous for a shared machine
    assert d.n_queries == 10_000 and d.n_features == 32 and d.X.dtype == np.float64


def test_label_distribution_and_query_lengths():
    d = make_synthetic(10_000, seed=5)
    share = np.bincount(d.y, minlength=5) / d.n_docs
    assert set(np.unique(d.y)) == {0, 1, 2, 3, 4}
    assert share[0] > 0.5                            # most documents non-relevant
    # min_relevant raises a few grade-0 documents to 1: shares within 2 points of the targets
    assert np.abs(share - np.asarray(DEFAULT_GRADE_FRACTIONS)).max() < 0.02
    sizes = d.sizes
    assert sizes.min() == 10 and sizes.max() == 200
    assert 50 < sizes.mean() < 75                     # log-uniform on [10, 200]: mean 63.4
    # the per-query shift spreads the share of relevant documents between queries
    rel_share = np.add.reduceat((d.y >= 1).astype(float), d.offsets[:-1]) / sizes
    assert rel_share.std() > 0.15
    # every query has a relevant document (min_relevant=1), and without it some have none
    assert (np.add.reduceat(d.y >= 1, d.offsets[:-1]) >= 1).all()
    raw = make_synthetic(10_000, seed=5, min_relevant=0)
    assert (np.add.reduceat(raw.y >= 1, raw.offsets[:-1]) == 0).any()
    assert np.array_equal(raw.X, d.X)


def test_features_informative_redundant_noise():
    """Informative and redundant features correlate with the grade; the noise block does not."""
    d = make_synthetic(2000, feature_noise=0.5, relevance="linear", seed=2)
    Xc = d.X - d.X.mean(axis=0)
    yc = d.y - d.y.mean()
    corr = np.abs(Xc.T @ yc) / np.sqrt((Xc ** 2).sum(axis=0) * (yc ** 2).sum())
    assert corr[:16].max() > 0.2
    assert corr[16:].max() < 0.02


def _fit_test_ndcg10(data, kind="linear", epochs=12):
    from maxent.ltr.models import make_model
    from maxent.ltr.train import QuerySet, evaluate, train_ranker

    tr, va, te = standardize(*split_queries(data, (0.6, 0.2, 0.2), seed=0))
    qtr, qva, qte = (QuerySet(x, 5) for x in (tr, va, te))
    m = dataclasses.replace(parse_measure("nDCG@10"), gain="exp")
    model = make_model(kind, tr.n_features)
    res = train_ranker(model, qtr, m, valid=qva, track=[m], epochs=epochs, learning_rate=0.01, patience=4, seed=0)
    best = res.best[str(m)]
    untrained = evaluate(model, model.init(np.random.default_rng(0)), qte, [m])[str(m)].mean()   # epoch 0
    return evaluate(model, best["theta"], qte, [m])[str(m)].mean(), untrained, best["epoch"]


def test_default_difficulty_is_mid_range():
    """A quick LambdaRank fit on the default setting lands mid-range (0.4-0.7 test nDCG@10), well
    above an untrained ranker and far from the ceiling of 1 (ranking by the latent relevance)."""
    value, untrained, epoch = _fit_test_ndcg10(make_synthetic(1500, seed=0))
    assert epoch > 0
    assert 0.4 < value < 0.7
    assert value > untrained + 0.1


def test_feature_noise_sets_difficulty():
    easy, _, _ = _fit_test_ndcg10(make_synthetic(800, seed=1, feature_noise=0.25), epochs=8)
    hard, _, _ = _fit_test_ndcg10(make_synthetic(800, seed=1, feature_noise=4.0), epochs=8)
    assert easy > hard + 0.1


@pytest.mark.parametrize("kw, word", [
    ({"relevance": "quartic"}, "relevance"), ({"n_queries": 0}, "n_queries"),
    ({"min_docs": 20, "max_docs": 10}, "min_docs"), ({"feature_noise": -1.0}, "feature_noise"),
    ({"query_shift": float("nan")}, "query_shift"), ({"grade_fractions": (0.5, 0.4)}, "grade_fractions"),
    ({"n_informative": 0}, "n_informative"), ({"min_relevant": 11}, "min_relevant"),
    ({"docs_per_query": 0}, "docs_per_query"), ({"label_noise": -0.1}, "label_noise"),
    ({"streams": "other"}, "streams"), ({"streams": "artificial"}, "streams='artificial'"),
    ({**artificial(5, 3), "n_noise": 2}, "streams='artificial'"),
])
def test_bad_arguments_name_the_argument(kw, word):
    with pytest.raises(ParameterError, match=word):
        make_synthetic(**{"n_queries": 10, **kw})


@pytest.mark.parametrize("args, kw, x_sha, y_sha, source", [
    ((50, 20, 10), {"seed": 4}, "c6c6cb70b96e9bd8", "fd0231aa2b0a5bca",
     "artificial(cubic, F=10, Q=50, N=20, seed=4, task_seed=4)"),
    ((60, 12, 6), {"seed": 11}, "9f7736ec85bab8a8", "d72eab16684e5185",
     "artificial(cubic, F=6, Q=60, N=12, seed=11, task_seed=11)"),
    ((30, 8, 5), {"seed": 2, "task_seed": 7, "label_noise": 0.25}, "deafa14edc34fefe", "58007fe3de7c0cb6",
     "artificial(cubic, F=5, Q=30, N=8, seed=2, task_seed=7)"),
])
def test_artificial_streams_draw_the_pinned_sets(args, kw, x_sha, y_sha, source):
    """The artificial cubic data (Donmez et al. 2009) as the learning tests and ``--dataset
    artificial`` have always drawn it: digests of features and grades pinned from that generator."""
    import hashlib

    Q, N, F = args
    d = make_synthetic(Q, **artificial(N, F), **kw)
    assert hashlib.sha256(d.X.tobytes()).hexdigest()[:16] == x_sha
    assert hashlib.sha256(d.y.tobytes()).hexdigest()[:16] == y_sha
    assert d.source == source and d.sizes.tolist() == [N] * Q and d.n_features == F


def test_fixed_query_length_draws_no_lengths():
    d = make_synthetic(40, docs_per_query=7, seed=2)
    assert d.sizes.tolist() == [7] * 40 and "docs=7," in d.source
    noisy = make_synthetic(40, docs_per_query=7, seed=2, label_noise=0.5)
    np.testing.assert_array_equal(noisy.X, d.X)              # label noise is drawn after the features
    assert not np.array_equal(noisy.y, d.y)
