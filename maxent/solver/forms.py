"""The solver's forms: what the compiled kernels of a metric need and how they are called.

A metric declares its form by name (``SOLVER_FORM``): ``linear`` (E = <W, p>: P@k, R-prec,
recall, DCG, nDCG, RBP), ``prefix`` (AP, GAP: a prefix-structured Hessian) or ``cascade``
(RR, ERR). Each form is one class here, which owns its preparation of a batch, the ends of
its attainable range, its kernel call and its second run; :func:`form_of` is the one place
where a name chooses a class.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.solver import _engine
from maxent.solver._problem import Batch

_KKT_STEPS = 40   # Newton-KKT steps (from the linear relaxation) before the second run: some
# lists take ~20 small damped steps, then converge quadratically (robust03's THUIRr0301/615
# under GAP(g=0.1,0.9) in 25); stalled problems are found by the line search within ~3 steps
_CASCADE_SWITCH = 1.0   # RR/ERR: linearisation until the stationarity is below this, then
# Newton-KKT (from there it certifies trec_covid_r1's ERR lists in about 3 steps)
SECOND_RUN = 10   # the (few) problems of the second run get 10 x max_iter linearisation steps


class Form:
    """One batch prepared for the kernels of its metric's form."""

    NAME = ""
    METHOD = ""                     # what method="auto" runs
    METHODS: tuple[str, ...] = ()   # the methods that apply

    def __init__(self, batch: Batch):
        self.lengths = batch.lists.lengths.astype(np.int64)

    def ends(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E of the two deterministic extreme lists, (B,) each: ``top`` fills the categories
        in the metric's order of preference (:meth:`Batch.extreme` with top=True), ``bot`` in
        the reverse order. The range is [min, max] of the two."""
        B = len(counts)
        top, bot = np.zeros(B), np.zeros(B)
        self._range(np.ascontiguousarray(counts, dtype=np.float64), top, bot)
        return top, bot

    @classmethod
    def method(cls, method: str, metric) -> str:
        """The method that runs for ``method`` (ParameterError where it does not apply)."""
        if method == "auto":
            return cls.METHOD
        if method not in cls.METHODS:
            needs = {"newton-dual": "a metric linear in p", "cvxpy": "a metric linear in p",
                     "newton-kkt": "a metric with a prefix-structured Hessian (AP, GAP)"}[method]
            raise ParameterError(f"method={method!r} needs {needs}; {metric} is not one "
                                 "(use 'linearize' or 'auto')")
        return method

    def second_run(self, max_iter: int) -> tuple[str, int] | None:
        """(method, steps) of another run for the problems :meth:`solve` left uncertified, or
        None when the form has none beyond its kernel's own."""
        return None

    def _range(self, K, top, bot):  # pragma: no cover - abstract
        raise NotImplementedError

    def solve(self, batch, mask, lo, hi, method, tol, kkt_tol, max_iter, out: dict):
        """Run the kernel on the problems ``mask`` of ``batch`` (range lo, hi), writing the
        arrays of ``out`` (the fields of ``_engine.Results``)."""
        self._solve(batch, method, max_iter, _engine.Results(**out),
                    lambda **settings: _engine.Problems(batch.target, batch.counts, self.lengths, mask, lo, hi,
                                                        tol=tol, kkt_tol=kkt_tol, **settings))

    def _solve(self, batch, method, max_iter, out, problems):  # pragma: no cover - abstract
        raise NotImplementedError


class Linear(Form):
    """E = <W, p>: damped Newton on the exact convex dual (``linear_batch``)."""

    NAME, METHOD, METHODS = "linear", "newton-dual", ("newton-dual", "cvxpy", "linearize")

    def __init__(self, batch: Batch):
        super().__init__(batch)
        self.WT = np.ascontiguousarray(batch.features(batch.uniform()))

    @classmethod
    def method(cls, method, metric):
        # one linearised subproblem is the dual problem itself
        return "newton-dual" if method == "linearize" else super().method(method, metric)

    def _range(self, K, top, bot):
        _engine.linear_range(self.WT, K, self.lengths, top, bot)

    def _solve(self, batch, method, max_iter, out, problems):
        _engine.linear_batch(self.WT, problems(steps=max_iter), out)


class Prefix(Form):
    """AP, GAP: Newton-KKT with an O(N) block-tridiagonal solve, and its own second run of
    successive linearisation inside the kernel (``prefix_batch``)."""

    NAME, METHOD, METHODS = "prefix", "newton-kkt", ("newton-kkt", "linearize")

    def __init__(self, batch: Batch):
        super().__init__(batch)
        N = batch.lists.grades.shape[1]
        js, kappa, f = batch.metric.prefix_hessian(batch.lists)
        self.js = np.asarray(js, dtype=np.int64)
        self.kappa = np.ascontiguousarray(np.asarray(kappa, dtype=np.float64).reshape(len(batch), -1))
        self.f = np.ascontiguousarray(np.asarray(f, dtype=np.float64)[:N])

    def _range(self, K, top, bot):
        _engine.prefix_range(self.js, self.kappa, self.f, K, self.lengths, top, bot)

    def _solve(self, batch, method, max_iter, out, problems):
        # linearize: the second run alone (max_iter steps), after the two start steps
        newton, steps = (0, max_iter) if method == "linearize" else (_KKT_STEPS, SECOND_RUN * max_iter)
        _engine.prefix_batch(self.js, self.kappa, self.f, problems(newton=newton, steps=steps), out)


class Cascade(Form):
    """RR, ERR: successive linearisation, then Newton-KKT on the cascade's banded system
    (``cascade_batch``); what is left gets a second call of 10 x ``max_iter`` linearisation
    steps."""

    NAME, METHOD, METHODS = "cascade", "linearize+newton-kkt", ("linearize",)

    def __init__(self, batch: Batch):
        super().__init__(batch)
        N = batch.lists.grades.shape[1]
        s, c = batch.metric.cascade_form(batch.lists)
        if np.any(np.diff(s) < 0):
            # the extreme lists (and the certified maximum) order the grades by satisfaction
            raise ParameterError(f"{batch.metric}: the cascade solver needs a satisfaction "
                                 f"non-decreasing in the grade, got {np.asarray(s)}")
        self.s = np.ascontiguousarray(s, dtype=np.float64)
        self.c = np.ascontiguousarray(np.asarray(c, dtype=np.float64)[:N])

    def _range(self, K, top, bot):
        _engine.cascade_range(self.s, self.c, K, self.lengths, top, bot)

    def _solve(self, batch, method, max_iter, out, problems):
        newton = 0 if method == "linearize" else _KKT_STEPS
        switch = _CASCADE_SWITCH if newton else 0.0
        _engine.cascade_batch(self.s, self.c, problems(newton=newton, steps=max_iter, switch=switch), out)

    def second_run(self, max_iter):
        return "linearize", SECOND_RUN * max_iter


FORMS = {f.NAME: f for f in (Linear, Prefix, Cascade)}


def form_class(metric) -> type[Form]:
    """The form class of a metric (ParameterError when the solver has no kernel for it)."""
    try:
        return FORMS[metric.SOLVER_FORM]
    except KeyError:
        raise ParameterError(f"{metric}: the solver has no kernel for it (its SOLVER_FORM is "
                             f"{metric.SOLVER_FORM!r}; expected one of {', '.join(FORMS)})") from None


def form_of(batch: Batch) -> Form:
    """The batch prepared for its metric's kernels."""
    return form_class(batch.metric)(batch)
