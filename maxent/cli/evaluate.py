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

from maxent.cli._common import (SCORE_PRECISION_HELP, HelpFormatter, add_inputs, add_measures, check_options,
                                measure_names, plain_text, resolve_inputs, run_command)
from maxent.cli.progress import phase
from maxent.errors import InputWarning, MeasureNameError, TopicWarning
from maxent.evaluate import judged_only, resolve_measures, run_summary
from maxent.metrics import MEASURE_SETS, METRICS, Metric, parse_measure
from maxent.metrics.registry import measure_sets
from maxent.metrics.names import trec_eval_args
from maxent.ranked import RankedLists, rank_runs
from maxent.trec import read_qrels, read_runs

__all__ = ["main"]

# trec_eval's measure table (measures.c of 10.0, a superset of 9.0.7's): the order of its lines
TREC_EVAL_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg",
    "Rprec_mult_avgjg", "yaap", "rbp", "rbp_resid", "unj",
)
_TREC_RANK = {name: i for i, name in enumerate(TREC_EVAL_ORDER)}
MISSING_ZSCORE = -1000000.0   # trec_eval.h MISSING_ZSCORE_VALUE


def _trec_key(m: Metric):
    """Sort key of trec_eval's output order: the family's place in trec_eval's measure table
    (``TREC_EVAL_ORDER``; the class's ``TREC_ORDER`` for a family it lacks), then the
    parameter; measures trec_eval lacks follow, in registry order."""
    cls = type(m)
    at = getattr(m, m.AT_PARAM, None) if m.AT_PARAM else None
    if at is None and cls.TREC_SUFFIX and isinstance(getattr(m, cls.TREC_SUFFIX, None), (int, float)):
        at = getattr(m, cls.TREC_SUFFIX)
    cut = cls.TREC_CUT_NAME is not None and m.AT_PARAM == "cutoff" and at is not None
    fam = (cls.TREC_CUT_NAME if cut else cls.TREC_NAME) or cls.NAME
    if cls.TREC_NAME is not None and fam in _TREC_RANK:
        rank = float(_TREC_RANK[fam])
    elif cls.TREC_ORDER:
        rank = 100.0 + cls.TREC_ORDER[min(int(cut), len(cls.TREC_ORDER) - 1)]
    else:
        rank = 1000.0 + METRICS.index(cls)
    return (rank, fam, -1 if at is None else at, m.trec_name(), str(m))


def _fmt(m: Metric, v: float, z: bool = False) -> str:
    if v != v:
        return "  -nan"   # glibc's %6.4f of trec_eval's 0.0 / 0.0
    return f"{int(round(v))}" if m.INTEGER and not z else f"{v:6.4f}"


def _run_ids(lists: RankedLists, runs) -> np.ndarray:
    """Index in ``runs`` of each list's run (lists come grouped by run, in ``runs`` order)."""
    names = lists.runs
    if len(names) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(names[1:] != names[:-1]) + 1))
    ids = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(names))))
    if len(starts) == len(runs):
        return ids
    index = {r.name: i for i, r in enumerate(runs)}
    return np.array([index[n] for n in names], dtype=np.int64)


def _read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """trec_eval's -Z file: ``qid measure mean stddev`` lines -> {(qid, measure): (mean, std)}."""
    out = {}
    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            tok = line.split()
            if not tok:
                continue
            if len(tok) != 4:
                raise MeasureNameError(f"-Z {path}: line {i} is not 'qid measure mean stddev'")
            try:
                out[(tok[0].decode(), tok[1].decode())] = (float(tok[2]), float(tok[3]))
            except ValueError:
                raise MeasureNameError(f"-Z {path}: line {i}: mean and stddev must be numbers") from None
    return out


def _zscore(v: np.ndarray, topics, name: str, table) -> np.ndarray:
    """trec_eval's te_convert_to_zscore for one measure: (v - mean) / stddev, 0 when stddev is 0
    and v is the mean, else (or when the file lacks the topic or measure) -1000000."""
    out = np.empty(len(v))
    for b, t in enumerate(topics):
        ms = table.get((str(t), name))
        if ms is None:
            out[b] = MISSING_ZSCORE
        elif ms[1]:
            out[b] = (v[b] - ms[0]) / ms[1]
        else:
            out[b] = 0.0 if v[b] == ms[0] else MISSING_ZSCORE
    return out


