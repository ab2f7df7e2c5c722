"""maxent.compare: marks stay readable beyond 26 runs (letters aa, ab, .. separated by
commas), and a baseline adds per-topic wins, ties and losses to every format.

Oracles: the marks recomputed from the pairs (``significant()``) and written out here, the
wins/ties/losses counted here from the per-topic values of ``Comparison.values``.
"""
from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxent.compare import _letters, compare, compare_values

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = ROOT / "trec_runs" / "runs"
THREE = [RUNS / "T5R1.gz", RUNS / "bm25_baseline.gz", RUNS / "run1.gz"]
FAST = {"n_permutations": 200, "n_bootstrap": 200}
TINY = {"n_permutations": 10, "n_bootstrap": 10}          # the marks: t-test only
N_RUNS, N_TOPICS = 30, 60            # over 50 topics: no exact Wilcoxon permutations
SUP = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ"))


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """30 tiny runs on 60 topics of one relevant document each: run k (k < 29) ranks it at
    2 + (k + topic) % 5, the last run first on every topic (better than all the others)."""
    d = tmp_path_factory.mktemp("many")
    (d / "qrels.txt").write_text("".join(f"{q} 0 rel{q} 1\n" for q in range(1, N_TOPICS + 1)))
    paths = []
    for k in range(N_RUNS):
        lines = []
        for q in range(1, N_TOPICS + 1):
            rank = 1 if k == N_RUNS - 1 else 2 + (k + q) % 5
            docs = [f"junk{q}_{i}" for i in range(6)]
            docs.insert(rank - 1, f"rel{q}")
            lines += [f"{q} Q0 {doc} {r} {100 - r} run{k:02d}" for r, doc in enumerate(docs, 1)]
        path = d / f"run{k:02d}"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return d / "qrels.txt", paths


@pytest.fixture(scope="module")
def many_cmp(many):
    qrels, paths = many
    return compare(qrels, paths, ["AP"], correction="none", **TINY)


def test_letters_beyond_z():
    got = _letters(30)
    assert got[:3] == ["a", "b", "c"] and got[25:] == ["z", "aa", "ab", "ac", "ad"]
    assert len(set(_letters(800))) == 800


def test_thirty_runs_marks_are_comma_separated_in_every_table(many_cmp):
    c = many_cmp
    letters = _letters(N_RUNS)
    marks = c.marks()
    best = marks[("run29", "AP")]
    assert best == letters[:-1]                       # better than each of the 29 others
    for fmt in ("terminal", "markdown", "latex"):
        out = c.format(fmt)
        joined = ",".join(best)
        want = {"terminal": "".join(SUP.get(ch, ch) for ch in joined),
                "markdown": f"<sup>{joined}</sup>", "latex": f"$^{{{joined}}}$"}[fmt]
        row = next(l for l in out.splitlines() if "run29" in l)
        assert want in row, (fmt, row)
        assert "ᵃᵇᶜ" not in row and "{abc" not in row and "<sup>abc" not in row  # not run together
        # every mark of every cell is one run's letter: split on commas, recover the lists
        for r in c.runs:
            line = next(l for l in out.splitlines() if re.search(rf"(^|\W){r}(\W|$)", l))
            got = _cell_marks(line, fmt)
            assert got == marks[(r, "AP")], (fmt, r, line)


def _cell_marks(line: str, fmt: str) -> list[str]:
    inverse = {v: k for k, v in SUP.items()}
    if fmt == "terminal":
        tail = line.split()[-1]
        text = "".join(inverse.get(ch, ch if ch == "," else "") for ch in tail)
    elif fmt == "markdown":
        m = re.search(r"<sup>([^<]*)</sup>", line)
        text = m.group(1) if m else ""
    else:
        m = re.search(r"\$\^\{([^}]*)\}\$", line)
        text = m.group(1) if m else ""
    return [x for x in text.split(",") if x]


def test_up_to_26_runs_marks_run_together(many):
    qrels, paths = many
    c = compare(qrels, paths[-26:], ["AP"], correction="none", **TINY)
    row = next(l for l in c.format().splitlines() if "run29" in l)
    assert "".join(SUP[ch] for ch in "abcdefghijklmnopqrstuvwxy") in row and "," not in row
    assert "$^{abcdefghijklmnopqrstuvwxy}$" in c.format("latex")
    assert "<sup>abcdefghijklmnopqrstuvwxy</sup>" in c.format("markdown")


def test_compare_values_on_thirty_runs():
    rng = np.random.default_rng(3)
    v = rng.random((N_RUNS, 12))
    names = [f"r{i}" for i in range(N_RUNS)]
    frame = compare_values(v, names, **TINY)
    assert len(frame) == N_RUNS * (N_RUNS - 1) // 2 and "wins" not in frame


# ------------------------------------------------------------------- baseline W/T/L
def _wtl(c, measure):
    wide = (c.values[c.values["measure"] == measure].pivot(index="run", columns="topic", values="value"))
    base = wide.loc[c.baseline].to_numpy()
    return {r: (int((wide.loc[r].to_numpy() > base).sum()), int((wide.loc[r].to_numpy() == base).sum()),
                int((wide.loc[r].to_numpy() < base).sum())) for r in c.runs if r != c.baseline}


@pytest.fixture(scope="module")
def based():
    return compare(QRELS, THREE, ["AP", "P@10", "gm_map"], baseline="bm25_baseline", **FAST)


def test_baseline_wins_ties_losses_in_pairs(based):
    c = based
    assert list(c.pairs.columns[12:15]) == ["wins", "ties", "losses"]
    for m in c.measures:
        want = _wtl(c, m)
        part = c.pairs[c.pairs["measure"] == m]
        got = {r.run_a: (r.wins, r.ties, r.losses) for r in part.itertuples()}
        assert got == want, m
        assert (part[["wins", "ties", "losses"]].sum(axis=1) == part["topics"]).all()
    p10 = c.pairs[c.pairs["measure"] == "P@10"]
    assert p10["ties"].sum() > 0                      # P@10 ties on some topics: counted apart


def test_baseline_wins_ties_losses_in_tables(based):
    c = based
    want = {m: _wtl(c, m) for m in c.measures}
    for fmt in ("terminal", "markdown", "latex"):
        out = c.format(fmt)
        assert all(f"{m} W/T/L" in out for m in c.measures)
        for r in c.runs:
            line = next(l for l in out.splitlines() if r in l or r.replace("_", "\\_") in l)
            cells = re.findall(r"\b(\d+)/(\d+)/(\d+)\b", line)
            if r == c.baseline:
                assert cells == []
            else:
                assert [tuple(map(int, x)) for x in cells] == [want[m][r] for m in c.measures], (fmt, line)
        assert "W/T/L: topics where the run's value is higher than, equal to or lower than" in out


def test_baseline_wins_ties_losses_in_csv_and_json(based):
    c = based
    csv = pd.read_csv(StringIO(c.format("csv")))
    np.testing.assert_array_equal(csv[["wins", "ties", "losses"]].to_numpy(),
                                  c.pairs[["wins", "ties", "losses"]].to_numpy())
    doc = json.loads(c.format("json"))
    for p in doc["pairs"]:
        assert (p["wins"], p["ties"], p["losses"]) == _wtl(c, p["measure"])[p["run_a"]]


def test_without_baseline_no_wins_columns():
    c = compare(QRELS, THREE, ["AP"], **FAST)
    assert "wins" not in c.pairs and c.wins_ties_losses() is None
    assert "W/T/L" not in c.format() and "wins" not in c.format("csv") and "wins" not in c.format("json")
