"""``maxent evaluate`` (also ``python -m maxent.evaluate``): trec_eval's command line.

``maxent evaluate QRELS RUN... -m MEASURE... [-q] [-c] [-l N] [-M N] [--format trec|csv]``
prints lines comparable one for one with trec_eval's. No output format imports pandas or
scipy, so the command starts fast.
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from maxent.cli._common import SCORE_PRECISION_HELP, HelpFormatter, check_options, plain_text, run_command
from maxent.cli.progress import phase
from maxent.errors import InputWarning, MeasureNameError, TopicWarning
from maxent.evaluate import resolve_measures, run_summary
from maxent.metrics import METRICS, Metric, parse_measure
from maxent.ranked import RankedLists, rank_runs
from maxent.trec import read_qrels, read_runs

__all__ = ["main"]


def _trec_key(m: Metric):
    """Sort key of trec_eval's output order, from the class's ``TREC_ORDER`` (the cut name's
    place with a cutoff); measures trec_eval lacks follow, in registry order."""
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
    """trec_eval's output: per-topic lines (``-q``, only for topics the run retrieved for, as
    trec_eval), then the ``all`` block of each run."""
    measures = sorted(measures, key=_trec_key)
    values = [m.value(lists) for m in measures]
    names = [m.trec_name() for m in measures]
    run_id = _run_ids(lists, runs)
    summaries = [run_summary(m, v, run_id, len(runs)) for m, v in zip(measures, values)]
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
    """The :func:`evaluate_lists` frame as ``frame.to_csv(index=False, float_format="%.17g")``
    writes it, without importing pandas."""
    runs = [_csv_field(str(r)) for r in lists.runs]
    topics = [_csv_field(str(t)) for t in lists.topics]
    out.write("run,topic,measure,value\n")
    for m in measures:
        name = _csv_field(str(m))
        values = ["%.17g" % v if v == v else "" for v in m.value(lists).tolist()]
        out.write("".join(f"{r},{t},{name},{v}\n" for r, t, v in zip(runs, topics, values)))


def _describe(name: str) -> str:
    m = parse_measure(name)
    lines = [f"{m}  (trec_eval: {m.trec_name()})", "", plain_text(type(m).__doc__), "", "Parameters:"]
    for k, spec in m.PARAMS.items():
        lines.append(f"  {k} (default {spec.default!r}): {plain_text(spec.desc)}")
    return "\n".join(lines)


# names trec_eval accepts with -m that every ``all`` block prints anyway
_ALWAYS_PRINTED = ("runid", "num_q")


def _parser(prog: str = "maxent evaluate") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
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
    p.add_argument("--describe", metavar="MEASURE", help="print a measure's definition and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


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
    with phase("reading and ranking the runs"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TopicWarning)
        warnings.simplefilter("always", InputWarning)
        runs = read_runs(args.runs)
        lists = rank_runs(runs, qrels, depth=args.depth, complete=args.complete,
                          precision=args.score_precision)
    # trec_eval is silent about qrels topics a run lacks, not about lines it cannot use
    for message in messages + [str(w.message) for w in caught]:
        if "have no results" not in message:
            print(f"warning: {message}", file=sys.stderr)
    with phase(f"evaluating {len(lists)} lists and writing"):
        if args.format == "csv":
            _print_csv(lists, measures, sys.stdout)
        else:
            _print_trec(lists, measures, runs, args.per_topic, sys.stdout)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None, prog: str = "maxent evaluate") -> int:
    p = _parser(prog)
    args = p.parse_args(argv)
    return run_command(lambda a: _run_cli(a, p), args)
