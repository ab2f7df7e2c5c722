r"""Which systems really differ? Paired significance tests, corrections and effect sizes.

:func:`compare` (``maxent compare QRELS RUN... -m AP -m nDCG@10``) evaluates every run per
topic, then compares every pair of runs (or each against a baseline) on the same topics, as
ranx's ``compare`` and Yilmaz & Robertson (2010): the tests of :mod:`maxent.stats.paired`,
p-values corrected over the pairs of each measure (:func:`maxent.stats.corrections.adjust`)
and effect sizes with bootstrap intervals (:func:`maxent.stats.intervals.effect_sizes`). The
report marks a run's mean with the letters of the runs it is significantly better than
(a..z, aa, ab, ..: comma-separated beyond 26 runs); against a baseline it also counts the
topics each run wins, ties and loses (``wins``, ``ties``, ``losses``).

Each column is the measure it names, aggregated over topics as trec_eval's ``all`` row
(:func:`maxent.evaluate.run_summary`): the mean, the sum for counts (``num_rel_ret``), the
geometric mean for ``gm_map``, whose tests and effect sizes are those of the per-topic
:math:`\ln\max(AP, 10^{-5})` (its difference is :math:`\ln(gm_a / gm_b)`).
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from maxent.errors import ParameterError
from maxent.stats import CORRECTIONS, adjust, effect_sizes, randomisation_test

if TYPE_CHECKING:  # pandas loads where a frame is built (``import maxent`` stays light)
    import pandas as pd

__all__ = ["TESTS", "CORRECTIONS", "MAX_PERMUTATIONS", "MAX_BOOTSTRAP", "compare_values", "compare",
           "Comparison"]

TESTS = ("t", "wilcoxon", "sign", "randomisation", "bootstrap")
#: ``--test`` choices: one test, or ``paper000`` (t, Wilcoxon and sign test must all reject)
MARK_TESTS = TESTS + ("paper000",)
#: ``AGGREGATE`` of a measure (:class:`maxent.metrics.base.Metric`): how its column summarises topics
AGGREGATES = ("mean", "sum", "gmean")
#: most random sign vectors: they are streamed (memory bounded), this bounds the time
MAX_PERMUTATIONS = 10 ** 9
#: most bootstrap resamples: the intervals keep 2 statistics (16 bytes) per resample of a pair
MAX_BOOTSTRAP = 10 ** 7


def count_problem(value, maximum: int) -> str | None:
    """What is wrong with a count of resamples (None: an integer from 1 to ``maximum``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return f"must be an integer from 1 to {maximum:.0e}".replace("e+0", "e") + f", got {value!r}"
    if value < 1:
        return f"must be >= 1, got {value}"
    if value > maximum:
        return f"must be at most {maximum:.0e}".replace("e+0", "e") + f" ({maximum}), got {value}"
    return None


def seed_problem(value) -> str | None:
    """What is wrong with a seed (None: an integer >= 0, as ``numpy.random.default_rng`` takes)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return f"must be an integer >= 0, got {value!r}"
    if value < 0:
        return f"must be an integer >= 0, got {value}"
    return None


def _check_resampling(n_permutations, n_bootstrap, seed) -> None:
    for name, problem in (("n_permutations", count_problem(n_permutations, MAX_PERMUTATIONS)),
                          ("n_bootstrap", count_problem(n_bootstrap, MAX_BOOTSTRAP)),
                          ("seed", seed_problem(seed))):
        if problem:
            raise ParameterError(f"{name} {problem}")


def _summary(v: np.ndarray, aggregate: str) -> np.ndarray:
    """Per-row summary of (R, n) per-topic values as the measure's column: mean, sum, gmean."""
    if aggregate == "sum":
        return v.sum(axis=1)
    if aggregate == "gmean":
        from maxent.metrics.ap import MIN_GEO_MEAN

        return np.exp(np.log(np.maximum(v, MIN_GEO_MEAN)).mean(axis=1))
    return v.mean(axis=1)


def _pairs(names: Sequence[str], baseline: str | None) -> list[tuple[int, int]]:
    if baseline is None:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise ParameterError(f"baseline {baseline!r} is not among the runs: {', '.join(names)}")
    b = list(names).index(baseline)
    return [(i, b) for i in range(len(names)) if i != b]


def compare_values(values, names: Sequence[str], *, measure: str = "", baseline: str | None = None,
                   correction: str = "holm", n_permutations: int = 10000, n_bootstrap: int = 10000,
                   seed: int = 0, aggregate: str = "mean") -> pd.DataFrame:
    """Every test on every pair of runs of one measure.

    Parameters
    ----------
    values : array_like, shape (R, n): per-topic values of R runs over the same n topics
    names : R run names. baseline : compare each run with this one only (default: all pairs).
    correction : ``holm``, ``bh`` or ``none``, over the pairs of this measure, per test.
    n_permutations : random sign vectors, 1 to :data:`MAX_PERMUTATIONS`; n_bootstrap :
        resamples, 1 to :data:`MAX_BOOTSTRAP`; seed : integer >= 0
    aggregate : the measure's ``AGGREGATE``: ``mean``; ``sum`` (means are sums, the difference
        and its interval those of the sums); ``gmean`` (means are geometric means of
        max(v, 1e-5), every test and effect size is that of the logarithms)

    Returns
    -------
    DataFrame, one row per pair (run_a, run_b): the means, :func:`maxent.stats.effect_sizes`,
    and ``p_<test>`` raw and ``p_<test>_adj`` corrected for every test in :data:`TESTS`. With a
    ``baseline`` (``run_b``), also ``wins``, ``ties`` and ``losses``: the topics where run_a's
    value is higher than, equal to or lower than the baseline's (as pt.Experiment's baseline
    columns; on the values themselves, also for ``gmean``).
    """
    import pandas as pd

    from maxent.stats import paired_bootstrap_asl, paired_t, sign_test, wilcoxon

    _check_resampling(n_permutations, n_bootstrap, seed)
    if aggregate not in AGGREGATES:
        raise ParameterError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
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
    summary = _summary(v, aggregate)
    frame = pd.DataFrame({"measure": measure, "run_a": [names[i] for i in ia], "run_b": [names[j] for j in ib],
                          "topics": v.shape[1], "mean_a": summary[ia], "mean_b": summary[ib]})
    if aggregate == "gmean":                             # tests of the mean of logs: of gm_a / gm_b
        from maxent.metrics.ap import MIN_GEO_MEAN

        v = np.log(np.maximum(v, MIN_GEO_MEAN))
    d = v[ia] - v[ib]                                    # (P, n)
    effects = effect_sizes(d, n_boot=n_bootstrap, seed=seed)
    if aggregate == "sum":                               # the difference of the sums, n times the mean's
        effects[["diff", "diff_lo", "diff_hi"]] *= v.shape[1]
    frame = pd.concat([frame, effects], axis=1)
    if baseline is not None:                             # per topic, on the values (not their logs)
        raw = np.asarray(values, dtype=np.float64)
        frame["wins"] = (raw[ia] > raw[ib]).sum(axis=1)
        frame["ties"] = (raw[ia] == raw[ib]).sum(axis=1)
        frame["losses"] = (raw[ia] < raw[ib]).sum(axis=1)
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
    """a, b, .., z, aa, ab, ..: one label per run (with more than 26 runs the marks of a cell
    are separated by commas, :func:`_join_marks`)."""
    out = []
    for i in range(k):
        s, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _join_marks(marks: Sequence[str], runs: int) -> str:
    """The letters of one cell: run together up to 26 runs (``bco``), comma-separated beyond
    (``b,c,aa``), where two letters could otherwise read as one run's (``a`` ``b`` as ``ab``)."""
    return ",".join(marks) if runs > 26 else "".join(marks)


_LATEX = {"\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&", "%": "\\%",
          "#": "\\#", "_": "\\_", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text: its special characters ``\\ { } $ & % # _ ~ ^`` escaped."""
    return "".join(_LATEX.get(c, c) for c in str(text))


def markdown_escape(text: str) -> str:
    """``text`` for a markdown table cell: ``|`` escaped (``\\|``), so it does not split the row."""
    return str(text).replace("|", "\\|")


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
    #: measure -> its ``AGGREGATE`` (``mean``, ``sum``, ``gmean``); absent: ``mean``
    aggregates: dict = field(default_factory=dict)

    def significant(self) -> np.ndarray:
        """Bool mask over ``pairs``: the chosen test rejects at ``alpha`` after correction."""
        if self.test == "paper000":
            p = self.pairs[["p_t_adj", "p_wilcoxon_adj", "p_sign_adj"]].max(axis=1)
        else:
            p = self.pairs[f"p_{self.test}_adj"]
        return (p < self.alpha).to_numpy()

    def means(self) -> pd.DataFrame:
        """Each measure over topics as trec_eval's ``all`` row (:func:`maxent.evaluate.run_summary`):
        the mean, the sum of counts, the geometric mean for ``gm_map``. Rows runs, columns
        measures (report order)."""
        m = self.values.groupby(["run", "measure"], sort=False)["value"].mean().unstack("measure")
        m = m.loc[list(self.runs), list(self.measures)]
        other = [k for k in self.measures if self.aggregates.get(k, "mean") != "mean"]
        if other:
            import pandas as pd

            from maxent.evaluate import run_summary

            m = m.copy()
            for k in other:
                part = self.values[self.values["measure"] == k]
                run_id, names = pd.factorize(part["run"])
                v = run_summary(SimpleNamespace(AGGREGATE=self.aggregates[k]), part["value"].to_numpy(dtype=np.float64), run_id, len(names))
                m[k] = pd.Series(v, index=names).reindex(m.index).to_numpy()
        return m

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

    def wins_ties_losses(self) -> dict[tuple[str, str], tuple[int, int, int]] | None:
        """With a baseline: (run, measure) -> (wins, ties, losses), the topics where the run's
        value is higher than, equal to or lower than the baseline's (the baseline itself is
        absent). None without a baseline."""
        if self.baseline is None or "wins" not in self.pairs:
            return None
        return {(r.run_a, r.measure): (int(r.wins), int(r.ties), int(r.losses))
                for r in self.pairs.itertuples(index=False)}

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
        cell = markdown_escape if fmt == "markdown" else str
        for r, s in zip(self.pairs.itertuples(index=False), sig):
            rows.append([cell(r.measure), cell(r.run_a), cell(r.run_b),
                         f"{r.diff:+.{digits}f} [{r.diff_lo:+.{digits}f}, {r.diff_hi:+.{digits}f}]",
                         f"{r.d:+.2f} [{r.d_lo:+.2f}, {r.d_hi:+.2f}]",
                         *[f"{getattr(r, f'p_{t}_adj'):.4f}" for t in TESTS], "*" if s else ""])
        note = (f"p-values {self.correction}-corrected over the pairs of each measure; "
                f"sig: {self.test} at alpha {self.alpha:g}")
        logs = [m for m in self.measures if self.aggregates.get(m) == "gmean"]
        if logs:
            note += f"; {', '.join(logs)}: a - b and d_z of ln max(value, 1e-5), a - b = ln(a / b)"
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

        k = len(self.runs)
        wtl = self.wins_ties_losses()

        def cell(r, m):
            v, ls = means.loc[r, m], marks[(r, m)]
            num = f"{v:.{digits}f}"
            if fmt == "terminal":
                return num + "".join(_SUP.get(c, c) for c in _join_marks(ls, k))
            if fmt == "markdown":
                num = f"**{num}**" if v == best[m] else num
                return num + (f"<sup>{_join_marks(ls, k)}</sup>" if ls else "")
            num = f"\\textbf{{{num}}}" if v == best[m] else num
            return num + (f"$^{{{_join_marks(ls, k)}}}$" if ls else "")

        def cells(r):                                 # each measure, then its W/T/L with a baseline
            out = []
            for m in self.measures:
                out.append(cell(r, m))
                if wtl is not None:
                    out.append("/".join(str(x) for x in wtl[(r, m)]) if (r, m) in wtl else "-")
            return out

        columns = [c for m in self.measures for c in ([m, f"{m} W/T/L"] if wtl is not None else [m])]
        head = ["#", "run", *columns]
        body = [[l, r, *cells(r)] for l, r in zip(letters, self.runs)]
        legend = self.legend()
        if wtl is not None:
            legend += (f"; W/T/L: topics where the run's value is higher than, equal to or lower than "
                       f"{self.baseline}'s")
        if fmt == "markdown":
            head = [markdown_escape(h) for h in head]
            body = [[row[0], markdown_escape(row[1]), *row[2:]] for row in body]
            return _markdown(head, body, 2) + f"\n\n{legend}; best in bold.\n"
        if fmt == "latex":
            esc = latex_escape
            lines = ["\\begin{tabular}{ll" + "r" * len(columns) + "}", "\\toprule",
                     " & ".join(["", "run", *[esc(c) for c in columns]]) + " \\\\", "\\midrule"]
            lines += [" & ".join([row[0], esc(row[1]), *row[2:]]) + " \\\\" for row in body]
            lines += ["\\bottomrule", "\\end{tabular}", f"% {legend}; best in bold."]
            return "\n".join(lines) + "\n"
        return _aligned(head, body) + f"\n{legend}\n"


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
    n_permutations : 1 to :data:`MAX_PERMUTATIONS`; n_bootstrap : 1 to :data:`MAX_BOOTSTRAP`;
        seed : integer >= 0. Memory does not grow with them (resamples are drawn in blocks).

    Returns
    -------
    Comparison

    Notes
    -----
    Topics are told apart as the readers tell qids apart, by their bytes: two qids that are
    not UTF-8 stay two topics even when their text (with replacement characters) is the same.
    """
    import pandas as pd

    from maxent.evaluate import evaluate, resolve_measures

    if test not in MARK_TESTS:
        raise ParameterError(f"test must be one of {', '.join(MARK_TESTS)}, got {test!r}")
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must be in (0, 1), got {alpha}")
    _check_resampling(n_permutations, n_bootstrap, seed)
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
    code = _topic_positions(frame, qrels, loaded, metrics, complete)
    if not complete:
        per_run = [set(code[(frame["run"] == n).to_numpy()]) for n in names]
        keep = np.isin(code, np.fromiter(set.intersection(*per_run), dtype=np.int64))
        frame, code = frame[keep], code[keep]
    topics = list(dict.fromkeys(code.tolist()))
    keyed = frame.assign(topic=code)
    parts = []
    aggregates = {str(m): getattr(m, "AGGREGATE", "mean") for m in metrics}
    for m in metrics:
        wide = (keyed[keyed["measure"] == str(m)].pivot(index="run", columns="topic", values="value")
                .reindex(index=names, columns=topics))
        parts.append(compare_values(wide.to_numpy(), names, measure=str(m), baseline=baseline,
                                    correction=correction, n_permutations=n_permutations,
                                    n_bootstrap=n_bootstrap, seed=seed, aggregate=aggregates[str(m)]))
    settings = {"permutations": n_permutations, "bootstrap": n_bootstrap, "seed": seed, "depth": depth,
                "complete": complete, "topics": len(topics)}
    return Comparison(frame.reset_index(drop=True), pd.concat(parts, ignore_index=True), tuple(names),
                      tuple(str(m) for m in metrics), test, correction, alpha, baseline, settings,
                      aggregates)


def _topic_positions(frame: pd.DataFrame, qrels, runs, metrics, complete: bool) -> np.ndarray:
    """The qrels position of every row's topic: the key the readers use (the qid's bytes), so
    that qids whose text is the same (not UTF-8, shown with replacement characters) stay apart.

    :func:`maxent.evaluate.evaluate` lists, for every measure, the runs in order and each run's
    topics in qrels order (all of them with ``complete``, else those it retrieved for); the
    positions are rebuilt so and checked against the frame's topic names and runs.
    """
    import pandas as pd

    from maxent.trec import topic_codes

    T = len(qrels.topics)
    per_run = []
    for run in runs:
        if complete:
            per_run.append(np.arange(T, dtype=np.int64))
        else:
            c = topic_codes(run.qid, qrels.topic_index)
            per_run.append(np.unique(c[c >= 0]))
    one = np.concatenate(per_run) if per_run else np.zeros(0, dtype=np.int64)
    code = np.tile(one, len(metrics))
    run = np.tile(np.repeat(np.array([r.name for r in runs], dtype=object), [len(c) for c in per_run]),
                  len(metrics))
    if (len(code) == len(frame) and np.array_equal(frame["run"].to_numpy(dtype=object), run)
            and np.array_equal(frame["topic"].to_numpy(dtype=object), np.asarray(qrels.topics, dtype=object)[code])):
        return code
    # another row order: topic names as keys, which must then be unique per run and measure
    if frame.duplicated(["run", "topic", "measure"]).any():
        raise ParameterError("two topics of the qrels have the same name; cannot pair their values")
    return pd.factorize(frame["topic"])[0].astype(np.int64)

