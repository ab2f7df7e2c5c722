"""Which systems really differ? Paired significance tests, corrections and effect sizes.

:func:`compare` (``maxent compare QRELS RUN... -m AP -m nDCG@10``) evaluates every run per
topic, then compares every pair of runs (or each against a baseline) on the same topics, as
ranx's ``compare`` and Yilmaz & Robertson (2010): the tests of :mod:`maxent.stats.paired`,
p-values corrected over the pairs of each measure (:func:`maxent.stats.corrections.adjust`)
and effect sizes with bootstrap intervals (:func:`maxent.stats.intervals.effect_sizes`). The
report marks a run's mean with the letters of the runs it is significantly better than.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from maxent.errors import ParameterError
from maxent.stats import CORRECTIONS, adjust, effect_sizes, randomisation_test

if TYPE_CHECKING:  # pandas loads where a frame is built (``import maxent`` stays light)
    import pandas as pd

__all__ = ["TESTS", "CORRECTIONS", "compare_values", "compare", "Comparison"]

TESTS = ("t", "wilcoxon", "sign", "randomisation", "bootstrap")
#: ``--test`` choices: one test, or ``paper000`` (t, Wilcoxon and sign test must all reject)
MARK_TESTS = TESTS + ("paper000",)


def _pairs(names: Sequence[str], baseline: str | None) -> list[tuple[int, int]]:
    if baseline is None:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise ParameterError(f"baseline {baseline!r} is not among the runs: {', '.join(names)}")
    b = list(names).index(baseline)
    return [(i, b) for i in range(len(names)) if i != b]


def compare_values(values, names: Sequence[str], *, measure: str = "", baseline: str | None = None,
                   correction: str = "holm", n_permutations: int = 10000, n_bootstrap: int = 10000,
                   seed: int = 0) -> pd.DataFrame:
    """Every test on every pair of runs of one measure.

    Parameters
    ----------
    values : array_like, shape (R, n): per-topic values of R runs over the same n topics
    names : R run names. baseline : compare each run with this one only (default: all pairs).
    correction : ``holm``, ``bh`` or ``none``, over the pairs of this measure, per test.

    Returns
    -------
    DataFrame, one row per pair (run_a, run_b): the means, :func:`maxent.stats.effect_sizes`,
    and ``p_<test>`` raw and ``p_<test>_adj`` corrected for every test in :data:`TESTS`.
    """
    import pandas as pd

    from maxent.stats import paired_bootstrap_asl, paired_t, sign_test, wilcoxon

    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] != len(names):
        raise ParameterError(f"values must be (runs, topics) with {len(names)} runs, got shape {v.shape}")
    if v.shape[1] < 2:
        raise ParameterError(f"comparing runs needs at least 2 common topics, got {v.shape[1]}")
    if correction not in CORRECTIONS:
        raise ParameterError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    pairs = _pairs(list(names), baseline)
    if not pairs:
        raise ParameterError("comparing runs needs at least 2 runs")
    ia = np.array([a for a, _ in pairs])
    ib = np.array([b for _, b in pairs])
    d = v[ia] - v[ib]                                    # (P, n)
    frame = pd.DataFrame({"measure": measure, "run_a": [names[i] for i in ia], "run_b": [names[j] for j in ib],
                          "topics": v.shape[1], "mean_a": v[ia].mean(axis=1), "mean_b": v[ib].mean(axis=1)})
    frame = pd.concat([frame, effect_sizes(d, n_boot=n_bootstrap, seed=seed)], axis=1)
    frame["p_t"] = [paired_t(v[a], v[b]) for a, b in pairs]
    frame["p_wilcoxon"] = [wilcoxon(v[a], v[b]) for a, b in pairs]
    frame["p_sign"] = [sign_test(v[a], v[b]) for a, b in pairs]
    frame["p_randomisation"] = randomisation_test(d, n_permutations=n_permutations, seed=seed)
    frame["p_bootstrap"] = paired_bootstrap_asl(d, n_boot=n_bootstrap, seed=seed)
    for t in TESTS:
        frame[f"p_{t}_adj"] = adjust(frame[f"p_{t}"].to_numpy(), correction)
    return frame


_SUP = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ"))


def _letters(k: int) -> list[str]:
    """a, b, .., z, aa, ab, ..: one label per run."""
    out = []
    for i in range(k):
        s, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _markdown(head: list[str], rows: list[list[str]], left: int) -> str:
    rule = "|" + "|".join(["---"] * left + ["---:"] * (len(head) - left)) + "|"
    lines = ["| " + " | ".join(head) + " |", rule]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def _aligned(head: list[str], rows: list[list[str]]) -> str:
    width = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, width)), "  ".join("-" * w for w in width)]
    return "\n".join(out + ["  ".join(c.ljust(w) for c, w in zip(r, width)) for r in rows])


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare`: per-topic values, per-pair tests and the marked report.

    Attributes
    ----------
    values : long frame (run, topic, measure, value) of the topics compared
    pairs : one row per (measure, run pair), see :func:`compare_values`
    runs, measures : names in report order; test, correction, alpha: what the marks mean
    """

    values: pd.DataFrame
    pairs: pd.DataFrame
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    baseline: str | None = None
    settings: dict = field(default_factory=dict)

    def significant(self) -> np.ndarray:
        """Bool mask over ``pairs``: the chosen test rejects at ``alpha`` after correction."""
        if self.test == "paper000":
            p = self.pairs[["p_t_adj", "p_wilcoxon_adj", "p_sign_adj"]].max(axis=1)
        else:
            p = self.pairs[f"p_{self.test}_adj"]
        return (p < self.alpha).to_numpy()

    def means(self) -> pd.DataFrame:
        """Mean over topics: rows runs, columns measures (report order)."""
        m = self.values.groupby(["run", "measure"], sort=False)["value"].mean().unstack("measure")
        return m.loc[list(self.runs), list(self.measures)]

    def marks(self) -> dict[tuple[str, str], list[str]]:
        """(run, measure) -> letters of the runs it is significantly better than."""
        letter = dict(zip(self.runs, _letters(len(self.runs))))
        out: dict[tuple[str, str], list[str]] = {(r, m): [] for r in self.runs for m in self.measures}
        sig = self.significant()
        for row, s in zip(self.pairs.itertuples(index=False), sig):
            if not s or row.mean_a == row.mean_b:
                continue
            win, lose = (row.run_a, row.run_b) if row.mean_a > row.mean_b else (row.run_b, row.run_a)
            out[(win, row.measure)].append(letter[lose])
        return {k: sorted(v, key=lambda s: (len(s), s)) for k, v in out.items()}

    def legend(self) -> str:
        corr = {"holm": "Holm-Bonferroni", "bh": "Benjamini-Hochberg", "none": "no"}[self.correction]
        test = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
                "randomisation": "Fisher's randomisation test", "bootstrap": "Sakai's paired bootstrap test",
                "paper000": "t-test, Wilcoxon and sign test all"}[self.test]
        topics = int(self.pairs["topics"].iloc[0]) if len(self.pairs) else 0
        scope = f"against baseline {self.baseline}" if self.baseline else "all pairs"
        return (f"superscripts: significantly better than the lettered run ({test}, {scope}, "
                f"{corr} correction, alpha {self.alpha:g}, {topics} topics)")

    def details(self, fmt: str = "terminal", digits: int = 4) -> str:
        """One line per compared pair (``terminal`` or ``markdown``): difference and d_z with
        95% intervals, every corrected p."""
        _check_digits(digits)
        sig = self.significant()
        head = ["measure", "run a", "run b", "a - b [95% CI]", "d_z [95% CI]",
                *[f"p {t}" for t in TESTS], "sig"]
        rows = []
        for r, s in zip(self.pairs.itertuples(index=False), sig):
            rows.append([r.measure, r.run_a, r.run_b,
                         f"{r.diff:+.{digits}f} [{r.diff_lo:+.{digits}f}, {r.diff_hi:+.{digits}f}]",
                         f"{r.d:+.2f} [{r.d_lo:+.2f}, {r.d_hi:+.2f}]",
                         *[f"{getattr(r, f'p_{t}_adj'):.4f}" for t in TESTS], "*" if s else ""])
        note = (f"p-values {self.correction}-corrected over the pairs of each measure; "
                f"sig: {self.test} at alpha {self.alpha:g}")
        if fmt == "markdown":
            return _markdown(head, rows, 3) + f"\n\n{note}\n"
        if fmt != "terminal":
            raise ParameterError(f"details are printed as terminal or markdown, got {fmt!r}")
        return _aligned(head, rows) + f"\n{note}\n"

    def format(self, fmt: str = "terminal", digits: int = 4) -> str:
        """The report as ``terminal``, ``markdown``, ``latex``, ``csv`` (pairs) or ``json``."""
        _check_digits(digits)
        if fmt == "csv":
            return self.pairs.to_csv(index=False, float_format="%.10g", lineterminator="\n")
        if fmt == "json":
            import json  # here, not at import: the evaluate command's start-up

            means, marks = self.means(), self.marks()
            doc = {"settings": {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                                "baseline": self.baseline, **self.settings},
                   "runs": [{"letter": l, "run": r, **{m: float(v) for m, v in means.loc[r].items()},
                             "better_than": {m: marks[(r, m)] for m in self.measures}}
                            for l, r in zip(_letters(len(self.runs)), self.runs)],
                   "pairs": json.loads(self.pairs.to_json(orient="records", double_precision=15))}
            return json.dumps(doc, indent=1) + "\n"
        if fmt not in ("terminal", "markdown", "latex"):
            raise ParameterError(f"format must be terminal, markdown, latex, csv or json, got {fmt!r}")
        means, marks = self.means(), self.marks()
        best = {m: means[m].max() for m in self.measures}
        letters = _letters(len(self.runs))

        def cell(r, m):
            v, ls = means.loc[r, m], marks[(r, m)]
            num = f"{v:.{digits}f}"
            if fmt == "terminal":
                return num + "".join("".join(_SUP.get(c, c) for c in l) for l in ls)
            if fmt == "markdown":
                num = f"**{num}**" if v == best[m] else num
                return num + (f"<sup>{','.join(ls) if any(len(l) > 1 for l in ls) else ''.join(ls)}</sup>" if ls else "")
            num = f"\\textbf{{{num}}}" if v == best[m] else num
            return num + (f"$^{{{''.join(ls)}}}$" if ls else "")

        head = ["#", "run", *self.measures]
        body = [[l, r, *[cell(r, m) for m in self.measures]] for l, r in zip(letters, self.runs)]
        if fmt == "markdown":
            return _markdown(head, body, 2) + f"\n\n{self.legend()}; best in bold.\n"
        if fmt == "latex":
            esc = lambda s: (s.replace("\\", "\\textbackslash{}").replace("_", "\\_").replace("&", "\\&")
                             .replace("%", "\\%").replace("#", "\\#"))
            lines = ["\\begin{tabular}{ll" + "r" * len(self.measures) + "}", "\\toprule",
                     " & ".join(["", "run", *[esc(m) for m in self.measures]]) + " \\\\", "\\midrule"]
            lines += [" & ".join([row[0], esc(row[1]), *row[2:]]) + " \\\\" for row in body]
            lines += ["\\bottomrule", "\\end{tabular}", f"% {self.legend()}; best in bold."]
            return "\n".join(lines) + "\n"
        return _aligned(head, body) + f"\n{self.legend()}\n"


