"""Our metrics inside ir_measures (opt-in: ``import maxent.ir_measures`` registers them).

Importing this module (or calling :func:`register`, which is idempotent) adds to ir_measures:

* **measures** in ``ir_measures.measures.registry``, so that ``ir_measures.parse_measure``
  knows them and ir_measures' default pipeline runs them (through its runtime provider, which
  calls each measure's ``runtime_impl``), computed by our implementation:

  - every metric of ours whose name ir_measures lacks, under that name: ``GAP`` (``g`` and
    ``cutoff``), ``DCG``, ``GMAP``, ``GMBpref``, ``RPrecMult``, ``Utility``, ``ElevenPtAvg``,
    ``BinG``, ``G``, ``nDCGRel``, ``RnDCG``, ``RelP`` (a name differing from one of
    ir_measures' by case only, ``InfAP``, is not registered bare);
  - every metric of ours under ``maxent_<name>``, also those whose name ir_measures has with
    another meaning or parameters: ``maxent_nDCG(gain='exp')@10`` (exp-gain nDCG: ir_measures'
    ``nDCG`` has no ``gain`` and is run by pytrec_eval), graded ``maxent_ERR`` and
    ``maxent_RBP(gain='exp')``, ``maxent_AP@10``, ...

  Parameters are ours (:mod:`maxent.metrics`); a threshold list or gain map may be given as
  our text (``g='0.5,0.5'``, ``gain='0:0,1:1,2:3'``), a tuple or a dict, and is kept as that
  text so that ``repr`` parses back with ``ir_measures.parse_measure``.

* a **provider** ``maxent`` (``ir_measures.providers.registry['maxent']``, also
  ``ir_measures.maxent``) that computes, with our implementation, the measures above and
  ir_measures' own measures that :func:`maxent.metrics.names.as_measure` maps
  (``ir_measures.maxent.calc_aggregate([AP, nDCG@10], qrels, run)``); it is not added to
  ir_measures' default pipeline (build a ``FallbackProvider`` to prefer it).

Both follow ir_measures' conventions: a qrels topic missing from the run gets the measure's
``DEFAULT`` (0, as trec_eval ``-c``), run topics without judgements are ignored, and the
aggregate is the mean over those topics (a sum for counts, the geometric mean for GMAP).
Scores are C floats as in :func:`maxent.evaluate` (and pytrec_eval). Topic ids in the
``maxent`` provider's results are text.
"""
from __future__ import annotations

import math
import warnings
import weakref
from typing import Any, ClassVar

import ir_measures
from ir_measures.measures.base import Agg, MeanAgg, Measure, ParamInfo, SumAgg

from maxent.errors import InputError, MeasureNameError, TopicMismatchError, TopicWarning
from maxent.inputs import as_qrels, as_run
from maxent.metrics import METRICS, Metric, parse_measure
from maxent.metrics.ap import MIN_GEO_MEAN
from maxent.metrics.names import as_measure
from maxent.ranked import rank_runs

__all__ = ["register", "MEASURES", "PREFIX", "MaxentMeasure", "MaxentProvider", "provider", "to_metric"]

PREFIX = "maxent_"
"""Prefix of the names under which every metric of ours is registered."""

MEASURES: dict[str, "MaxentMeasure"] = {}
"""Registered name -> measure object (filled by :func:`register`)."""

_LIST_PARAMS = ("g",)      # tuples of numbers in our parameters
_MAP_PARAMS = ("gain",)    # "linear", "exp" or a level:gain map


def _text(v: Any) -> str:
    """A parameter value as our parser reads it (floats exactly, as ``repr``)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):   # numpy scalars
        v = v.item()
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _normal(key: str, v: Any) -> Any:
    """Lists and maps as our text, so that every parameter value is a scalar."""
    if key in _MAP_PARAMS and isinstance(v, dict):
        v = tuple(sorted(v.items()))
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, (list, tuple)) and len(x) == 2 for x in v):
            return ",".join(f"{_text(int(a))}:{_text(float(b))}" for a, b in v)
        return ",".join(_text(float(x)) if key in _LIST_PARAMS else _text(x) for x in v)
    return v


class MaxentMeasure(Measure):
    """An ir_measures measure computed by one of our metric classes (:attr:`METRIC`)."""

    METRIC: ClassVar[type[Metric]]
    RUN_INPUTS: ClassVar[list[str]] = ["query_id", "doc_id", "score"]
    QREL_INPUTS: ClassVar[list[str]] = ["query_id", "doc_id", "relevance"]

    def __init__(self, **params):
        super().__init__(**{k: _normal(k, v) for k, v in params.items()})
        self._metric: Metric | None = None

    def validate_params(self):
        if self.validated:
            return
        super().validate_params()
        self._metric = self._build()

    def _build(self) -> Metric:
        parts = []
        for k, v in self.params.items():
            if v is None and self.METRIC.PARAMS[k].default is None:
                continue
            text = _text(v)
            if any(c in text for c in "()@="):
                raise MeasureNameError(f"{self!r}: parameter {k}={v!r} is not a value")
            parts.append(f"{k}={text}")
        try:
            return parse_measure(f"{self.METRIC.NAME}({','.join(parts)})")
        except MeasureNameError as e:
            raise MeasureNameError(f"{self!r}: {e}") from None

    @property
    def metric(self) -> Metric:
        """Our metric object (``maxent_nDCG(gain='exp')@10`` -> ``nDCG(gain=exp)@10``)."""
        self.validate_params()
        assert self._metric is not None
        return self._metric

    def aggregator(self) -> Agg:
        kind = self.METRIC.AGGREGATE
        if kind == "sum":
            return SumAgg()
        if kind == "gmean":
            return _GeoMeanAgg()
        return MeanAgg()

    def runtime_impl(self, qrels, run):
        """ir_measures' runtime provider: per-topic values from its (qrels, run) frames."""
        got = _ranked_frames(qrels, run)
        if got is None:
            return
        lists, ids = got
        for topic, value in zip(lists.topics, self.metric.value(lists)):
            yield ir_measures.Metric(ids.get(topic, topic), self, _value(self.metric, value))