class _Table:
    """Per-list values and per-run summaries of the measures, in trec_eval's order."""

    def __init__(self, lists, measures, runs, rel, version, zscores=None, evaluated=None):
        self.measures = sorted(measures, key=_trec_key)
        self.names = [m.trec_label(rel, version) for m in self.measures]
        self.values = [m.value(lists) for m in self.measures]
        if evaluated is not None:   # trec_eval's 0 / 0 on the lists it evaluates with nothing left
            empty = evaluated & (lists.lengths == 0)
            for m, v in zip(self.measures, self.values):
                if hasattr(m, "undefined_if_empty"):
                    v[empty & m.undefined_if_empty(lists)] = np.nan
        self.texts = [m.text(lists) if hasattr(m, "text") else None for m in self.measures]
        if zscores is not None:
            self.values = [_zscore(v, lists.topics, n, zscores) for v, n in zip(self.values, self.names)]
        self.run_id = _run_ids(lists, runs)
        self.summaries = [run_summary(m, v, self.run_id, len(runs)) for m, v in zip(self.measures, self.values)]
        self.n_q = np.bincount(self.run_id, minlength=len(runs))
        self.bounds = np.concatenate(([0], np.cumsum(self.n_q)))

    def count_all_relevant(self, n: int) -> None:
        """With -c, trec_eval's ``num_rel`` summary counts the qrels' judgements of grade > 0
        over all topics, whatever the relevance level."""
        for k, name in enumerate(self.names):
            if name == "num_rel":
                self.summaries[k] = np.full(len(self.summaries[k]), float(n))

    topic_rank = None   # qrels topic -> its place in the qrels' topics (raw bytes, strcmp order)

    def rows(self, i, lists, retrieved):
        """List indices of run i printed per topic (those it retrieved for), by topic as
        trec_eval's strcmp orders the qids' bytes (not their printed text, in which a byte that
        is not UTF-8 shows as \\xNN): the order of the qrels' topics."""
        rows = np.arange(self.bounds[i], self.bounds[i + 1])
        rows = rows[retrieved[rows]]
        if self.topic_rank is None:
            return sorted(rows, key=lambda b: str(lists.topics[b]).encode())
        return sorted(rows, key=lambda b: self.topic_rank[lists.topics[b]])


def _print_trec(table: _Table, lists, runs, per_topic, summary, z, retrieved, always, out) -> None:
    """trec_eval's output: per-topic lines (``-q``, only for topics the run retrieved for, as
    trec_eval), then the ``all`` block of each run (not with ``-n``); ``-Z`` marks lines Z.
    ``always``: which of runid and num_q print (requested, or in a requested set)."""
    pre = "Z" if z else ""
    for i, run in enumerate(runs):
        lines = []
        if per_topic:
            for b in table.rows(i, lists, retrieved):
                t = lists.topics[b]
                lines.extend(f"{pre}{nm:<22}\t{t}\t{_fmt(m, v[b], z) if tx is None else tx[b]}\n"
                             for m, nm, v, tx in zip(table.measures, table.names, table.values, table.texts)
                             if m.PER_TOPIC)
        if summary:
            if "runid" in always:
                lines.append(f"{'runid':<22}\tall\t{run.tag or run.name}\n")
            if "num_q" in always:
                lines.append(f"{pre}{'num_q':<22}\tall\t{table.n_q[i]:6.4f}\n" if z
                             else f"{'num_q':<22}\tall\t{table.n_q[i]}\n")
            lines.extend(f"{pre}{nm:<22}\tall\t{_fmt(m, s[i], z)}\n"
                         for m, nm, s in zip(table.measures, table.names, table.summaries) if m.SUMMARY)
        out.write("".join(lines))


