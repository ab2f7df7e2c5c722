"""Measure names: ir_measures style (``nDCG@10(gain=exp)``, ``GAP(g=0.5,0.5)``) and trec_eval
style (``map``, ``P_10``, ``P.5,10``, ``ndcg_cut.10,20``, ``ndcg.1=3,2=9``), both mapping to
the same metric objects; an unknown name raises MeasureNameError with close matches. The
tables derive from the registered classes' ``NAME``, ``ALIASES`` and ``TREC_*`` attributes.
:func:`as_measure` maps ir_measures measure objects.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from maxent.errors import MeasureNameError, ParameterError
from maxent.metrics.base import Metric
from maxent.metrics.registry import METRICS

__all__ = ["parse_measure", "parse_measures", "as_measure", "ALIASES", "TREC_NAMES", "aliases", "trec_names",
           "IR_MEASURES_NAMES", "TREC_DEFAULT_PARAMS", "trec_eval_args"]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_DEFAULT_PARAMS: dict[str, tuple] = {
    # trec_eval's default parameters of each measure family (the cutoff arrays of its m_*.c):
    # a bare family name (``-m P``) names one measure per value, as trec_eval prints them
    "P": _CUTS, "recall": _CUTS, "ndcg_cut": _CUTS, "map_cut": _CUTS, "relative_P": _CUTS,
    "P_avgjg": _CUTS, "success": (1, 5, 10),
    "iprec_at_recall": tuple(x / 10 for x in range(11)),
    "Rprec_mult": tuple(x / 10 for x in range(2, 21, 2)),
    "Rprec_mult_avgjg": tuple(x / 10 for x in range(2, 21, 2)),
}

_CACHE: dict[str, dict] = {}


def aliases() -> dict[str, type[Metric]]:
    """ir_measures-style name -> class, from each registered class's ``NAME`` and ``ALIASES``."""
    if "aliases" not in _CACHE:
        out: dict[str, type[Metric]] = {}
        for cls in METRICS:
            for name in (cls.NAME, *cls.ALIASES):
                if name in out and out[name] is not cls:
                    raise AssertionError(f"name {name!r} registered by {out[name].__name__} and {cls.__name__}")
                out[name] = cls
        _CACHE["aliases"] = out
    return _CACHE["aliases"]


def trec_names() -> dict[str, tuple[type[Metric], dict, str | None]]:
    """trec_eval name -> (class, fixed keyword arguments, parameter its suffix sets)."""
    if "trec" not in _CACHE:
        out: dict = {}
        for cls in METRICS:
            if cls.TREC_NAME is not None:
                out[cls.TREC_NAME] = (cls, {}, cls.TREC_SUFFIX)
            if cls.TREC_CUT_NAME is not None:
                out[cls.TREC_CUT_NAME] = (cls, {}, "cutoff")
        _CACHE["trec"] = out
    return _CACHE["trec"]


def __getattr__(name):   # ALIASES and TREC_NAMES, derived on first use (module attributes as before)
    if name == "ALIASES":
        return aliases()
    if name == "TREC_NAMES":
        return trec_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_IRM = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z\-]*)"
    r"(?:\((?P<p1>[^()]*)\))?"
    r"(?:@(?P<at>[^()@]+))?"
    r"(?:\((?P<p2>[^()]*)\))?$"
)


def _split_params(text: str, where: str) -> dict[str, list[str]]:
    """``k=v,w,k2=x`` -> {k: [v, w], k2: [x]} (a bare value extends the previous key)."""
    out: dict[str, list[str]] = {}
    key = None
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        if "=" in tok:
            key, val = (s.strip() for s in tok.split("=", 1))
            if not key:
                raise MeasureNameError(f"{where}: empty parameter name in {text!r}")
            out.setdefault(key, []).append(val)
        elif key is None:
            raise MeasureNameError(f"{where}: parameter value {tok!r} has no name (write key=value)")
        else:
            out[key].append(tok)
    return out


def _number(s: str, kind, where: str):
    try:
        return kind(s) if kind is not int else int(s)
    except ValueError:
        raise MeasureNameError(f"{where}: {s!r} is not {'an integer' if kind is int else 'a number'}") from None


def _gain(values: list[str], where: str):
    if len(values) == 1 and values[0] in ("linear", "exp"):
        return values[0]
    pairs = []
    for v in values:
        if ":" not in v:
            raise MeasureNameError(f"{where}: gain must be linear, exp or level:gain pairs, got {v!r}")
        lvl, g = v.split(":", 1)
        pairs.append((_number(lvl, int, where), _number(g, float, where)))
    return tuple(sorted(pairs))


