"""Informativeness versus learning: LambdaRank trained for one metric, tested on another.

``python -m analysis.learning`` reproduces, on a learning-to-rank set (the shared samples, TREC
runs as features, or :mod:`maxent.synthetic`), the learning experiments of Yilmaz & Robertson
(2010, section 5) with the protocols of Donmez, Svore & Burges (2009), Robertson, Kanoulas &
Yilmaz (2010) and Qin, Liu & Li (2010). Parts: ``table`` (train x test metric, Tables 2-4, with
the claims of :mod:`analysis.learning.claims`), ``curves`` (Fig. 5), ``sweep`` (Fig. 4),
``optimality`` (Table 5), ``optimality001`` (Donmez et al.), ``pairs`` (Donmez et al. Fig. 5),
``approx_error`` (Qin et al. Figs. 1-2), ``anchor`` (LightGBM) and ``approx`` (Qin et al.).

Outputs go to ``out/learning/<dataset>/``; ``--resume`` skips finished training runs;
``--evidence DIR`` copies the small CSVs with a ``PROVENANCE.json``. The mathematics is in
``maxent.letor``, ``maxent.synthetic``, ``maxent.ltr`` and ``maxent.stats``.
"""
from analysis.learning.claims import CLAIMS, claim_rows, verdict
from analysis.learning.cli import body, build_parser, main
from analysis.learning.data import fold_split, load_splits
from analysis.learning.jobs import run_job
from analysis.learning.table import cell_marks, table_text

__all__ = ["main", "body", "build_parser", "load_splits", "fold_split", "run_job", "cell_marks", "table_text",
           "CLAIMS", "claim_rows", "verdict"]
