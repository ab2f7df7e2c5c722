"""Evaluate TREC runs against qrels: a Python API and a trec_eval-compatible command line.

``python -m maxent.evaluate QRELS RUN... -m MEASURE... [-q] [-c] [-l N] [-M N]
[--score-precision single|double] [--format trec|csv]`` prints, in ``trec`` format, lines
comparable one for one with trec_eval's (``measure<TAB>topic<TAB>value``, ``%6.4f``, an
``all`` block per run; with ``-q -c``, per-topic lines only for the topics a run retrieved
for, as trec_eval). As trec_eval, ``-M`` (depth) is unlimited by default. No output format
imports pandas or scipy, so the command starts fast; the :func:`evaluate` API returns a
pandas frame. A step that takes over 2 s says so on stderr (:mod:`maxent._feedback`). With
``--jobs N`` (default ``auto``: into the CPUs idle at that moment) a forked child reads and
ranks a share of the run files (:mod:`maxent._fork`); output and errors are the same.

Score precision: trec_eval 9.x (and pytrec_eval, and the official TREC result files) ranks
by scores stored as C floats; trec_eval 10.0 stores them as doubles. ``single`` (default)
reproduces the former, ``double`` the latter (see :func:`maxent.ranked.rank_runs`).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import warnings
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from maxent._fork import read_and_rank as read_and_rank_forked
from maxent._feedback import phase
from maxent.errors import InputError, InputWarning, MaxEntError, MeasureNameError, ParameterError, TopicWarning
from maxent.metrics import MEASURE_SETS, METRICS, Metric, parse_measure, parse_measures
from maxent.metrics.ap import MIN_GEO_MEAN
from maxent.ranked import RankedLists, check_depth, rank_runs
from maxent.trec import Qrels, Run, read_qrels, read_runs

if TYPE_CHECKING:  # pandas is imported where a frame is built, not at start-up
    import pandas as pd

__all__ = ["evaluate", "evaluate_lists", "aggregate", "main", "resolve_measures"]



def resolve_measures(measures: str | Metric | Iterable[str | Metric], rel: int | None = None) -> list[Metric]:
    """Names (or measure-set names ``official``/``all_trec``), metric objects or ir_measures
    measures (:func:`maxent.inputs.as_measure`) -> metric objects.

    ``rel`` (trec_eval ``-l``) sets the relevance threshold of every binary measure.
    """
    from maxent.inputs import as_measure

    if isinstance(measures, (str, Metric)) or hasattr(measures, "params"):  # one name, metric or ir_measures measure
        measures = [measures]
    elif measures is None or isinstance(measures, (bytes, dict)) or not hasattr(measures, "__iter__"):
        raise MeasureNameError("measures: expected a measure name, a metric object or a list of them, "
                               f"got {type(measures).__name__}")
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, (int, np.integer)) or rel < 0):
        raise ParameterError(f"rel must be an integer >= 0 (trec_eval -l), got {rel!r}")
    out: list[Metric] = []
    for m in measures:
        if isinstance(m, str) and not m.strip():
            raise MeasureNameError("empty measure name")
        if isinstance(m, str):
            names = MEASURE_SETS.get(m, [m])
        elif isinstance(m, Metric) or hasattr(m, "params"):    # a metric, or an ir_measures measure
            names = [as_measure(m)]
        else:
            raise MeasureNameError(f"measures: expected measure names (str), metric objects or ir_measures "
                                   f"measures, got {type(m).__name__} {m!r}")
        out.extend(parse_measures(names))
    if not out:
        raise MeasureNameError("no measure given")
    if rel is not None:
        out = [dataclasses.replace(m, rel=int(rel)) if "rel" in m.PARAMS else m for m in out]
    seen, unique = set(), []
    for m in out:
        if m not in seen:
            seen.add(m)
            unique.append(m)
    return unique


def evaluate_lists(lists: RankedLists, measures: Sequence[Metric]) -> "pd.DataFrame":
    """Per-list values of every measure: a long frame (run, topic, measure, value)."""
    import pandas as pd

    if not measures:
        raise MeasureNameError("no measure given")
    B = len(lists)
    frames = []
    for m in measures:
        frames.append(pd.DataFrame({
            "run": lists.runs, "topic": lists.topics,
            "measure": np.full(B, str(m), dtype=object), "value": m.value(lists),
        }))
    return pd.concat(frames, ignore_index=True)


def evaluate(
    qrels: Qrels | str,
    runs: Run | str | Sequence[Run | str],
    measures=("AP", "P@10", "nDCG"),
    *,
    depth: int | None = None,
    complete: bool = False,
    rel: int | None = None,
    score_precision: str = "single",
) -> "pd.DataFrame":
    """Evaluate runs: one row per (run, topic, measure) with its value.

    Parameters
    ----------
    qrels : a path, a :class:`Qrels`, a PyTerrier or ir_datasets frame or a pytrec_eval dict
        (:func:`maxent.inputs.as_qrels`)
    runs : one run or several: paths (files or folders of run files), :class:`Run` objects,
        frames, pytrec_eval dicts, a mapping ``{name: run}`` or a frame with a ``name``
        column (:func:`maxent.inputs.as_runs`)
    measures : measure names (ir_measures or trec_eval style), metric objects or
        ir_measures measure objects (``ir_measures.nDCG@10``)
    depth : trec_eval ``-M``: documents kept per topic (default None: all, as trec_eval)
    complete : trec_eval ``-c``; rel : trec_eval ``-l`` (0: every judged document relevant)
    score_precision : ``single`` (trec_eval 9.x, pytrec_eval, official TREC results: scores
        compared as C floats) or ``double`` (trec_eval 10.0: as C doubles)

    See Also
    --------
    aggregate : per-run means (sums for counts), as trec_eval's ``all`` rows.
    """
    from maxent.inputs import as_qrels, as_runs

    depth = check_depth(depth)
    qrels = as_qrels(qrels)
    measures = resolve_measures(measures, rel)
    loaded = as_runs(runs)
    lists = rank_runs(loaded, qrels, depth=depth, complete=complete, precision=score_precision)
    return evaluate_lists(lists, measures)


def aggregate(frame: "pd.DataFrame", measures: Sequence[Metric] | None = None) -> "pd.DataFrame":
    """Per-run summary (run, measure, value, num_q), as trec_eval's ``all`` rows.

    The mean over topics; the sum for counting measures (num_ret, num_rel, num_rel_ret); the
    geometric mean of max(value, 1e-5) for ``gm_map`` (trec_eval's ``MIN_GEO_MEAN``).
    """
    kinds = {str(m): m.AGGREGATE for m in (measures or [])}
    how_by_name = {s: kinds.get(s) or parse_measure(s).AGGREGATE for s in frame["measure"].unique()}
    how_row = frame["measure"].map(how_by_name)
    logv = np.log(np.maximum(frame["value"].to_numpy(dtype=np.float64), MIN_GEO_MEAN))
    work = frame.assign(_log=np.where(how_row == "gmean", logv, 0.0))
    g = work.groupby(["run", "measure"], sort=False)
    out = g["value"].agg(["mean", "sum", "size"])
    out["gmean"] = np.exp(g["_log"].mean())
    out = out.reset_index()
    how = out["measure"].map(how_by_name)
    out["value"] = np.select([how == "sum", how == "gmean"], [out["sum"], out["gmean"]], out["mean"])
    return out.rename(columns={"size": "num_q"})[["run", "measure", "value", "num_q"]]


# ---------------------------------------------------------------------------- command line
def _trec_key(m: Metric):
    """Sort key of trec_eval's output order (measures.c), from the class's ``TREC_ORDER``:
    the place of its trec_eval name, or of its cut name (``map_cut``, ``ndcg_cut``) when the
    metric has a cutoff; measures trec_eval lacks follow, in registry order."""
    cls = type(m)
    at = getattr(m, m.AT_PARAM, None) if m.AT_PARAM else None
    cut = cls.TREC_CUT_NAME is not None and m.AT_PARAM == "cutoff" and at is not None
    if cls.TREC_ORDER:
        rank = cls.TREC_ORDER[min(int(cut), len(cls.TREC_ORDER) - 1)]
    else:
        rank = 1000 + METRICS.index(cls)
    fam = (cls.TREC_CUT_NAME if cut else cls.TREC_NAME) or cls.NAME
    return (rank, fam, -1 if at is None else at, m.trec_name())


def _fmt(m: Metric, v: float) -> str:
    return f"{int(round(v))}" if m.INTEGER else f"{v:6.4f}"


def _run_summary(m: Metric, v: np.ndarray, run_id: np.ndarray, n_runs: int) -> np.ndarray:
    """Per-run ``all`` value of one measure (numpy only, as :func:`aggregate`)."""
    n = np.bincount(run_id, minlength=n_runs)
    if m.AGGREGATE == "gmean":
        logv = np.log(np.maximum(v, MIN_GEO_MEAN))
        return np.exp(np.bincount(run_id, weights=logv, minlength=n_runs) / np.maximum(n, 1))
    total = np.bincount(run_id, weights=v, minlength=n_runs)
    return total if m.AGGREGATE == "sum" else total / np.maximum(n, 1)


def _run_ids(lists: RankedLists, runs) -> np.ndarray:
    """Index in ``runs`` of each list's run (lists come grouped by run, in ``runs`` order)."""
    names = lists.runs
    if len(names) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(names[1:] != names[:-1]) + 1))
    index = {r.name: i for i, r in enumerate(runs)}
    ids = np.array([index[names[a]] for a in starts], dtype=np.int64)   # one per run
    return np.repeat(ids, np.diff(np.append(starts, len(names))))