def _convert(cls, key: str, values: list[str], where: str):
    if key not in cls.PARAMS:
        known = ", ".join(cls.PARAMS) or "none"
        raise MeasureNameError(f"{where}: {cls.NAME} has no parameter {key!r} (parameters: {known})")
    if key == "gain":
        return _gain(values, where)
    if key == "g":
        return tuple(_number(v, float, where) for v in values)
    if len(values) != 1:
        raise MeasureNameError(f"{where}: parameter {key!r} takes one value, got {values}")
    v = values[0]
    kind = cls.PARAMS[key].dtype
    if v.lower() == "none":
        return None
    if kind in (int, float):
        return _number(v, kind, where)
    return v


def _build(cls, kwargs: dict, where: str) -> Metric:
    try:
        return cls(**kwargs)
    except ParameterError as e:
        raise MeasureNameError(f"{where}: {e}") from None


def _parse_irm(text: str) -> Metric | None:
    m = _IRM.match(text)
    names = aliases()
    if not m or m.group("name") not in names:
        return None
    cls = names[m.group("name")]
    kwargs = {}
    for group in ("p1", "p2"):
        if m.group(group):
            for k, vals in _split_params(m.group(group), text).items():
                if k in kwargs:
                    raise MeasureNameError(f"{text}: parameter {k!r} given twice")
                kwargs[k] = _convert(cls, k, vals, text)
    if m.group("at") is not None:
        if cls.AT_PARAM is None:
            raise MeasureNameError(f"{text}: {cls.NAME} takes no @cutoff")
        kwargs[cls.AT_PARAM] = _convert(cls, cls.AT_PARAM, [m.group("at")], text)
    return _build(cls, kwargs, text)


def _parse_trec(text: str) -> list[Metric] | None:
    # name.params (trec_eval -m syntax), name_param (trec_eval output syntax), or bare name
    table = trec_names()
    for base in sorted(table, key=len, reverse=True):
        cls, fixed, pname = table[base]
        if text == base:
            defaults = _family_defaults(base, cls, pname)
            if defaults is None:
                return [_build(cls, dict(fixed), text)]
            kind = cls.PARAMS[pname].dtype
            return [_build(cls, dict(fixed, **{pname: kind(v)}), text) for v in defaults]
        fields = getattr(cls, "TREC_FLOAT_PARAMS", ())
        if fields and text[len(base):len(base) + 1] in (".", "_") and text.startswith(base):
            return [_float_params(cls, fixed, fields, text[len(base) + 1:], text)]
        pairs = getattr(cls, "TREC_PAIR_PARAMS", ())
        if pairs and text.startswith(base + ".") and "=" in text[len(base):]:
            return [_pair_params(cls, fixed, pairs, text[len(base) + 1:], text)]
        for sep in (".", "_"):
            if pname is not None and text.startswith(base + sep):
                rest = text[len(base) + 1:]
                if not rest:
                    continue
                if pname == "gain":
                    pairs = [p.replace("=", ":") for p in rest.split(",")]
                    return [_build(cls, dict(fixed, gain=_gain(pairs, text)), text)]
                kind = float if cls.PARAMS[pname].dtype is float else int
                vals = rest.split(",") if sep == "." else [rest]
                out = []
                for v in vals:
                    num = _number(v, kind, text) if kind is float else _number(_int_text(v, text), int, text)
                    out.append(_build(cls, dict(fixed, **{pname: num}), text))
                return out
    return None


_ATOF = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def _float_params(cls, fixed: dict, fields: tuple, rest: str, where: str) -> Metric:
    """A measure with trec_eval float parameters (``utility.2,-1,0,0``: the coefficients in
    order; ``11pt_avg..25,.5,.75``: one tuple), each read as trec_eval's atof (its leading
    number); printed under the text as given (trec_eval's printable_params)."""
    values = []
    for v in rest.split(","):
        m = _ATOF.match(v)
        if m is None:
            raise MeasureNameError(f"{where}: parameter {v!r} is not a number")
        values.append(float(m.group(1)))
    if len(fields) == 1:
        kwargs = {fields[0]: tuple(values)}
    elif len(values) != len(fields):
        raise MeasureNameError(f"{where}: {cls.TREC_NAME} takes {len(fields)} parameters "
                               f"({','.join(fields)}), got {len(values)} (trec_eval: improper number "
                               "of coefficients)")
    else:
        kwargs = dict(zip(fields, values))
    return _build(cls, dict(fixed, trec_text=rest, **kwargs), where)


