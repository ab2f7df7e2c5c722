"""Informativeness versus learning: LambdaRank trained for one metric, tested on another.

``python -m analysis.learning`` reproduces, on a learning-to-rank set (the shared samples, TREC
runs as features, or the synthetic generator :mod:`maxent.synthetic`), the learning experiments
of Yilmaz & Robertson (2010, section 5) with the protocols of Donmez, Svore & Burges (2009),
Robertson, Kanoulas & Yilmaz (2010) and Qin, Liu & Li (2010):

* ``table``: train-metric x test-metric table (Yilmaz & Robertson Tables 2-4; Robertson et al.
  Tables 1-2), 0-100 scale, with the papers' marks (``*`` significantly different from training
  on the test metric itself, ``o`` AP and nDCG rows significantly different: paired t, Wilcoxon and
  sign test all at 95%); the claims with one verdict rule and the power analysis
  (:mod:`analysis.learning.claims`); every trained model with its selected epoch, weight norm and
  checksum (``models.csv``);
* ``curves``: learning curves per epoch (Yilmaz & Robertson Fig. 5);
* ``sweep``: training-set size x feature count (their Fig. 4);
* ``optimality``: Monte-Carlo local optimality (their Table 5), both halves (train, test), at the
  training optimum and at the validation-selected weights;
* ``optimality001``: the protocol of Donmez et al. (2009): each model's own metric on its training
  set along random and per-weight directions, ties counted as A(w) <= A(w + eta r), every seed
  and fold;
* ``pairs``: effective training pairs vs the test value (Donmez et al. Fig. 5);
* ``approx_error``: ApproxRank's approximation error on real run lists (Qin et al. Figs. 1-2);
* ``anchor``: LightGBM lambdarank on the same split.

``--model lambdamart`` trains LightGBM trees on our lambdas (:mod:`maxent.ltr.boosting`).
Outputs go to ``out/learning/<dataset>/``; per-run records under ``runs/`` let ``--resume`` skip
finished training runs; ``--evidence DIR`` copies the small CSVs with a ``PROVENANCE.json``.
Only orchestration lives here; the mathematics is in ``maxent.letor``, ``maxent.synthetic``,
``maxent.ltr`` and ``maxent.stats``.

Modules: :mod:`~analysis.learning.cli` (options, parts, evidence), :mod:`~analysis.learning.data`
(data sets, splits), :mod:`~analysis.learning.jobs` (training runs), :mod:`~analysis.learning.table`,
:mod:`~analysis.learning.claims`, :mod:`~analysis.learning.optimality`,
:mod:`~analysis.learning.parts` (curves, sweep, pairs, approximation error, anchor).
"""
from analysis.learning.claims import CLAIMS, claim_rows, verdict
from analysis.learning.cli import body, build_parser, main
from analysis.learning.data import fold_split, load_splits
from analysis.learning.jobs import run_job
from analysis.learning.table import cell_marks, table_text

__all__ = ["main", "body", "build_parser", "load_splits", "fold_split", "run_job", "cell_marks", "table_text",
           "CLAIMS", "claim_rows", "verdict"]