def _print_trec(lists: RankedLists, measures, runs, per_topic, out) -> None:
    """trec_eval's output: per-topic lines (``-q``), then the ``all`` block of each run.

    Per-topic lines are printed for the topics a run retrieved for only: with ``-c`` the
    qrels topics a run lacks count (as zeros) in ``all`` but get no line, as in trec_eval.
    """
    measures = sorted(measures, key=_trec_key)
    values = [m.value(lists) for m in measures]
    names = [m.trec_name() for m in measures]
    run_id = _run_ids(lists, runs)
    summaries = [_run_summary(m, v, run_id, len(runs)) for m, v in zip(measures, values)]
    n_q = np.bincount(run_id, minlength=len(runs))
    bounds = np.concatenate(([0], np.cumsum(n_q)))
    for i, run in enumerate(runs):
        lines = []
        if per_topic:
            rows = np.arange(bounds[i], bounds[i + 1])
            rows = rows[lists.lengths[rows] > 0]
            rows = sorted(rows, key=lambda b: str(lists.topics[b]).encode())  # as trec_eval: strcmp
            for b in rows:
                t = lists.topics[b]
                lines.extend(f"{nm:<22}\t{t}\t{_fmt(m, v[b])}\n"
                             for m, nm, v in zip(measures, names, values) if m.PER_TOPIC)
        lines.append(f"{'runid':<22}\tall\t{run.tag or run.name}\n")
        lines.append(f"{'num_q':<22}\tall\t{n_q[i]}\n")
        lines.extend(f"{nm:<22}\tall\t{_fmt(m, s[i])}\n" for m, nm, s in zip(measures, names, summaries))
        out.write("".join(lines))


