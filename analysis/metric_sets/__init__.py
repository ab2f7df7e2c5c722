"""``python -m analysis.metric_sets``: which metrics should a paper report?

For every set of one to ``--max-size`` metrics of a pool, the maximum-entropy distribution of
relevance is inferred from the set's values held at once (with the list's counts per grade as
side information); it reconstructs the precision-recall curve and predicts every pool metric
outside the set. Tables rank the sets, select the most informative set greedily, test what a
metric adds to a set, and compare with two baselines: a linear regression on system means
(Gupta, Kutlu, Khetan & Lease, ECIR 2019) and the split-half ranking question of Webber,
Moffat, Zobel & Sakai (SIGIR 2008).

:mod:`~analysis.metric_sets.compute` solves the sets, :mod:`~analysis.metric_sets.tables` makes
the tables, :mod:`~analysis.metric_sets.baselines` the two baselines,
:mod:`~analysis.metric_sets.figures` the figures and :mod:`~analysis.metric_sets.cli` the command.
"""
