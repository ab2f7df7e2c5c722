"""Where a target sits in its attainable range, decided once, before any iteration.

Every problem of a batch gets one class:

- ``UNDEFINED``: the qrels hold no relevant document (the metric is undefined);
- ``AT_MAX`` / ``AT_MIN``: the target is on an end of the range [lo, hi] of the two
  deterministic extreme lists (to ``BOUNDARY_RTOL`` relative to max(1, |end|)) and that end
  is certified (``Metric.CERTIFIED_ENDS``) or the range is a single point: the answer is
  the maximum-entropy distribution on the face of the extreme list (``boundary``);
- ``ABOVE`` / ``BELOW``: beyond a certified end (or a single-point range), or below the cascade
  metrics' lower bound (:func:`maxent.solver._problem.cascade_lower_bound`): ``infeasible``;
- ``INTERIOR``: everything else, handed to the compiled kernels. Besides the targets strictly
  inside [lo, hi], that is the targets on or below an end that is not certified (RR and ERR
  below their deterministic minimum, where a fractional list can go).

The ends come from the compiled engine (``*_range``: the same sums the kernels use), through
each metric's form (:mod:`maxent.solver.forms`).
"""
from __future__ import annotations

import numpy as np

from maxent.solver._problem import BOUNDARY_RTOL, Batch, cascade_lower_bound, certified_ends


class Target:
    """The class of a target: the int8 codes of :func:`classify`'s array. Plain ints, not an
    enum: numpy compares an array with an enum member through the enum class's attribute
    lookups, a cost a single-list solve would pay at each of its comparisons."""
    INTERIOR = 0
    UNDEFINED = 1
    AT_MAX = 2
    AT_MIN = 3
    ABOVE = 4
    BELOW = 5


def on_end(v: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Whether each target is on an end of its range (to ``BOUNDARY_RTOL`` of max(1, |end|))."""
    return np.abs(v - end) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(end))


def one_point(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each range [lo, hi] is a single point (to ``BOUNDARY_RTOL``)."""
    return (hi - lo) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(hi))


def classify(batch: Batch, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The class (:class:`Target`) of every target of ``batch`` given its range [lo, hi]."""
    metric, v = batch.metric, batch.target
    t = metric.binary_threshold if not metric.GRADED else 1
    undefined = batch.lists.n_rel(t) == 0
    cert_lo, cert_hi = certified_ends(metric)
    at_hi, at_lo, degenerate = on_end(v, hi), on_end(v, lo), one_point(lo, hi)
    above = (v > hi) & ~at_hi
    below = (v < lo) & ~at_lo
    lo_known = np.full(len(v), cert_lo)
    if not cert_lo and below.any():
        # below a lower bound of E over every distribution is certainly infeasible
        i = np.flatnonzero(below)
        bound = cascade_lower_bound(metric, batch.lists.take(i), batch.take(i).extreme(False))
        if bound is not None:
            lo_known[i] = v[i] < bound - BOUNDARY_RTOL * np.maximum(1.0, np.abs(bound))
    cls = np.full(len(v), Target.INTERIOR, dtype=np.int8)
    cls[below & (lo_known | degenerate)] = Target.BELOW
    cls[above & (cert_hi | degenerate)] = Target.ABOVE
    cls[at_lo & (cert_lo | degenerate)] = Target.AT_MIN
    cls[at_hi & (cert_hi | degenerate)] = Target.AT_MAX
    cls[undefined] = Target.UNDEFINED
    return cls
