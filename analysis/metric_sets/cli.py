"""``python -m analysis.metric_sets``: which metrics should a paper report?

For every set of 1..--max-size metrics of the pool and every (run, topic) list: the
maximum-entropy distribution of relevance with the set's values held at once (and the list's
counts per grade), its precision-recall curve error and its prediction of every pool metric
outside the set. Default data: the bundled sample.

Writes to ``out/metric_sets/<dataset>/``: instances.csv, predictions.csv, sets.csv,
greedy.csv, marginal.csv, webber.csv, webber_tests.csv, with --train gupta.csv and
gupta_tests.csv, and figures (PNG + CSV). Each set's rows go atomically to ``chunks/`` with a
record of their inputs; ``--resume`` skips finished sets whose inputs are unchanged.
"""
from __future__ import annotations

import argparse
import hashlib
import time
import warnings
from pathlib import Path

import pandas as pd

from analysis import _cli
from analysis import _outputs
from analysis.metric_sets import baselines, figures, tables
from analysis.metric_sets.compute import (DEFAULT_POOL, actual_values, enumerate_sets, set_name,
                                          solve_set)
from maxent.cli.progress import phase
from maxent.errors import ParameterError
from maxent.metrics import parse_measure

OUTPUTS = ("instances.csv", "predictions.csv", "sets.csv", "greedy.csv", "marginal.csv", "webber.csv",
           "webber_tests.csv", "gupta.csv", "gupta_tests.csv", "fig_*.csv", "fig_*.png")
WEBBER = ("AP", "nDCG", "P@10")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m analysis.metric_sets", description=_cli.describe(__doc__.split("\n\n")[0]),
        formatter_class=_cli.HelpFormatter,
        epilog="examples:\n"
               "  python -m analysis.metric_sets\n"
               "  python -m analysis.metric_sets -m AP,P@10,nDCG --max-size 3\n"
               "  python -m analysis.metric_sets --train robust03=QRELS,RUNS --train dl19=QRELS,RUNS\n")
    _cli.add_data(p)
    _cli.add_measures(p, "the pool of metrics the sets are drawn from and predicted", ",".join(DEFAULT_POOL))
    p.add_argument("--max-size", type=int, default=2, help="largest set of metrics given at once")
    p.add_argument("--threshold", default="1", help="relevance threshold of the binary metrics and the PR curve (one)")
    p.add_argument("--count-constraint", dest="count", choices=("retrieved", "total"), default="retrieved",
                   help="K per grade: number retrieved (default) or qrels totals capped at the depth")
    p.add_argument("--alignment", choices=("recall", "rank"), default="recall", help="PR error alignment")
    p.add_argument("--depth", type=int, default=1000, help="documents per topic kept")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the intervals over topics")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of the topic splits")
    p.add_argument("--alpha", type=float, default=0.05, help="level of the tests (Holm-adjusted)")
    p.add_argument("--splits", type=int, default=200,
                   help="random halvings of the topics for the Webber et al. (2008) comparison")
    p.add_argument("--train", action="append", default=None, metavar="NAME=QRELS,RUNS",
                   help="a collection the Gupta et al. (2019) regression is trained on (repeatable; RUNS: run "
                        "files or folders, comma-separated); it should not share runs or topics with this one")
    _cli.add_common(p, "metric_sets")
    return p


def _train_specs(values) -> list[tuple[str, str, list[str]]]:
    specs = []
    for v in values or ():
        name, _, rest = v.partition("=")
        parts = [x for x in rest.split(",") if x]
        if not name or len(parts) < 2:
            raise ParameterError(f"--train: expected NAME=QRELS,RUNS, got {v!r}")
        for path in parts:
            if not Path(path).exists():
                raise ParameterError(f"--train {name}: {path} does not exist")
        specs.append((name, parts[0], parts[1:]))
    return specs


def _job(job):
    index, names, lists, pool, t, count, alignment = job
    return index, solve_set(names, lists, pool, t, count, alignment)


def _solve_sets(sets, lists, pool, args, out: Path, config: dict, data_digest: str) -> pd.DataFrame:
    chunks = _outputs.prepare_chunks(out, config, args.resume)
    options = {k: v for k, v in config.items() if k not in ("qrels", "runs")}
    inputs = {i: {"data": data_digest, "options": hashlib.sha256(repr((options, s)).encode()).hexdigest()}
              for i, s in enumerate(sets)}
    frames = {}
    if args.resume:
        for i, s in enumerate(sets):
            f = _outputs.read_chunk(chunks, f"set{i:03d}", inputs[i], f"set {set_name(s)}")
            if f is not None:
                frames[i] = f
    _cli.report_resumed([set_name(sets[i]) for i in sorted(frames)], len(sets), "sets")
    jobs = [(i, s, lists, pool, args.threshold, args.count, args.alignment)
            for i, s in enumerate(sets) if i not in frames]
    with _cli.progress(len(sets), "sets", args.no_progress) as bar:
        bar.update(len(frames))
        for i, frame in _cli.parallel_map(_job, jobs, args):
            _outputs.write_chunk(chunks, f"set{i:03d}", frame, inputs[i])
            bar.update(1)
    for i in range(len(sets)):   # as written, so that a resumed table equals a fresh one
        if i not in frames:
            frames[i] = pd.read_csv(chunks / f"set{i:03d}.csv", dtype=_outputs.CHUNK_DTYPES)
    return pd.concat([frames[i] for i in range(len(sets))], ignore_index=True)