def _csv_field(text: str) -> str:
    """A CSV field quoted as pandas' and the csv module's QUOTE_MINIMAL do."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _number(v: float) -> str:
    return "%.17g" % v if v == v else ""


def _print_csv(table: _Table, lists: RankedLists, runs, out) -> None:
    """``run,topic,measure,value,tag`` rows: per topic (as :func:`evaluate_lists` with the run's
    tag), then each run's ``all`` rows (trec_eval's summary); values as ``%.17g``, quoted as
    pandas' ``to_csv``, without importing pandas. ``run`` is the run's file name, so two runs
    with the same tag stay apart."""
    out.write("run,topic,measure,value,tag\n")
    run_of = [_csv_field(str(r.name)) for r in runs]
    tags = [_csv_field(str(r.tag)) for r in runs]
    topics = [_csv_field(str(t)) for t in lists.topics]
    rid = table.run_id.tolist()
    for m, v in zip(table.measures, table.values):
        name = _csv_field(str(m))
        out.write("".join(f"{run_of[r]},{t},{name},{_number(x)},{tags[r]}\n"
                          for r, t, x in zip(rid, topics, v.tolist())))
    for i in range(len(runs)):
        out.write("".join(f"{run_of[i]},all,{_csv_field(str(m))},{_number(s[i])},{tags[i]}\n"
                          for m, s in zip(table.measures, table.summaries)))


def _print_json(table: _Table, lists: RankedLists, runs, rel, version, out) -> None:
    """One object per run: file name, tag, num_q, the ``all`` values and the per-topic values,
    keyed by canonical measure name (``trec_names`` maps them to trec_eval's line names)."""
    import json

    keys = [str(m) for m in table.measures]
    doc = []
    for i, run in enumerate(runs):
        rows = range(table.bounds[i], table.bounds[i + 1])
        doc.append({
            "run": run.name, "tag": run.tag, "num_q": int(table.n_q[i]),
            "trec_names": dict(zip(keys, table.names)),
            "all": {k: _json_value(s[i]) for k, s in zip(keys, table.summaries)},
            "topics": {str(lists.topics[b]): {k: _json_value(v[b]) for k, v in zip(keys, table.values)}
                       for b in rows},
        })
    json.dump({"version": version, "relevance_level": rel, "runs": doc}, out, indent=1)
    out.write("\n")


def _json_value(v):
    v = float(v)
    return v if v == v else None


def _describe(name: str) -> str:
    m = parse_measure(name)
    lines = [f"{m}  (trec_eval: {m.trec_name()})", "", plain_text(type(m).__doc__), "", "Parameters:"]
    for k, spec in m.PARAMS.items():
        lines.append(f"  {k} (default {spec.default!r}): {plain_text(spec.desc)}")
    return "\n".join(lines)


# names trec_eval accepts with -m that every ``all`` block prints anyway
_ALWAYS_PRINTED = ("runid", "num_q")
_FORMATS = {"-R": ("qrels", "relevance judgements"), "-T": ("trec_results", "run")}


def _always_printed(given: list[str], n_runs: int) -> set[str]:
    """runid and num_q print, as trec_eval, when named or when a set (official, all_trec, ...)
    is: ``-m map`` alone prints neither. With several runs runid always prints: it separates
    the runs' blocks (trec_eval takes one run)."""
    names = {g.strip() for g in given}
    out = {n for n in _ALWAYS_PRINTED if n in names or names & set(MEASURE_SETS) or names & _NICKNAMES}
    return out | ({"runid"} if n_runs > 1 else set())


# trec_eval's nicknames (measures.c); each names runid and num_q
_NICKNAMES = {"official", "all_trec", "set", "all_prefs", "prefs", "qrels_jg"}


def _atol(text: str) -> int:
    """An integer option read as trec_eval's atol: leading digits; beyond a C long, no limit."""
    import re

    m = re.match(r"\s*([+-]?\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    return int(m.group(1))


def _parser(prog: str = "maxent evaluate") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Evaluate TREC runs; trec_eval-compatible output.",
        formatter_class=HelpFormatter,
        epilog="examples:\n  python -m maxent.evaluate qrels.txt run.gz -m map -m P.10 -q\n"
               "  python -m maxent.evaluate qrels.txt run.gz -m P -m ndcg_cut.10,20   # families as trec_eval\n"
               "  python -m maxent.evaluate qrels.txt runs/ -m 'nDCG@10(gain=exp)' -m GAP --format csv\n"
               "  python -m maxent.evaluate qrels.txt run.gz --score-precision double   # as trec_eval 10.0\n"
               "  python -m maxent.evaluate --describe GAP\n",
    )
    add_inputs(p, "qrels file (qid iter docno grade)", "run files or directories of runs")
    add_measures(p, "measure (ir_measures or trec_eval name; a bare trec_eval family such as P gives its "
                    "default cutoffs, P.5,10 chosen ones; or a set: official, all_trec)", "official")
    p.add_argument("-q", dest="per_topic", action="store_true", help="print per-topic values too")
    p.add_argument("-n", dest="summary", action="store_false",
                   help="no summary: print no 'all' lines (trec_eval --nosummary)")
    p.add_argument("-c", dest="complete", action="store_true",
                   help="average over all qrels topics, missing topics scoring 0")
    p.add_argument("-l", dest="rel", type=int, default=None,
                   help="relevance threshold of binary measures, >= 0 (0: every judged document "
                        "is relevant; default: each measure's own, 1)")
    p.add_argument("-M", dest="depth", type=_atol, default=None,
                   help="documents per topic kept (default: all, as trec_eval; beyond 2^62: all)")
    p.add_argument("-N", dest="num_docs", type=_atol, default=None,
                   help="number of documents in the collection (trec_eval -N; only utility uses "
                        "it, in its fourth coefficient's term; default 0)")
    p.add_argument("-J", dest="judged_only", action="store_true",
                   help="judged documents only: drop unjudged documents from every ranked list "
                        "before evaluating (trec_eval -J)")
    p.add_argument("-Z", dest="zscores", metavar="ZMEAN_FILE",
                   help="print z-scores against the 'qid measure mean stddev' lines of this file "
                        "(trec_eval -Z)")
    p.add_argument("-R", dest="rel_format", default="qrels",
                   help="relevance judgements format: only qrels (trec_eval's default)")
    p.add_argument("-T", dest="results_format", default="trec_results",
                   help="run format: only trec_results (trec_eval's default)")
    p.add_argument("--score-precision", choices=("single", "double"), default="single",
                   help=SCORE_PRECISION_HELP + "; double also takes trec_eval 10.0's iprec_at_recall rounding")
    p.add_argument("--format", choices=("trec", "csv", "json"), default="trec", help="output format")
    p.add_argument("--quiet", action="store_true", help="print no warnings")
    p.add_argument("--describe", metavar="MEASURE", help="print a measure's definition and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _fold(messages: list[str]) -> list[str]:
    """Warnings that repeat per run (``run X: ...`` with the same rest) folded into one line
    naming how many runs, and the first of them."""
    groups: dict[str, list[str]] = {}
    for message in messages:
        head, sep, rest = message.partition(": ")
        key = rest if sep and head.startswith("run ") else message
        groups.setdefault(key, []).append(head[4:] if key is rest else "")
    out = []
    for key, runs in groups.items():
        if len(runs) > 1 and runs[0]:
            out.append(f"{len(runs)} runs ({runs[0]}, {runs[1]}{', ...' if len(runs) > 2 else ''}): {key}")
        elif runs[0]:
            out.append(f"run {runs[0]}: {key}")
        else:
            out.append(key)
    return out


def _run_cli(args, p) -> int:
    if args.describe:
        print(_describe(args.describe))
        return 0
    resolve_inputs(args)
    if not args.qrels or not args.runs:
        p.error("QRELS and at least one RUN are required")
    for flag, value in (("-R", args.rel_format), ("-T", args.results_format)):
        want, what = _FORMATS[flag]
        if value != want:
            raise MeasureNameError(f"{flag} {value}: unsupported {what} format; only {want} (trec_eval's "
                                   "default) is read")
    if args.depth is not None and args.depth >= 2**62:
        args.depth = None
    check_options(args)
    version = "10.0" if args.score_precision == "double" else "9.0.7"
    given = measure_names(args.measures, ["official"])
    names = [m for m in trec_eval_args(given, measure_sets(args.score_precision))
             if m.strip() not in _ALWAYS_PRINTED]
    measures = resolve_measures(names, args.rel, args.score_precision) if names else []
    if args.num_docs is not None:   # trec_eval -N: the collection size of utility's D term
        import dataclasses
        measures = list(dict.fromkeys(dataclasses.replace(m, n_docs=args.num_docs) if "n_docs" in m.PARAMS
                                      else m for m in measures))
    if args.format != "trec" and not measures:
        raise MeasureNameError(f"--format {args.format} needs at least one measure besides runid/num_q")
    zscores = _read_zscores(args.zscores) if args.zscores else None
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
    # trec_eval's per-topic lines: topics the run has results for; 10.0's -c adds the others,
    # each evaluated as a ranking of one unjudged document
    retrieved = lists.lengths > 0
    if args.complete and version == "10.0":
        retrieved[:] = True
    if args.judged_only:
        lists = judged_only(lists)
    # trec_eval is silent about qrels topics a run lacks, not about lines it cannot use
    if not args.quiet:
        for message in _fold([m for m in messages + [str(w.message) for w in caught]
                              if "have no results" not in m]):
            print(f"warning: {message}", file=sys.stderr)
    level = 1 if args.rel is None else args.rel
    with phase(f"evaluating {len(lists)} lists and writing"):
        table = _Table(lists, measures, runs, level, version, zscores,
                       evaluated=retrieved if args.judged_only else None)
        if args.complete:   # te_calc_avg_num_rel: every judged grade > 0, any -l
            table.count_all_relevant(int((qrels.flat[3] > 0).sum()))
        if args.per_topic:   # the qrels' topics are in the bytes' strcmp order (maxent.trec)
            table.topic_rank = {t: k for k, t in enumerate(qrels.topics)}
        if args.format == "csv":
            _print_csv(table, lists, runs, sys.stdout)
        elif args.format == "json":
            _print_json(table, lists, runs, level, version, sys.stdout)
        else:
            _print_trec(table, lists, runs, args.per_topic, args.summary, zscores is not None, retrieved,
                        _always_printed(given, len(runs)), sys.stdout)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None, prog: str = "maxent evaluate") -> int:
    p = _parser(prog)
    args = p.parse_args(argv)
    return run_command(lambda a: _run_cli(a, p), args)