def _pair_params(cls, fixed: dict, names: tuple, rest: str, where: str) -> Metric:
    """A measure with trec_eval ``name=value`` parameters (``rbp.p=0.8``: trec_eval 10.0's
    double pairs), printed under the text as given (``rbp_p=0.8``)."""
    kwargs = {}
    for item in rest.split(","):
        key, eq, v = item.partition("=")
        m = _ATOF.match(v)
        if not eq or key not in names or m is None:
            raise MeasureNameError(f"{where}: {cls.TREC_NAME} takes {', '.join(n + '=number' for n in names)}, "
                                   f"got {item!r}")
        kwargs[key] = float(m.group(1))
    return _build(cls, dict(fixed, trec_text=rest, **kwargs), where)


def _family_defaults(base: str, cls, pname: str | None) -> tuple | None:
    """trec_eval's default parameter values of a family name (``P``: 5 ... 1000), or None when
    the bare name is one measure (``map``, ``ndcg``)."""
    if pname is None or pname == "gain":
        return None
    own = getattr(cls, "TREC_DEFAULTS", None)   # a class may state its family's defaults
    if isinstance(own, dict):
        own = own.get(base)
    return tuple(own) if own else TREC_DEFAULT_PARAMS.get(base)


def trec_eval_args(names: Iterable[str], sets: dict[str, list[str]] | None = None) -> list[str]:
    """``-m`` arguments as trec_eval reads them: a family's parameters come from its first
    ``name.params`` argument, which then applies wherever the family is named (bare, with
    other parameters, or inside a set such as ``official``); ``-m P.5 -m P.10`` is P_5 only,
    ``-m official -m P.10`` prints P_10 and no other P. Sets are expanded (``sets``)."""
    sets = sets or {}
    table = trec_names()
    first: dict[str, str] = {}
    for name in names:
        base, dot, params = name.strip().partition(".")
        if dot and base in table and (table[base][2] is not None
                                      or getattr(table[base][0], "TREC_FLOAT_PARAMS", ())
                                      or getattr(table[base][0], "TREC_PAIR_PARAMS", ())):
            first.setdefault(base, params)
    out = []
    for name in names:
        for member in sets.get(name.strip(), [name]):
            base = member.strip().partition(".")[0]
            if base in first:
                member = f"{base}.{first[base]}"
            out.append(member)
    return out


_ATOL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _int_text(v: str, where: str) -> str:
    # an integer cutoff as trec_eval's atol reads it: its leading integer ("23.4" -> 23,
    # "1e3" -> 1, "5abc" -> 5); text without one ("inf", "nan", "0x10") is atol's 0, which
    # trec_eval rejects (Cannot initialize measure): here a MeasureNameError naming both
    m = _ATOL.match(v)
    if m is None:
        raise MeasureNameError(f"{where}: cutoff {v!r} is not a number (trec_eval reads it as 0 "
                               "and rejects it)")
    return str(int(m.group(1)))


