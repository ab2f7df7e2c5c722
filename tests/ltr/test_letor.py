"""LETOR / SVMlight / LightGBM readers, splits and normalisation, on artificial data."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maxent.errors import InputError, ParameterError
from maxent.letor import kfold, read_letor, split_queries, standardize
from maxent.synthetic import artificial, make_synthetic

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LTR = SHARED / "ltr"
needs_data = pytest.mark.skipif(not LTR.exists(), reason=f"shared LTR data not found at {LTR}")


def _write(tmp_path, text, name="d.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_sparse_dense_comments_and_qids(tmp_path):
    p = _write(tmp_path, "# header comment\n"
                         "2 qid:7 1:0.5 3:1.5 # docid = A\n"
                         "0 qid:7 2:-1\n"
                         "\n"
                         "1 qid:9 1:1 2:2 3:3\n")
    d = read_letor(p)
    assert d.n_queries == 2 and d.n_docs == 3 and d.n_features == 3
    assert d.qids.tolist() == ["7", "9"]
    assert d.sizes.tolist() == [2, 1]
    np.testing.assert_array_equal(d.X, [[0.5, 0, 1.5], [0, -1, 0], [1, 2, 3]])
    assert d.y.tolist() == [2, 0, 1]
    assert d.rel_counts().tolist() == [[1, 0, 1], [0, 1, 0]]   # hand count: grades per query


def test_lightgbm_query_file(tmp_path):
    p = _write(tmp_path, "1 1:1\n0 2:1\n2 1:3 2:4\n")
    _write(tmp_path, "2\n1\n", "d.txt.query")
    d = read_letor(p)
    assert d.sizes.tolist() == [2, 1] and d.n_features == 2
    q = _write(tmp_path, "1\n2\n", "groups")
    assert read_letor(p, query_file=q).sizes.tolist() == [1, 2]


def test_padded_and_subset():
    d = make_synthetic(5, **artificial(4, 3), seed=1)
    Xp, yp, lengths = d.padded()
    assert Xp.shape == (5, 4, 3) and (yp >= 0).all() and lengths.tolist() == [4] * 5
    s = d.subset([3, 1])
    np.testing.assert_array_equal(s.X[:4], d.X[12:16])
    np.testing.assert_array_equal(s.X[4:], d.X[4:8])


@pytest.mark.parametrize("text, line, words", [
    ("x qid:1 1:1\n", 1, "grade"),
    ("1.5 qid:1 1:1\n", 1, "integer"),
    ("-1 qid:1 1:1\n", 1, "integer"),
    ("1 qid:1 1:nan\n", 1, "finite"),
    ("1 qid:1 1:inf\n", 1, "finite"),
    ("1 qid:1 a:1\n", 1, "index:value"),
    ("1 qid:1 1:1 1:2\n", 1, "twice"),
    ("1 qid:1 0:1\n", 1, "below"),
    ("1 qid:1 1:1\n1 qid:2 1:1\n# c\n1 qid:1 1:1\n", 4, "reappears"),
    ("1 qid:1 1:1\n1 1:1\n", None, "some lines"),
    ("# only a comment\n", None, "no data"),
    ("1 1:1\n", None, "no group file"),
])
def test_malformed_lines_raise_input_error(tmp_path, text, line, words):
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_letor(p)
    assert e.value.line == line and words in e.value.reason and e.value.path == str(p)


def test_bad_group_file(tmp_path):
    p = _write(tmp_path, "1 1:1\n0 1:2\n")
    _write(tmp_path, "3\n", "d.txt.query")
    with pytest.raises(InputError, match="add up to 3"):
        read_letor(p)
    _write(tmp_path, "two\n", "d.txt.query")
    with pytest.raises(InputError) as e:
        read_letor(p)
    assert e.value.line == 1


def test_normalize_per_query():
    d = make_synthetic(3, **artificial(5, 2), seed=0)
    n = d.normalize_per_query("minmax")
    for q in range(3):
        block = n.X[d.offsets[q]:d.offsets[q + 1]]
        np.testing.assert_allclose(block.min(axis=0), 0)
        np.testing.assert_allclose(block.max(axis=0), 1)
    z = d.normalize_per_query("zscore")
    np.testing.assert_allclose(z.X[:5].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(z.X[:5].std(axis=0), 1)
    with pytest.raises(ParameterError):
        d.normalize_per_query("rank")


def test_standardize_uses_train_statistics():
    a = make_synthetic(4, **artificial(5, 3), seed=0)
    b = make_synthetic(4, **artificial(5, 3), seed=1)
    sa, sb = standardize(a, b)
    np.testing.assert_allclose(sa.X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(sb.X, (b.X - a.X.mean(0)) / a.X.std(0))


def test_splits_partition_queries():
    d = make_synthetic(20, **artificial(3, 2), seed=0)
    parts = split_queries(d, (0.6, 0.2, 0.2), seed=3)
    assert [p.n_queries for p in parts] == [12, 4, 4]
    qids = np.concatenate([p.qids for p in parts])
    assert sorted(qids.tolist()) == sorted(d.qids.tolist())
    folds = kfold(d, 4, seed=0)
    tests = np.concatenate([te.qids for _, te in folds])
    assert sorted(tests.tolist()) == sorted(d.qids.tolist())
    assert all(tr.n_queries + te.n_queries == 20 for tr, te in folds)
    with pytest.raises(ParameterError):
        split_queries(d, (0.7, 0.7))


def test_artificial_is_seeded_and_learnable():
    a = make_synthetic(50, **artificial(20, 10), seed=4)
    b = make_synthetic(50, **artificial(20, 10), seed=4)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    # grades follow grade_fractions (default 0.45/0.30/0.15/0.07/0.03) up to sampling noise
    frac = np.bincount(a.y, minlength=5) / a.n_docs
    np.testing.assert_allclose(frac, [0.45, 0.30, 0.15, 0.07, 0.03], atol=0.04)
    # same task, other sample: same polynomial, so the grade is a function of the features
    c = make_synthetic(50, **artificial(20, 10), seed=5, task_seed=4)
    assert not np.array_equal(a.X, c.X)
    with pytest.raises(ParameterError):
        make_synthetic(**dict(artificial(), grade_fractions=(0.5, 0.2)))


@needs_data
@pytest.mark.parametrize("rel, Q, D, F, grades", [
    # oracle: counts in ../shared/data/ltr/*/PROVENANCE.txt
    ("yahoo_lightgbm_sample/rank.train", 201, 3005, 300, [645, 1211, 858, 222, 69]),
    ("yahoo_lightgbm_sample/rank.test", 50, 768, None, [206, 256, 252, 44, 10]),
    ("mq2008_fold1/test.txt", 156, 2874, 46, [2319, 378, 177]),
    ("mq2008_fold1/vali.txt", 157, 2707, 46, [2140, 400, 167]),
    ("mslr_web10k_5k/msn1.fold1.train.5k.txt", 43, 5000, 136, [2792, 1458, 665, 55, 30]),
])
def test_shared_files_match_provenance(rel, Q, D, F, grades):
    d = read_letor(LTR / rel)
    assert (d.n_queries, d.n_docs) == (Q, D)
    if F is not None:
        assert d.n_features == F
    assert np.bincount(d.y).tolist() == grades