def _check_digits(digits) -> None:
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 17:
        raise ParameterError(f"digits must be an integer from 0 to 17, got {digits!r}")


def compare(qrels, runs, measures=("AP", "nDCG@10", "P@10"), *, baseline: str | None = None,
            test: str = "t", correction: str = "holm", alpha: float = 0.05, n_permutations: int = 10000,
            n_bootstrap: int = 10000, seed: int = 0, depth: int | None = None, rel: int | None = None,
            complete: bool = True, score_precision: str = "single") -> Comparison:
    """Evaluate runs per topic and compare them pairwise on every measure.

    Parameters
    ----------
    qrels, runs : as :func:`maxent.evaluate.evaluate` (paths, objects, frames, dicts)
    measures : measure names, metric objects or ir_measures measures
    baseline : run name; compare every run with it only (default: every pair)
    test : the test whose corrected verdict sets the marks: one of :data:`TESTS` or
        ``paper000`` (t, Wilcoxon and sign test all reject, Yilmaz & Robertson 2010)
    correction : ``holm``, ``bh`` or ``none``, over the pairs of each measure, per test
    complete : trec_eval ``-c`` (default True: missing topics score 0); False compares the
        topics every run retrieved for
    score_precision : ``single`` (trec_eval 9.x, default) or ``double`` (trec_eval 10.0)

    Returns
    -------
    Comparison
    """
    import pandas as pd

    from maxent.evaluate import evaluate, resolve_measures

    if test not in MARK_TESTS:
        raise ParameterError(f"test must be one of {', '.join(MARK_TESTS)}, got {test!r}")
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must be in (0, 1), got {alpha}")
    from maxent.inputs import as_qrels, as_runs

    qrels = as_qrels(qrels)
    loaded = as_runs(runs)                                # keep the order given (report letters)
    names = [r.name for r in loaded]                     # unique: as_runs checks
    if len(loaded) < 2:
        raise ParameterError("compare needs at least 2 runs")
    metrics = resolve_measures(measures, rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # topic mismatches: handled below
        frame = evaluate(qrels, loaded, metrics, depth=depth, complete=complete,
                         score_precision=score_precision)
    if not complete:
        per_run = frame.groupby("run")["topic"].apply(set)
        common = set.intersection(*[per_run.get(n, set()) for n in names])
        frame = frame[frame["topic"].isin(common)]
    topics = list(dict.fromkeys(frame["topic"]))
    parts = []
    for m in metrics:
        wide = (frame[frame["measure"] == str(m)].pivot(index="run", columns="topic", values="value")
                .reindex(index=names, columns=topics))
        parts.append(compare_values(wide.to_numpy(), names, measure=str(m), baseline=baseline,
                                    correction=correction, n_permutations=n_permutations,
                                    n_bootstrap=n_bootstrap, seed=seed))
    settings = {"permutations": n_permutations, "bootstrap": n_bootstrap, "seed": seed, "depth": depth,
                "complete": complete, "topics": len(topics)}
    return Comparison(frame.reset_index(drop=True), pd.concat(parts, ignore_index=True), tuple(names),
                      tuple(str(m) for m in metrics), test, correction, alpha, baseline, settings)