def _csv_field(text: str) -> str:
    """A CSV field quoted as pandas' and the csv module's QUOTE_MINIMAL do."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _print_csv(lists: RankedLists, measures, out) -> None:
    """The :func:`evaluate_lists` frame as CSV (``run,topic,measure,value``, values ``%.17g``,
    NaN empty): the text ``frame.to_csv(index=False, float_format="%.17g")`` writes, without
    importing pandas."""
    runs = [_csv_field(str(r)) for r in lists.runs]
    topics = [_csv_field(str(t)) for t in lists.topics]
    out.write("run,topic,measure,value\n")
    for m in measures:
        name = _csv_field(str(m))
        values = ["%.17g" % v if v == v else "" for v in m.value(lists).tolist()]
        out.write("".join(f"{r},{t},{name},{v}\n" for r, t, v in zip(runs, topics, values)))


_TEX = (
    (r"\\Big", ""), (r"\\big", ""), (r"\\left", ""), (r"\\right", ""), (r"\\,", " "),
    (r"\\partial", "d"), (r"\\delta", "delta"), (r"\\exp", "exp"), (r"\\ln", "ln"),
    (r"\\log", "log"), (r"\\max", "max"), (r"\\min", "min"), (r"\\sum", "sum"),
    (r"\\prod", "prod"), (r"\\le", "<="), (r"\\ge", ">="), (r"\\cdot", "*"),
    (r"\\infty", "inf"), (r"\\mathrm", ""), (r"\\text", ""),
)


def plain_text(doc: str) -> str:
    """A numpydoc/reStructuredText docstring as plain terminal text: ``.. math::`` blocks
    become indented formulas, roles and literals lose their markup, LaTeX becomes readable
    (``\\frac{a}{b}`` -> ``(a)/(b)``, ``\\sum_{n\\le k}`` -> ``sum_(n<=k)``)."""
    import inspect
    import re

    text = inspect.cleandoc(doc or "")
    text = re.sub(r"^(\s*)\.\. math::\s*(.*)$", lambda m: m.group(1) + "    " + m.group(2), text, flags=re.M)
    text = re.sub(r":(?:math|func|class|meth|data|attr|mod):`~?([^`]*)`", r"\1", text)
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(?<=[A-Za-z0-9)\]])\\(sum|prod|exp|ln|log|max|min|delta|partial)(?![A-Za-z])",
                  r" \\\1", text)                          # keep a space before words
    for tex, plain in _TEX:
        text = re.sub(tex + r"(?![A-Za-z])", plain, text)
    for _ in range(3):                                      # innermost braces first
        text = re.sub(r"_\{([^{}]*)\}", r"_(\1)", text)
        text = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", text)
    text = re.sub(r"\\frac\s*([A-Za-z0-9])\s*([A-Za-z0-9])", r"\1/\2 ", text)  # \frac1R
    text = re.sub(r"\\frac\s*([A-Za-z0-9])\s*\{", r"\1/{", text)
    for _ in range(3):
        text = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"(\1) / (\2)", text)
    text = text.replace("{", "(").replace("}", ")").replace("\\", "")
    return re.sub(r"(?<=\S)  +(?=\S)", " ", text)             # spaces left by removed macros


def _describe(name: str) -> str:
    m = parse_measure(name)
    lines = [f"{m}  (trec_eval: {m.trec_name()})", "", plain_text(type(m).__doc__), "", "Parameters:"]
    for k, spec in m.PARAMS.items():
        lines.append(f"  {k} (default {spec.default!r}): {plain_text(spec.desc)}")
    return "\n".join(lines)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (start-up): $COLUMNS,
    else the size of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's lines; appends "(default: X)" only where the help does not
    already state a default and the default is a value (not None or a False flag)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:  # as argparse's own default, minus its import of shutil
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if ("default" in text or d is None or d is False or d is argparse.SUPPRESS
                or not action.option_strings):
            return text
        return text + " (default: %(default)s)"


SCORE_PRECISION_HELP = ("how run scores are compared when ranking: single = as C floats, as "
                        "trec_eval 9.x, pytrec_eval and the official TREC result files (default); "
                        "double = as C doubles, as trec_eval 10.0")

# names trec_eval accepts with -m that every ``all`` block prints anyway
_ALWAYS_PRINTED = ("runid", "num_q")


def _jobs(text: str) -> int | None:
    """``--jobs`` value: a positive integer, or ``auto`` (None)."""
    if text == "auto":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or auto, got {text!r}")
    return n


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m maxent.evaluate",
        description="Evaluate TREC runs; trec_eval-compatible output.",
        formatter_class=HelpFormatter,
        epilog="examples:\n  python -m maxent.evaluate qrels.txt run.gz -m map -m P.10 -q\n"
               "  python -m maxent.evaluate qrels.txt runs/ -m 'nDCG@10(gain=exp)' -m GAP --format csv\n"
               "  python -m maxent.evaluate qrels.txt run.gz --score-precision double   # as trec_eval 10.0\n"
               "  python -m maxent.evaluate --describe GAP\n",
    )
    p.add_argument("qrels", nargs="?", help="qrels file (qid iter docno grade)")
    p.add_argument("runs", nargs="*", help="run files or directories of runs")
    p.add_argument("-m", dest="measures", action="append",
                   help="measure (ir_measures or trec_eval name, or a set: official, all_trec); "
                        "repeatable (default: official)")
    p.add_argument("-q", dest="per_topic", action="store_true", help="print per-topic values too")
    p.add_argument("-c", dest="complete", action="store_true",
                   help="average over all qrels topics, missing topics scoring 0")
    p.add_argument("-l", dest="rel", type=int, default=None,
                   help="relevance threshold of binary measures, >= 0 (0: every judged document "
                        "is relevant; default: each measure's own, 1)")
    p.add_argument("-M", dest="depth", type=int, default=None,
                   help="documents per topic kept (default: all, as trec_eval)")
    p.add_argument("--score-precision", choices=("single", "double"), default="single",
                   help=SCORE_PRECISION_HELP)
    p.add_argument("--format", choices=("trec", "csv"), default="trec", help="output format")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="processes reading and ranking the run files: N, or auto (default: "
                        "one per CPU that no other task is running on at that moment, per 4 MB "
                        "of run text and per file; forked after the qrels are read, Linux "
                        "only; 1 = one process). The output and errors are the same whatever N")
    p.add_argument("--describe", metavar="MEASURE", help="print a measure's definition and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _read_and_rank(args, qrels: Qrels):
    """``(runs, lists, warning messages)`` of the command's run files: in ``--jobs``
    processes when that pays (:mod:`maxent._fork`, the same result), else one by one."""
    done = read_and_rank_forked(args.runs, qrels, depth=args.depth, complete=args.complete,
                                precision=args.score_precision, jobs=args.jobs)
    if done is not None:
        return done
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TopicWarning)
        warnings.simplefilter("always", InputWarning)
        runs = read_runs(args.runs)
        lists = rank_runs(runs, qrels, depth=args.depth, complete=args.complete,
                          precision=args.score_precision)
    return runs, lists, [str(w.message) for w in caught]


def check_options(args) -> None:
    """ParameterError naming the option for a value trec_eval would not take."""
    if args.depth is not None and args.depth < 1:
        raise ParameterError(f"-M: the depth must be >= 1 (default: no cut), got {args.depth}")
    if args.rel is not None and args.rel < 0:
        raise ParameterError(f"-l: the relevance level must be >= 0, got {args.rel}")


def _run_cli(args, p) -> int:
    if args.describe:
        print(_describe(args.describe))
        return 0
    if not args.qrels or not args.runs:
        p.error("QRELS and at least one RUN are required")
    check_options(args)
    names = [m for m in (args.measures or ["official"]) if m.strip() not in _ALWAYS_PRINTED]
    measures = resolve_measures(names, args.rel) if names else []
    if args.format == "csv" and not measures:
        raise MeasureNameError("--format csv needs at least one measure besides runid/num_q")
    with phase(f"reading qrels {args.qrels}"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        qrels = read_qrels(args.qrels)
    messages = [str(w.message) for w in caught]
    with phase("reading and ranking the runs"):
        runs, lists, more = _read_and_rank(args, qrels)
    for message in messages + more:  # trec_eval is silent about qrels topics a run lacks (not
        if "have no results" not in message:  # about lines it cannot use): say so on stderr
            print(f"warning: {message}", file=sys.stderr)
    with phase(f"evaluating {len(lists)} lists and writing"):
        if args.format == "csv":
            _print_csv(lists, measures, sys.stdout)
        else:
            _print_trec(lists, measures, runs, args.per_topic, sys.stdout)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    try:
        return _run_cli(args, p)
    except MaxEntError as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (``... | head -1``): stop quietly, as trec_eval on SIGPIPE
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def exit_now(code: int) -> None:
    """Flush stdout and stderr and end the process at once with ``code``: the interpreter's
    clean-up (freeing every module and array one by one) costs about as much as evaluating
    a few runs, and a command that has printed its output has nothing left to clean."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:        # the reader went away: as main() does, 141 (SIGPIPE)
            code = 141
        except (OSError, ValueError):  # a closed stream: nothing more can be shown
            pass
    os._exit(code)


if __name__ == "__main__":
    from maxent import _startup

    _startup.imports_done()
    exit_now(main())
