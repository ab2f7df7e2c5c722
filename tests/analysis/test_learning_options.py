"""Every option of ``python -m analysis.learning`` that no other test passes, checked for its
effect on the output (printed split sizes, the training records of ``runs/*.json``, the
tables), on small artificial data or tiny LETOR files written here.

Each test compares a run with the option against the expectation the option's help states
(a split of the documented size, a metric at the documented threshold or gain, a network of
the documented width, ...) or, for options that only steer the optimisation, against a run
without it: the records must change.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.learning import main

BASE = ["--dataset", "artificial", "--n-queries", "40", "--docs-per-query", "6", "--n-features", "4",
        "--epochs", "2", "--learning-rates", "0.1", "--train-metrics", "AP,nDCG", "--test-metrics", "AP,nDCG",
        "--workers", "1", "--no-progress", "--parts", "table", "--n-boot", "200"]


def _learn(out: Path, *extra, base=BASE):
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        code = main([*base, *map(str, extra), "--out", str(out)])
    assert code == 0, se.getvalue()
    records = {p.name: json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))}
    table = pd.read_csv(out / "table.csv") if (out / "table.csv").exists() else None
    return so.getvalue(), table, records


def _split(stdout: str) -> tuple[int, int, int]:
    m = re.search(r"train (\d+) queries / \d+ docs, validation (\d+), test (\d+)", stdout)
    return tuple(int(x) for x in m.groups())


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return _learn(tmp_path_factory.mktemp("base"))


def _history_keys(records) -> set[str]:
    return {k for r in records.values() for h in r.get("history", []) for k in h}


def _trajectory(records):
    return [h.get("train:AP") for r in records.values() for h in r.get("history", [])]


def _letor(path: Path, queries: int, docs: int, features: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(queries):
        for _ in range(docs):
            x = rng.random(features)
            y = int(rng.integers(0, 3))
            lines.append(f"{y} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)))
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------ data
def test_train_vali_test_files_and_vali_fraction(tmp_path):
    tr = _letor(tmp_path / "train.txt", 20, 5, 4, 0)
    te = _letor(tmp_path / "test.txt", 6, 5, 4, 1)
    va = _letor(tmp_path / "vali.txt", 4, 5, 4, 2)
    base = [a for a in BASE if a not in ("--dataset", "artificial")]
    stdout, _, _ = _learn(tmp_path / "a", "--dataset", "mine", "--train", tr, "--test", te, "--vali", va, base=base)
    assert _split(stdout) == (20, 4, 6)
    # no --vali: --vali-fraction of the training queries are held out for validation
    stdout, _, _ = _learn(tmp_path / "b", "--dataset", "mine", "--train", tr, "--test", te,
                          "--vali-fraction", "0.5", base=base)
    assert _split(stdout) == (10, 10, 6)
    stdout, _, _ = _learn(tmp_path / "c", "--dataset", "mine", "--train", tr, "--test", te,
                          "--vali-fraction", "0.25", base=base)
    assert _split(stdout) == (15, 5, 6)


def test_data_root_finds_the_named_dataset(tmp_path):
    root = tmp_path / "root"
    (root / "mq2008_fold1").mkdir(parents=True)
    _letor(root / "mq2008_fold1" / "vali.txt", 20, 5, 4, 0)
    _letor(root / "mq2008_fold1" / "test.txt", 5, 5, 4, 1)
    base = [a for a in BASE if a not in ("--dataset", "artificial")]
    stdout, _, _ = _learn(tmp_path / "o", "--dataset", "mq2008", "--data-root", root, base=base)
    assert _split(stdout)[2] == 5 and sum(_split(stdout)[:2]) == 20


def test_normalize_changes_the_features_the_model_sees(tmp_path, base):
    _, _, none = _learn(tmp_path / "n", "--normalize", "none")
    _, _, per_query = _learn(tmp_path / "q", "--normalize", "query-minmax")
    assert _trajectory(none) != _trajectory(base[2]) and _trajectory(per_query) != _trajectory(base[2])


def test_split_seed_draws_another_split(tmp_path, base):
    stdout, table, records = _learn(tmp_path / "s", "--split-seed", "3")
    assert _split(stdout) == _split(base[0])                     # the same sizes ...
    assert _trajectory(records) != _trajectory(base[2])          # ... other queries


# --------------------------------------------------------------------------------- metrics
def test_rel_and_gain_set_every_metrics_parameters(tmp_path, base):
    _, _, records = _learn(tmp_path / "r", "--rel", "2")
    keys = _history_keys(records)
    assert "train:AP(rel=2)" in keys and "train:AP" not in keys
    assert "train:AP" in _history_keys(base[2])
    _, _, records = _learn(tmp_path / "g", "--gain", "linear")
    keys = _history_keys(records)
    assert any(k.startswith("train:nDCG") and "gain=exp" not in k for k in keys)
    assert any("gain=exp" in k for k in _history_keys(base[2]))
    assert not any("gain=exp" in k for k in keys)


# -------------------------------------------------------------------------------- training
def test_hidden_sets_the_network_width(tmp_path, base):
    _, _, records = _learn(tmp_path / "h", "--hidden", "3")
    sizes = {len(np.ravel(v)) for r in records.values() for v in r["thetas"].values()}
    base_sizes = {len(np.ravel(v)) for r in base[2].values() for v in r["thetas"].values()}
    assert sizes != base_sizes


@pytest.mark.parametrize("option", [["--sigma", "3"], ["--batch-size", "4"]])
def test_optimisation_options_change_training(option, tmp_path, base):
    _, _, records = _learn(tmp_path / "o", *option)
    assert _trajectory(records) != _trajectory(base[2])


def test_restart_patience_and_lr_decay(tmp_path):
    common = ["--epochs", "6", "--learning-rates", "5"]          # a rate large enough to fail
    _, _, plain = _learn(tmp_path / "p", *common, "--restart-patience", "0")
    _, _, restart = _learn(tmp_path / "r", *common, "--restart-patience", "1")
    assert sum(r["restarts"] for r in restart.values()) > sum(r["restarts"] for r in plain.values())
    # --lr-decay: x 0.8 with probability 0.3 after an epoch that lowers the objective (seeded)
    _, _, decay = _learn(tmp_path / "d", "--epochs", "15", "--learning-rates", "2", "--seeds", "0,1", "--lr-decay")
    rates = {round(h["learning_rate"] / 2, 12) for r in decay.values() for h in r["history"]}
    assert len(rates) > 1 and rates <= {round(0.8 ** k, 12) for k in range(16)}
    _, _, steady = _learn(tmp_path / "s", "--epochs", "15", "--learning-rates", "2", "--seeds", "0,1")
    assert {h["learning_rate"] for r in steady.values() for h in r["history"]} == {2.0}


def test_lambdamart_num_leaves_and_truncation(tmp_path):
    pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    lm = ["--model", "lambdamart", "--trees", "4", "--min-data-in-leaf", "2"]
    _, _, a = _learn(tmp_path / "a", *lm, "--num-leaves", "2")
    _, _, b = _learn(tmp_path / "b", *lm, "--num-leaves", "8")
    _, _, c = _learn(tmp_path / "c", *lm, "--num-leaves", "8", "--truncation", "1")
    sel = lambda recs: [json.dumps(r["selected"], sort_keys=True) for r in recs.values()]  # noqa: E731
    assert sel(a) != sel(b) and sel(b) != sel(c)


# ----------------------------------------------------------------------------- experiments
def test_alpha_and_power_set_the_tests_and_the_detectable_effect(tmp_path, base):
    _, loose, _ = _learn(tmp_path / "l", "--alpha", "0.3", "--power", "0.5")
    strict = base[1]
    off = strict[strict.train != strict.test]
    loose = loose[loose.train != loose.test]
    assert (loose["mde"].to_numpy() <= off["mde"].to_numpy() + 1e-12).all()
    assert (loose["mde"] < off["mde"] - 1e-9).any()
    # a confidence interval at level 1 - alpha: narrower at alpha 0.5
    width = lambda t: (t["ci_high"] - t["ci_low"]).to_numpy()  # noqa: E731
    assert (width(loose) <= width(off) + 1e-12).all()


DEFAULT_METRICS = [a for a in BASE if a not in ("--train-metrics", "AP,nDCG", "--test-metrics")]


def test_sweep_epochs(tmp_path):
    sweep = ["--parts", "sweep", "--fractions", "1", "--features", "all"]
    _learn(tmp_path / "a", *sweep, "--sweep-epochs", "1", base=DEFAULT_METRICS)
    _learn(tmp_path / "b", *sweep, "--sweep-epochs", "3", base=DEFAULT_METRICS)
    epochs = lambda d: {json.loads(p.read_text())["epochs"] for p in (d / "runs").glob("sweep*.json")}  # noqa: E731
    assert epochs(tmp_path / "a") == {1} and epochs(tmp_path / "b") == {3}


def test_mc_eps_sets_the_alteration_size(tmp_path):
    opt = ["--parts", "optimality", "--mc-directions", "6"]
    _learn(tmp_path / "a", *opt, "--mc-eps", "0", base=DEFAULT_METRICS)
    _learn(tmp_path / "b", *opt, "--mc-eps", "0.5", base=DEFAULT_METRICS)
    a, b = pd.read_csv(tmp_path / "a" / "optimality.csv"), pd.read_csv(tmp_path / "b" / "optimality.csv")
    # improved_eps counts alterations improving the metric by more than epsilon
    assert (b["improved_eps"] <= a["improved_eps"]).all() and (b["improved_eps"] == 0).all()
    assert (a["improved_eps"] == a["improved"]).all()


def test_pairs_train_and_target(tmp_path):
    pairs = ["--parts", "pairs", "--pairs-train", "AP,nDCG", "--pairs-target", "AP"]
    stdout, _, records = _learn(tmp_path / "p", *pairs)
    names = {r["train"] for r in records.values()}
    assert names == {"AP", "nDCG"}
    files = [p.name for p in (tmp_path / "p").iterdir() if p.suffix == ".csv"]
    frame = pd.concat([pd.read_csv(tmp_path / "p" / f) for f in files], ignore_index=True)
    assert "AP" in " ".join(map(str, frame.astype(str).to_numpy().ravel()))


def test_approx_qrels(tmp_path):
    root = Path(__file__).resolve().parents[2] / "trec_runs"
    runs = sorted((root / "runs").iterdir())[:2]
    qrels = tmp_path / "q.txt"
    lines = root.joinpath("qrels-rnd1.txt").read_text().splitlines()
    qrels.write_text("\n".join(l for l in lines if l.split()[0] in {"1", "2", "3"}) + "\n")
    approx = ["--parts", "approx_error", "--approx-runs", *runs, "--approx-depth", "20", "--approx-alphas", "10"]
    _learn(tmp_path / "a", *approx, "--approx-qrels", qrels)
    frame = pd.read_csv(next((tmp_path / "a").glob("approx*.csv")))
    topics = {str(t) for t in frame["topic"]} if "topic" in frame else None
    assert topics is None or topics <= {"1", "2", "3"}
    _learn(tmp_path / "b", *approx)
    assert not frame.equals(pd.read_csv(next((tmp_path / "b").glob("approx*.csv"))))