def parse_measures(names: str | Iterable[str]) -> list[Metric]:
    """Parse one or more names into metrics (``ndcg_cut.10,20`` gives two)."""
    if isinstance(names, (str, Metric)):
        names = [names]
    elif names is None or not isinstance(names, Iterable):
        raise MeasureNameError(f"measures: expected a measure name, a metric object or a list of them, "
                               f"got {type(names).__name__}")
    out: list[Metric] = []
    for name in names:
        if isinstance(name, Metric):
            out.append(name)
            continue
        if not isinstance(name, str):
            raise MeasureNameError(f"measures: expected a measure name (str) or a metric object, "
                                   f"got {type(name).__name__} {name!r}")
        text = name.strip()
        got = _parse_trec(text)
        if got is None:
            one = _parse_irm(text)
            got = None if one is None else [one]
        if got is None:
            candidates = list(aliases()) + list(trec_names())
            head = re.split(r"[(@._]", text, maxsplit=1)[0]
            import difflib  # only for the error message (start-up of the command lines)

            close = difflib.get_close_matches(head, candidates, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise MeasureNameError(f"unknown measure {text!r}{hint}")
        out.extend(got)
    return out


def parse_measure(name: str | Metric) -> Metric:
    """Parse one measure name into a metric object (see module docstring). A name that is
    both one of ours and a trec_eval family (``P``) is ours here, with its default cutoff;
    :func:`parse_measures` (and ``-m``) expand the family as trec_eval does."""
    got = parse_measures(name)
    if len(got) > 1 and isinstance(name, str):
        one = _parse_irm(name.strip())
        got = got if one is None else [one]
    if len(got) != 1:
        raise MeasureNameError(f"{name!r} names {len(got)} measures; use parse_measures")
    return got[0]


# ir_measures measure name -> (our name, {their parameter: our parameter})
_IR_MEASURES = {
    "AP": ("AP", {"cutoff": "cutoff", "rel": "rel"}),
    "P": ("P", {"cutoff": "cutoff", "rel": "rel"}),
    "R": ("R", {"cutoff": "cutoff", "rel": "rel"}),
    "RR": ("RR", {"cutoff": "cutoff", "rel": "rel"}),
    "Rprec": ("R-prec", {"rel": "rel"}),
    "Success": ("Success", {"cutoff": "cutoff", "rel": "rel"}),
    "Bpref": ("Bpref", {"rel": "rel"}),
    "SetP": ("SetP", {"rel": "rel"}),
    "SetR": ("SetR", {"rel": "rel"}),
    "NumRel": ("NumRel", {"rel": "rel"}),
    "IPrec": ("IPrec", {"recall": "cutoff", "rel": "rel"}),
    "nDCG": ("nDCG", {"cutoff": "cutoff"}),
    "ERR": ("ERR", {"cutoff": "cutoff"}),
    "RBP": ("RBP", {"cutoff": "cutoff", "p": "p", "rel": "rel"}),
    "NumRet": ("NumRet", {}),
}
IR_MEASURES_NAMES = tuple(_IR_MEASURES)
"""ir_measures measures with an equivalent here (:func:`as_measure`)."""


def as_measure(measure) -> Metric | str:
    """A metric from an ir_measures measure object; names and metric objects pass through.

    ``nDCG(dcg='exp-log2')`` is ``nDCG(gain=exp)``, ``gains={...}`` a gain map,
    ``NumRet(rel=r)`` ``NumRelRet(rel=r)``, ``ERR@k`` gdeval's ``ERR(max_grade=4)@k``.
    ``judged_only=True``, ``SetP(relative=True)``, RBP without ``rel`` and measures with no
    equivalent raise :class:`~maxent.errors.MeasureNameError`.
    """
    if isinstance(measure, (str, Metric)):
        return measure
    name = getattr(measure, "NAME", None)
    params = getattr(measure, "params", None)
    if name is None or not isinstance(params, dict):
        raise MeasureNameError(f"measure {measure!r}: expected a name, a metric or an ir_measures measure")
    if name not in _IR_MEASURES:
        raise MeasureNameError(f"ir_measures measure {measure} has no equivalent here; measures mapped: "
                               + ", ".join(IR_MEASURES_NAMES))
    ours, rename = _IR_MEASURES[name]
    kwargs: dict[str, Any] = {}
    for k, v in params.items():
        if k == "judged_only":
            if v:
                raise MeasureNameError(f"{measure}: judged_only=True is not supported (unjudged documents "
                                       "count as non-relevant, as trec_eval without -J)")
        elif k == "relative" and name == "SetP":
            if v:
                raise MeasureNameError(f"{measure}: SetP(relative=True) is not supported")
        elif name == "nDCG" and k == "dcg":
            if v == "exp-log2":
                kwargs["gain"] = "exp"
            elif v != "log2":
                raise MeasureNameError(f"{measure}: dcg={v!r} is not supported (log2 or exp-log2)")
        elif name == "nDCG" and k == "gains":
            kwargs["gain"] = tuple(sorted((int(a), float(b)) for a, b in dict(v).items()))
        elif name == "NumRet" and k == "rel":
            ours, kwargs["rel"] = "NumRelRet", int(v)
        elif k in rename:
            kwargs[rename[k]] = v
        else:
            raise MeasureNameError(f"{measure}: parameter {k!r} has no equivalent here")
    if name == "RBP" and "rel" not in params:
        raise MeasureNameError(f"{measure}: graded RBP (no rel) has no fixed gain scale in ir_measures; "
                               "give rel, e.g. RBP(rel=1), or use our RBP(gain=...)")
    if name == "ERR":
        kwargs["max_grade"] = 4   # gdeval's ERR, which ir_measures runs: r = (2^g - 1) / 2^4
    if name == "nDCG" and isinstance(kwargs.get("gain"), tuple) and "exp" in str(params.get("dcg", "")):
        raise MeasureNameError(f"{measure}: dcg='exp-log2' with a gains map is ambiguous")
    try:
        return aliases()[ours](**kwargs)
    except ParameterError as e:
        raise MeasureNameError(f"{measure}: {e}") from None