class _GeoMeanAgg(Agg):
    """trec_eval's gm_map: exp of the mean log of max(v, 1e-5)."""

    def __init__(self):
        self.total, self.count = 0.0, 0

    def add(self, value):
        self.total += math.log(max(value, MIN_GEO_MEAN))
        self.count += 1

    def result(self):
        return math.exp(self.total / self.count) if self.count else float("nan")


def _value(metric: Metric, v) -> float | int:
    return int(v) if metric.INTEGER else float(v)


_LAST: list = []   # (weakref qrels frame, weakref run frame, result): the runtime provider
                   # calls each measure with the same two frames; rank them once


def _ranked_frames(qrels, run):
    if _LAST:
        q_ref, r_ref, result = _LAST[0]
        if q_ref() is qrels and r_ref() is run:
            return result
    result = None
    if len(run) and len(qrels):
        q = as_qrels(qrels[["query_id", "doc_id", "relevance"]])
        r = as_run(run[["query_id", "doc_id", "score"]], name="run")
        lists = _rank(r, q)
        if lists is not None:
            ids = {str(v): v for v in qrels["query_id"].unique()}
            result = (lists, ids)
    try:
        _LAST[:] = [(weakref.ref(qrels), weakref.ref(run), result)]
    except TypeError:
        _LAST[:] = []
    return result


def _rank(run, qrels):
    """Ranked lists of the topics the run shares with the qrels, or None if there is none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicWarning)    # ir_measures' convention: no warning
        try:
            return rank_runs([run], qrels)
        except TopicMismatchError:
            return None


def to_metric(measure) -> Metric | None:
    """Our metric for an ir_measures measure: ours (:class:`MaxentMeasure`) or one of
    ir_measures' that :func:`~maxent.metrics.names.as_measure` maps; else None."""
    if isinstance(measure, MaxentMeasure):
        return measure.metric
    try:
        got = as_measure(measure)
    except MeasureNameError:
        return None
    return got if isinstance(got, Metric) else None


class MaxentEvaluator(ir_measures.providers.Evaluator):
    def __init__(self, measures, qrels):
        self.qrels = as_qrels(qrels)
        super().__init__(measures, set(self.qrels.topics))
        self.metrics = {m: to_metric(m) for m in measures}

    def _iter_calc(self, run):
        try:
            r = as_run(run, name="run")
        except InputError as e:   # an empty run: every topic gets its DEFAULT
            if "is empty" in str(e):
                return
            raise
        lists = _rank(r, self.qrels)
        if lists is None:
            return
        for measure, metric in self.metrics.items():
            for topic, value in zip(lists.topics, metric.value(lists)):
                yield ir_measures.Metric(topic, measure, _value(metric, value))


class MaxentProvider(ir_measures.providers.Provider):
    """ir_measures provider ``maxent``: our implementation of every measure it supports."""

    NAME = "maxent"

    def supports(self, measure) -> bool:
        measure.validate_params()
        return to_metric(measure) is not None

    def _evaluator(self, measures, qrels):
        return MaxentEvaluator(list(measures), qrels)


provider = MaxentProvider()
"""The provider object (``ir_measures.maxent`` once registered)."""


def _measure_class(cls: type[Metric], name: str) -> type[MaxentMeasure]:
    params = {k: ParamInfo(dtype=None, required=False, default=p.default, desc=p.desc)
              for k, p in cls.PARAMS.items()}
    doc = (cls.__doc__ or "").strip().splitlines()
    return type(f"_{name}", (MaxentMeasure,), {
        "__name__": name, "NAME": name, "METRIC": cls, "SUPPORTED_PARAMS": params,
        "AT_PARAM": cls.AT_PARAM or "cutoff", "DEFAULT": 0,
        "PRETTY_NAME": f"{cls.NAME} (maxent)", "SHORT_DESC": doc[0] if doc else cls.NAME,
        "__doc__": cls.__doc__, "__module__": __name__,
    })


def _names() -> dict[str, type[Metric]]:
    """Registered name -> our class: bare names ir_measures lacks, and ``maxent_<name>``."""
    theirs = {n.lower() for n in ir_measures.measures.registry if not _is_ours(n)}
    out: dict[str, type[Metric]] = {}
    for cls in METRICS:
        names = [n for n in (cls.NAME, *cls.ALIASES) if n.isidentifier()]
        if not names:
            continue
        out[PREFIX + names[0]] = cls
        for n in names:
            if n.lower() not in theirs:
                out[n] = cls
    return out


def _is_ours(name: str) -> bool:
    return isinstance(ir_measures.measures.registry.get(name), MaxentMeasure)


def register() -> dict[str, MaxentMeasure]:
    """Register our measures and the ``maxent`` provider with ir_measures (idempotent);
    returns :data:`MEASURES`."""
    registry = ir_measures.measures.registry
    for name, cls in _names().items():
        if name in registry:
            if not _is_ours(name):
                continue        # never replace one of ir_measures' measures
            MEASURES[name] = registry[name]
            continue
        measure = _measure_class(cls, name)()
        ir_measures.measures.register(measure, name=name)
        MEASURES[name] = measure
    ir_measures.providers.register(provider)
    ir_measures.maxent = provider
    globals().update(MEASURES)
    return MEASURES


register()