def _print(sets: pd.DataFrame, greedy: pd.DataFrame, name: str, seconds: float) -> None:
    print(f"Metric sets on {name}: mean PR-curve RMS (95% interval over topics), best ten sets")
    for r in sets.sort_values("pr rms").head(10).itertuples():
        print(f"  {r.set:<30} {r._5:.4f} [{r._6:.4f}, {r._7:.4f}]  pool RMS {r._9:.4f}  lists {r.instances}")
    for c, g in greedy.groupby("criterion", sort=False):
        print(f"greedy by {c}: " + " -> ".join(f"{r.set} ({r.value:.4f})" for r in g.itertuples()))
    unsolved = int(sets["not solved"].sum())
    if unsolved:
        print(f"{unsolved} (set, list) problems ended infeasible or not_converged; left out (sets.csv counts them)")
    print(f"({seconds:.1f} s)")


def _body(args) -> int:
    from maxent.ranked import rank_runs
    from maxent.trec import read_qrels, read_runs

    started = time.time()
    pool = [str(parse_measure(m)) for m in _cli.measure_names(args.measures, list(DEFAULT_POOL))]
    pool = list(dict.fromkeys(pool))
    for m in pool:
        if not parse_measure(m).HAS_EXPECTATION:
            raise ParameterError(f"-m: {m} has no expectation under a relevance distribution")
    if not 1 <= args.max_size <= len(pool):
        raise ParameterError(f"--max-size: must be between 1 and the pool's {len(pool)} metrics, got {args.max_size}")
    thresholds = _cli.parse_thresholds(args.threshold)
    if len(thresholds) != 1:
        raise ParameterError(f"--threshold: give one threshold, got {args.threshold!r}")
    args.threshold = thresholds[0]
    if args.splits < 1:
        raise ParameterError(f"--splits: must be >= 1, got {args.splits}")
    specs = _train_specs(args.train)
    with phase("reading the qrels and runs"):
        qrels = read_qrels(args.qrels)
        if args.threshold > max(qrels.max_grade, 1):
            raise ParameterError(f"--threshold: {args.threshold} is above the highest grade in the qrels "
                                 f"({qrels.max_grade})")
        runs = sorted(read_runs(args.runs), key=lambda r: r.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lists = rank_runs(runs, qrels, depth=args.depth, score_precision=args.score_precision)
    sets = enumerate_sets(pool, args.max_size)
    name = _cli.dataset_name(args.runs, args.dataset)
    out = args.out or (_cli.SCRATCH / "metric_sets" / name)
    config = {"pool": pool, "max_size": args.max_size, "sizes": sorted({len(s) for s in sets}),
              "threshold": args.threshold, "count": args.count, "alignment": args.alignment, "depth": args.depth,
              "score_precision": args.score_precision, "qrels": str(Path(args.qrels).resolve()),
              "runs": [r.name for r in runs]}
    digest = hashlib.sha256(repr([_outputs.file_digest(qrels.path)]
                                 + [_outputs.file_digest(r.path) for r in runs]).encode()).hexdigest()
    _cli.report_unknown_topics(runs, qrels)
    with _outputs.own_output(out, OUTPUTS, config, args.resume):
        _cli.report_depth_cut(runs, qrels, args.depth)
        with phase(f"solving {len(sets)} sets on {len(lists)} lists"):
            inst = _solve_sets(sets, lists, pool, args, out, config, digest)
        with phase("tables, baselines and figures"), _outputs.staged_outputs(out, OUTPUTS) as stage:
            actual = actual_values(lists, list(dict.fromkeys([*pool, *WEBBER])), args.threshold)
            actual = actual.astype({"topic": str})
            inst = inst.astype({"topic": str})
            pred = tables.predictions(inst, actual, pool)
            sets_t = tables.sets_table(inst, pred, pool, n_boot=args.bootstrap, seed=args.seed)
            greedy = tables.greedy_table(sets_t, pool, min(args.max_size, 3))
            marg = tables.marginal(inst, pool, alpha=args.alpha, n_boot=args.bootstrap, seed=args.seed)
            web, web_tests = baselines.webber(actual, WEBBER, "P@10", splits=args.splits, seed=args.seed)
            _cli.atomic_write_csv(stage / "instances.csv", inst)
            for fname, frame in (("predictions.csv", pred), ("sets.csv", sets_t), ("greedy.csv", greedy),
                                 ("marginal.csv", marg), ("webber.csv", web), ("webber_tests.csv", web_tests)):
                _cli.atomic_write_csv(stage / fname, frame)
            if specs:
                train = baselines.training_means(specs, pool, args.threshold, args.depth, args.score_precision)
                g = baselines.gupta(inst, actual, train, pool)
                _cli.atomic_write_csv(stage / "gupta.csv", g)
                _cli.atomic_write_csv(stage / "gupta_tests.csv", baselines.gupta_tests(g, alpha=args.alpha))
            figures.heatmap(pred, pool, stage / "fig_heatmap.png")
            figures.greedy_curve(greedy, stage / "fig_greedy.png")
    _print(sets_t, greedy, name, time.time() - started)
    print(f"results in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)
