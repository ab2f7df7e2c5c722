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

The ends come from the compiled engine (``*_range``: the same sums the kernels use), for
every metric form: ``linear`` (E = <W, p>), ``prefix`` (AP, GAP) and ``cascade`` (RR, ERR).
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.solver import _engine
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


class KernelInput:
    """What the compiled kernels of a metric form need of a batch, prepared once per batch:
    ``linear``: the constant features WT (B, L, N); ``prefix``: ``metric.prefix_hessian``;
    ``cascade``: ``metric.cascade_form``."""

    def __init__(self, batch: Batch):
        metric, lists = batch.metric, batch.lists
        self.form = metric.SOLVER_FORM
        self.lengths = lists.lengths.astype(np.int64)
        N = lists.grades.shape[1]
        if self.form == "linear":
            self.WT = np.ascontiguousarray(batch.features(batch.uniform()))
        elif self.form == "prefix":
            js, kappa, f = metric.prefix_hessian(lists)
            self.js = np.asarray(js, dtype=np.int64)
            self.kappa = np.ascontiguousarray(np.asarray(kappa, dtype=np.float64).reshape(len(batch), -1))
            self.f = np.ascontiguousarray(np.asarray(f, dtype=np.float64)[:N])
        elif self.form == "cascade":
            s, c = metric.cascade_form(lists)
            if np.any(np.diff(s) < 0):
                # the extreme lists (and the certified maximum) order the grades by satisfaction
                raise ParameterError(f"{metric}: the cascade solver needs a satisfaction "
                                     f"non-decreasing in the grade, got {np.asarray(s)}")
            self.s = np.ascontiguousarray(s, dtype=np.float64)
            self.c = np.ascontiguousarray(np.asarray(c, dtype=np.float64)[:N])
        else:
            raise ValueError(f"{metric}: no solver form")

    def ends(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E of the two deterministic extreme lists, (B,) each: ``top`` fills the categories
        in the metric's order of preference (:meth:`Batch.extreme` with top=True), ``bot`` in
        the reverse order. The range is [min, max] of the two."""
        B = len(counts)
        top, bot = np.zeros(B), np.zeros(B)
        K = np.ascontiguousarray(counts, dtype=np.float64)
        if self.form == "linear":
            _engine.linear_range(self.WT, K, self.lengths, top, bot)
        elif self.form == "prefix":
            _engine.prefix_range(self.js, self.kappa, self.f, K, self.lengths, top, bot)
        else:
            _engine.cascade_range(self.s, self.c, K, self.lengths, top, bot)
        return top, bot


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
