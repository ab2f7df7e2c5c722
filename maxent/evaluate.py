"""Evaluate TREC runs against qrels: a Python API and a trec_eval-compatible command line.

``python -m maxent.evaluate QRELS RUN... -m MEASURE... [-q] [-c] [-l N] [-M N]
[--format trec|csv]`` prints, in ``trec`` format, lines comparable one for one with
trec_eval's (``measure<TAB>topic<TAB>value``, ``%6.4f``, an ``all`` block per run).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from maxent.errors import MaxEntError
from maxent.metrics import MEASURE_SETS, METRICS, Metric, parse_measure, parse_measures
from maxent.metrics.ap import MIN_GEO_MEAN
from maxent.ranked import RankedLists, rank_runs
from maxent.trec import Qrels, Run, read_qrels, read_runs

__all__ = ["evaluate", "evaluate_lists", "aggregate", "main", "resolve_measures"]



def resolve_measures(measures: str | Metric | Iterable[str | Metric], rel: int | None = None) -> list[Metric]:
    """Names (or measure-set names ``official``/``all_trec``) -> metric objects.

    ``rel`` (trec_eval ``-l``) sets the relevance threshold of every binary measure.
    """
    if isinstance(measures, (str, Metric)):
        measures = [measures]
    out: list[Metric] = []
    for m in measures:
        names = MEASURE_SETS.get(m, [m]) if isinstance(m, str) else [m]
        out.extend(parse_measures(names))
    if rel is not None:
        out = [dataclasses.replace(m, rel=rel) if "rel" in m.PARAMS else m for m in out]
    seen, unique = set(), []
    for m in out:
        if m not in seen:
            seen.add(m)
            unique.append(m)
    return unique


def evaluate_lists(lists: RankedLists, measures: Sequence[Metric]) -> pd.DataFrame:
    """Per-list values of every measure: a long frame (run, topic, measure, value)."""
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
    depth: int = 1000,
    complete: bool = False,
    rel: int | None = None,
) -> pd.DataFrame:
    """Evaluate runs: one row per (run, topic, measure) with its value.

    Parameters
    ----------
    qrels : a :class:`Qrels` or a path
    runs : runs or paths (files or directories of run files)
    measures : measure names (ir_measures or trec_eval style) or metric objects
    depth : trec_eval ``-M``; complete : trec_eval ``-c``; rel : trec_eval ``-l``

    See Also
    --------
    aggregate : per-run means (sums for counts), as trec_eval's ``all`` rows.
    """
    if not isinstance(qrels, Qrels):
        qrels = read_qrels(qrels)
    if isinstance(runs, (Run, str)) or hasattr(runs, "__fspath__"):
        runs = [runs]
    loaded: list[Run] = []
    paths = [r for r in runs if not isinstance(r, Run)]
    for r in runs:
        if isinstance(r, Run):
            loaded.append(r)
    if paths:
        loaded.extend(read_runs(paths))
    lists = rank_runs(loaded, qrels, depth=depth, complete=complete)
    return evaluate_lists(lists, resolve_measures(measures, rel))


def aggregate(frame: pd.DataFrame, measures: Sequence[Metric] | None = None) -> pd.DataFrame:
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


def _print_trec(frame, measures, runs, per_topic, out):
    measures = sorted(measures, key=_trec_key)
    by = {(r, t, ms): v for r, t, ms, v in frame[["run", "topic", "measure", "value"]].itertuples(index=False)}
    summary = aggregate(frame, measures)
    means = {(r, ms): (v, n) for r, ms, v, n in summary.itertuples(index=False)}
    for run in runs:
        rows = frame[frame["run"] == run.name]
        topics = sorted(set(rows["topic"]), key=lambda t: t.encode())
        if per_topic:
            for t in topics:
                for m in measures:
                    if m.PER_TOPIC:
                        out.write(f"{m.trec_name():<22}\t{t}\t{_fmt(m, by[(run.name, t, str(m))])}\n")
        out.write(f"{'runid':<22}\tall\t{run.tag or run.name}\n")
        out.write(f"{'num_q':<22}\tall\t{len(topics)}\n")
        for m in measures:
            v, _ = means[(run.name, str(m))]
            out.write(f"{m.trec_name():<22}\tall\t{_fmt(m, v)}\n")


def _describe(name: str) -> str:
    m = parse_measure(name)
    lines = [f"{m}  (trec_eval: {m.trec_name()})", "", (type(m).__doc__ or "").strip(), "", "Parameters:"]
    for k, spec in m.PARAMS.items():
        lines.append(f"  {k} (default {spec.default!r}): {spec.desc}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m maxent.evaluate",
        description="Evaluate TREC runs; trec_eval-compatible output.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="examples:\n  python -m maxent.evaluate qrels.txt run.gz -m map -m P.10 -q\n"
               "  python -m maxent.evaluate qrels.txt runs/ -m 'nDCG@10(gain=exp)' -m GAP --format csv\n"
               "  python -m maxent.evaluate --describe GAP",
    )
    p.add_argument("qrels", nargs="?", help="qrels file (qid iter docno grade)")
    p.add_argument("runs", nargs="*", help="run files or directories of runs")
    p.add_argument("-m", dest="measures", action="append",
                   help="measure (ir_measures or trec_eval name, or a set: official, all_trec); repeatable")
    p.add_argument("-q", dest="per_topic", action="store_true", help="print per-topic values too")
    p.add_argument("-c", dest="complete", action="store_true",
                   help="average over all qrels topics, missing topics scoring 0")
    p.add_argument("-l", dest="rel", type=int, default=None, help="relevance threshold of binary measures")
    p.add_argument("-M", dest="depth", type=int, default=1000, help="documents per topic kept")
    p.add_argument("--format", choices=("trec", "csv"), default="trec", help="output format")
    p.add_argument("--describe", metavar="MEASURE", help="print a measure's definition and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    try:
        if args.describe:
            print(_describe(args.describe))
            return 0
        if not args.qrels or not args.runs:
            p.error("QRELS and at least one RUN are required")
        measures = resolve_measures(args.measures or ["official"], args.rel)
        qrels = read_qrels(args.qrels)
        runs = read_runs(args.runs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # trec_eval is silent about topic mismatches
            lists = rank_runs(runs, qrels, depth=args.depth, complete=args.complete)
        frame = evaluate_lists(lists, measures)
        if args.format == "csv":
            frame.to_csv(sys.stdout, index=False, float_format="%.17g")
        else:
            _print_trec(frame, measures, runs, args.per_topic, sys.stdout)
        return 0
    except MaxEntError as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
