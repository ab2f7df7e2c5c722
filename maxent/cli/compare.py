"""``maxent compare`` (also ``python -m maxent.compare``): paired tests between runs,
corrected over the pairs, with effect sizes and a marked table (:func:`maxent.compare.compare`)."""
from __future__ import annotations

import argparse
import sys

from maxent.cli._common import (SCORE_PRECISION_HELP, HelpFormatter, add_inputs, add_measures, check_options,
                                measure_names, resolve_inputs, run_command)
from maxent.cli.progress import phase
from maxent.compare import (CORRECTIONS, MARK_TESTS, MAX_BOOTSTRAP, MAX_PERMUTATIONS, compare, count_problem,
                            seed_problem)
from maxent.errors import ParameterError

__all__ = ["main"]


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Compare runs: paired significance tests, corrections, effect sizes, marked table.",
        formatter_class=HelpFormatter,
        epilog="examples:\n"
               "  python -m maxent.compare trec_runs/qrels-rnd1.txt trec_runs/runs -m AP -m nDCG@10\n"
               "  python -m maxent.compare qrels.txt runs/ -m 'GAP(g=0.5,0.5)' --baseline BM25 "
               "--test randomisation --format latex\n"
               "  python -m maxent.compare qrels.txt a.gz b.gz --format csv > pairs.csv\n",
    )
    add_inputs(p, "qrels file (qid iter docno grade)", "run files or directories of runs (at least 2 runs)")
    add_measures(p, "measure (ir_measures or trec_eval name)", "AP, nDCG@10, P@10")
    p.add_argument("--baseline", default=None,
                   help="compare every run with this run only (default: all pairs), and count per measure the "
                        "topics it wins, ties and loses against it (W/T/L column; csv/json: wins, ties, losses)")
    p.add_argument("--test", choices=MARK_TESTS, default="t",
                   help="test whose corrected verdict sets the superscript marks")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-comparison correction over the pairs of each measure")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--permutations", default="10000",
                   help="randomisation test: random sign vectors, 1 to 1e9 (exact enumeration when "
                        "2^topics is smaller)")
    p.add_argument("--bootstrap", default="10000", help="bootstrap resamples (test and intervals), 1 to 1e7")
    p.add_argument("--seed", default="0", help="seed of permutations and bootstrap resamples, an integer >= 0")
    p.add_argument("-l", dest="rel", type=int, default=None,
                   help="relevance threshold of binary measures, >= 0 (default: each measure's own, 1)")
    p.add_argument("-M", dest="depth", type=int, default=None,
                   help="documents per topic kept (default: all, as trec_eval)")
    p.add_argument("--score-precision", choices=("single", "double"), default="single",
                   help=SCORE_PRECISION_HELP)
    p.add_argument("--common-topics", action="store_true",
                   help="compare on the topics every run retrieved for (default: all qrels topics, missing = 0)")
    p.add_argument("--format", choices=("terminal", "markdown", "latex", "csv", "json"), default="terminal",
                   help="output: marked table (terminal/markdown/latex), all pairs (csv), both (json)")
    p.add_argument("--digits", type=int, default=4, help="decimals in the table")
    p.add_argument("--details", action="store_true",
                   help="terminal/markdown: also list every pair with effect sizes, intervals and all p-values")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _integer(option: str, text: str) -> int:
    """An option's integer: digits, or a number such as ``1e6`` that is a whole number."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value.is_integer():
        raise ParameterError(f"{option}: must be an integer, got {text!r}")
    return int(value)


def _run(args) -> int:
    args.permutations = _integer("--permutations", args.permutations)
    args.bootstrap = _integer("--bootstrap", args.bootstrap)
    args.seed = _integer("--seed", args.seed)
    for option, problem in (("--permutations", count_problem(args.permutations, MAX_PERMUTATIONS)),
                            ("--bootstrap", count_problem(args.bootstrap, MAX_BOOTSTRAP)),
                            ("--seed", seed_problem(args.seed))):
        if problem:
            raise ParameterError(f"{option}: {problem}")
    if not 0 < args.alpha < 1:
        raise ParameterError(f"--alpha: must be in (0, 1), got {args.alpha}")
    if not 0 <= args.digits <= 17:
        raise ParameterError(f"--digits: must be from 0 to 17, got {args.digits}")
    check_options(args)
    with phase("reading, evaluating and testing the runs"):
        res = compare(args.qrels, args.runs, measure_names(args.measures, ["AP", "nDCG@10", "P@10"]),
                      baseline=args.baseline, test=args.test, correction=args.correction,
                      alpha=args.alpha, n_permutations=args.permutations, n_bootstrap=args.bootstrap,
                      seed=args.seed, depth=args.depth, rel=args.rel, complete=not args.common_topics,
                      score_precision=args.score_precision)
    sys.stdout.write(res.format(args.format, args.digits))
    if args.details and args.format in ("terminal", "markdown"):
        sys.stdout.write("\n" + res.details(args.format, args.digits))
    return 0


def main(argv: list[str] | None = None, prog: str = "maxent compare") -> int:
    p = _parser(prog)
    args = p.parse_args(argv)
    resolve_inputs(args)
    if not args.qrels or not args.runs:
        p.error("QRELS and at least one RUN are required")
    return run_command(_run, args)
