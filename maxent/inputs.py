"""Qrels and runs from wherever a user holds them.

Every public entry point taking qrels or runs passes them through :func:`as_qrels` and
:func:`as_runs`, which accept:

* a path (a file, or for runs also a folder of run files);
* our :class:`~maxent.trec.Qrels` / :class:`~maxent.trec.Run`;
* a pandas frame with PyTerrier's columns (qrels ``qid, docno, label``; runs ``qid, docno,
  score``) or ir_datasets' (``query_id, doc_id, relevance`` / ``score``), detected by name;
* a pytrec_eval dict (``{qid: {docno: grade}}``, ``{qid: {docno: score}}``);
* a ranx ``Qrels`` / ``Run`` (anything with ``to_dict()``; a ranx run keeps its name);
* an iterable (list, generator) of namedtuples with the fields ``query_id, doc_id,
  relevance`` (qrels) or ``query_id, doc_id, score`` (a run), as ``ir_measures.Qrel`` /
  ``ir_measures.ScoredDoc`` and ir_datasets' ``qrels_iter()`` / ``scoreddocs_iter()`` yield
  (other fields, such as ``iteration``, are ignored), or an object with such a
  ``qrels_iter()`` / ``scoreddocs_iter()`` method (an ir_datasets dataset).

Several runs come as a list of these, a mapping ``{name: run}``, or one frame with a ``name``
or ``run`` column. Identifiers are their text, as trec_eval reads them (an integer 7 is
``"7"``, a uint64 above 2^63 its exact decimal text); floats, whitespace and empty values are
refused. Grades are read as ``atol`` (the integer part), those above ``MAX_GRADE`` refused;
scores must be finite; a dict's values must be int or float (not str, Decimal or bool); a
``rank`` column is ignored. Paths may be str, bytes or os.PathLike.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Iterable

import numpy as np

from maxent.errors import InputError, ParameterError
from maxent.trec import (LONG_TOKEN, MAX_GRADE, Qrels, Run, build_qrels, build_run, compact_long, names,
                         read_qrels, read_run, read_runs)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["as_qrels", "as_runs", "as_run", "run_from_frame", "qrels_frame", "run_frame",
           "qrels_dict", "run_dict", "QRELS_COLUMNS", "RUN_COLUMNS", "RUN_NAME_COLUMNS"]

QRELS_COLUMNS = {"PyTerrier": ("qid", "docno", "label"), "ir_datasets": ("query_id", "doc_id", "relevance")}
"""Column names of a qrels frame (topic, document, grade), per convention."""
RUN_COLUMNS = {"PyTerrier": ("qid", "docno", "score"), "ir_datasets": ("query_id", "doc_id", "score")}
"""Column names of a run frame (topic, document, score), per convention."""
RUN_NAME_COLUMNS = ("name", "run")
"""Columns that name each row's run in a frame of several runs."""
QREL_FIELDS = ("query_id", "doc_id", "relevance")
"""Fields of a qrels record (``ir_measures.Qrel``, ir_datasets' ``TrecQrel``)."""
RUN_FIELDS = ("query_id", "doc_id", "score")
"""Fields of a run record (``ir_measures.ScoredDoc``, ir_datasets' ``GenericScoredDoc``)."""


def _is_record(x, fields: tuple[str, ...]) -> bool:
    """A namedtuple (or any tuple with ``_fields``) holding every field of ``fields``."""
    return isinstance(x, tuple) and all(f in getattr(x, "_fields", ()) for f in fields)


def _records(x, fields: tuple[str, ...]):
    """``x`` as a list of records when it is an iterable of them (its first item decides; a
    generator is consumed), else None; an empty iterable is ``[]``."""
    if isinstance(x, (str, bytes, Mapping, tuple)) or _is_frame(x) or _ranx(x) or not isinstance(x, Iterable):
        return None
    if isinstance(x, list):
        return x if not x or _is_record(x[0], fields) else None
    it = iter(x)
    first = next(it, None)
    if first is None:
        return []
    if not _is_record(first, fields):
        raise ParameterError(f"expected records with the fields {', '.join(fields)} "
                             f"(e.g. ir_measures.{'Qrel' if 'relevance' in fields else 'ScoredDoc'}), "
                             f"got {type(first).__name__} {first!r}")
    return list(itertools.chain([first], it))


def _columns_of(records: list, fields: tuple[str, ...], where: str) -> list[list]:
    """The ``fields`` of every record, as one list per field; InputError naming the first
    record that lacks one."""
    cols: list[list] = [[] for _ in fields]
    for i, r in enumerate(records):
        try:
            for c, f in zip(cols, fields):
                c.append(getattr(r, f))
        except AttributeError:
            raise InputError(where, i + 1, f"record {r!r} has no field {f!r} "
                             f"(expected the fields {', '.join(fields)})") from None
    return cols


def _is_path(x) -> bool:
    return isinstance(x, (str, bytes, os.PathLike))


def _is_frame(x) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


def _ranx(x) -> bool:
    """A ranx Qrels/Run (or anything else with ``to_dict``, not a mapping or frame)."""
    return callable(getattr(x, "to_dict", None)) and not _is_frame(x) and not isinstance(x, Mapping)


def _columns(frame, conventions: dict, what: str, where: str) -> tuple[str, str, str]:
    """The (topic, document, value) columns of the one convention ``frame`` matches fully."""
    cols = [str(c) for c in frame.columns]
    full = [name for name, need in conventions.items() if all(c in cols for c in need)]
    if len(full) == 1:
        return conventions[full[0]]
    expected = "; ".join(f"{name}: {', '.join(need)}" for name, need in conventions.items())
    if len(full) > 1:
        raise InputError(where, None, f"ambiguous {what} frame: it has the columns of both "
                         f"conventions ({expected}); keep one set. Columns found: {', '.join(cols)}")
    raise InputError(where, None, f"cannot read a {what} frame: expected the columns {expected}. "
                     f"Columns found: {', '.join(cols) or 'none'}")


def _ids(values, column: str, where: str, long: dict | None = None) -> np.ndarray:
    """Identifiers as bytes, as trec_eval reads them from text (integers exact, as their
    decimal text); ``long`` receives surrogate -> identifier of the long ones."""
    a = np.asarray(values)
    if a.dtype.kind == "f":
        raise InputError(where, None, f"column {column!r} holds floats (e.g. {_shown(a[0])!r}); "
                         "identifiers are text: convert it to int or str (a float's text, e.g. '7.0', "
                         "is not the id '7')")
    if a.dtype.kind == "b":
        raise InputError(where, None, f"column {column!r} holds booleans, not identifiers")
    kind = {"i": "integer", "u": "integer", "U": "string", "S": "bytes"}.get(a.dtype.kind)
    if kind is None:
        import pandas as pd

        kind = pd.api.types.infer_dtype(a, skipna=False)
    if kind == "integer":                   # never through int64: uint64 above 2^63 stays exact
        ids = a.astype(str).astype("S")
    elif kind == "string":
        u = a.astype("U")
        try:
            ids = u.astype("S")                         # ASCII (the common case): a cast
        except UnicodeEncodeError:
            ids = np.char.encode(u, "utf-8")
        if not len(ids):
            ids = np.zeros(0, "S1")
    elif kind == "bytes":
        ids = a.astype("S")
    else:                       # mixed or other types: one by one, naming the first bad row
        out = []
        for i, v in enumerate(a.tolist()):
            if isinstance(v, bytes):
                out.append(v)
            elif isinstance(v, str):
                out.append(v.encode("utf-8"))
            elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                out.append(str(int(v)).encode())
            else:
                raise InputError(where, i + 1, f"{column} {v!r} is not text or an integer")
        ids = np.array(out, dtype=bytes) if out else np.zeros(0, "S1")
    lengths = np.char.str_len(ids)
    if len(ids) and lengths.max() > LONG_TOKEN:
        ids = compact_long(ids.tolist(), long)
    bad = np.flatnonzero((lengths == 0) | _has_space(ids))
    if len(bad):
        i = int(bad[0])
        raise InputError(where, i + 1, f"{column} {_shown(a[i])!r} cannot be a TREC identifier "
                         "(empty or holding whitespace)")
    return ids


def _shown(v):
    """A value as a message shows it (numpy scalars as the Python value)."""
    return v.item() if isinstance(v, np.generic) else v


def _has_space(ids: np.ndarray) -> np.ndarray:
    if len(ids) == 0:
        return np.zeros(0, dtype=bool)
    u = ids.view(np.uint8).reshape(len(ids), -1)
    return ((u == 32) | ((u >= 9) & (u <= 13))).any(axis=1)


def _grades(values, column: str, where: str) -> np.ndarray:
    """Grades as trec_eval's ``atol`` reads them: the integer part (truncated towards 0, as
    the file reader reads ``1.5``); above :data:`~maxent.trec.MAX_GRADE` refused, as in files
    (never wrapped through int64)."""
    a = np.asarray(values)
    if a.dtype.kind in "ib":
        return a.astype(np.int64)            # int64: build_qrels refuses grades above MAX_GRADE
    if a.dtype.kind == "u":
        _grade_range(a > MAX_GRADE, a, column, where)
        return a.astype(np.int64)
    f = _floats(a, where, column)
    bad = ~np.isfinite(f)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(where, i + 1, f"{column} {_shown(a[i])!r} is not a finite number")
    _grade_range(f >= MAX_GRADE + 1, a, column, where)
    return np.trunc(np.maximum(f, -MAX_GRADE)).astype(np.int64)


def _grade_range(high: np.ndarray, a: np.ndarray, column: str, where: str) -> None:
    if high.any():
        i = int(np.argmax(high))
        raise InputError(where, i + 1, f"{column} {_shown(a[i])!r} is out of range: grades above "
                         f"{MAX_GRADE} are not supported (memory grows with the number of grade levels)")


def _floats(a: np.ndarray, where: str, column: str) -> np.ndarray:
    """``a`` as float64; a value that is not a number raises InputError naming its row."""
    try:
        return a.astype(np.float64)
    except (TypeError, ValueError):
        for i, v in enumerate(a.tolist()):
            try:
                float(v)
            except (TypeError, ValueError):
                raise InputError(where, i + 1, f"{column} {v!r} is not a number") from None
        raise


def _number_type(t: type) -> bool:
    return issubclass(t, (int, float, np.integer, np.floating)) and not issubclass(t, (bool, np.bool_))


def _flatten_dict(d: Mapping, what: str, where: str, value_name: str):
    """``{qid: {docno: value}}`` -> (qids, docnos, values) lists; InputError naming the qid,
    the docno and the type of a value that is not an int or a float."""
    qid, docno, value = [], [], []
    for q, docs in d.items():
        if not isinstance(docs, Mapping):
            raise InputError(where, None, f"a pytrec_eval {what} dict maps each qid to a dict "
                             f"{{docno: {value_name}}}; qid {q!r} maps to {type(docs).__name__}")
        qid.extend([q] * len(docs))
        docno.extend(docs.keys())
        value.extend(docs.values())
    bad = [t for t in set(map(type, value)) if not _number_type(t)]    # a C loop over the values
    if bad:
        i = next(i for i, v in enumerate(value) if type(v) in bad)
        raise InputError(where, i + 1, f"qid {qid[i]!r}, docno {docno[i]!r}: {value_name} {value[i]!r} "
                         f"is a {type(value[i]).__name__}, not a number (int or float)")
    return qid, docno, value


def as_qrels(qrels) -> Qrels:
    """Qrels from a path, a :class:`Qrels`, a frame, a pytrec_eval dict, a ranx Qrels or an
    iterable of ``(query_id, doc_id, relevance)`` namedtuples (``ir_measures.Qrel``).

    Raises
    ------
    InputError
        an unreadable file, a frame's columns, a bad identifier or grade, a docno judged twice.
    """
    if isinstance(qrels, Qrels):
        return qrels
    if _is_path(qrels):
        return read_qrels(qrels)
    if callable(getattr(qrels, "qrels_iter", None)):      # an ir_datasets dataset
        qrels = qrels.qrels_iter()
    records = _records(qrels, QREL_FIELDS)
    if records is not None:
        where = "<qrels records>"
        if not records:
            raise InputError(where, None, "the qrels iterable holds no judgement")
        q, d, g = _columns_of(records, QREL_FIELDS, where)
        long = {}
        return build_qrels(where, _ids(q, "query_id", where, long), _ids(d, "doc_id", where),
                           _grades(g, "relevance", where), np.arange(1, len(q) + 1), long)
    if _ranx(qrels):
        qrels = qrels.to_dict()
    if _is_frame(qrels):
        where = "<qrels frame>"
        q, d, g = _columns(qrels, QRELS_COLUMNS, "qrels", where)
        if len(qrels) == 0:
            raise InputError(where, None, "the qrels frame holds no judgement (no rows)")
        long: dict[bytes, bytes] = {}
        return build_qrels(where, _ids(qrels[q].to_numpy(), q, where, long), _ids(qrels[d].to_numpy(), d, where),
                           _grades(qrels[g].to_numpy(), g, where), np.arange(1, len(qrels) + 1), long)
    if isinstance(qrels, Mapping):
        where = "<qrels dict>"
        q, d, g = _flatten_dict(qrels, "qrels", where, "grade")
        if not q:
            raise InputError(where, None, "the qrels dict holds no judgement")
        long = {}
        return build_qrels(where, _ids(q, "qid", where, long), _ids(d, "docno", where),
                           _grades(g, "grade", where), np.arange(1, len(q) + 1), long)
    raise ParameterError(f"qrels: expected a path, a Qrels, a pandas frame, a pytrec_eval "
                     f"dict {{qid: {{docno: grade}}}} or records (query_id, doc_id, relevance), "
                     f"got {type(qrels).__name__}")


def as_run(run, name: str | None = None) -> Run:
    """One run from a :class:`Run`, a file path, a frame, a pytrec_eval dict, a ranx Run or an
    iterable of ``(query_id, doc_id, score)`` namedtuples (``ir_measures.ScoredDoc``).

    ``name`` defaults to a ranx run's name, a frame's ``name``/``run`` value, the file name,
    else ``"run"``. A frame holding several runs is an error here (see :func:`as_runs`).
    """
    if isinstance(run, Run):
        return run
    if _is_path(run):
        return read_run(run, name)
    if callable(getattr(run, "scoreddocs_iter", None)):   # an ir_datasets dataset
        run = run.scoreddocs_iter()
    records = _records(run, RUN_FIELDS)
    if _ranx(run):
        name = name or getattr(run, "name", None) or "run"
        run = run.to_dict()
    if _is_frame(run):
        for col in RUN_NAME_COLUMNS:
            if col in run.columns:
                names = list(dict.fromkeys(run[col].astype(str)))
                if len(names) > 1:
                    more = " ..." if len(names) > 5 else ""
                    raise InputError(f"<run {name or names[0]}>", None, f"the frame holds {len(names)} runs "
                                     f"(column {col!r}: {', '.join(names[:5])}{more}); "
                                     "give one run, or pass the frame where several runs are taken")
                name = name or (names[0] if names else None)
    name = "run" if name is None else str(name)
    where = f"<run {name}>"
    if records is not None:
        qid, docno, score = _columns_of(records, RUN_FIELDS, where) if records else ([], [], [])
    elif _is_frame(run):
        q, d, _ = _columns(run, RUN_COLUMNS, "run", where)
        qid, docno, score = run[q].to_numpy(), run[d].to_numpy(), run["score"].to_numpy()
    elif isinstance(run, Mapping):
        qid, docno, score = _flatten_dict(run, "run", where, "score")
    else:
        raise ParameterError(f"run {name!r}: expected a path, a Run, a pandas frame, a pytrec_eval "
                         f"dict {{qid: {{docno: score}}}} or records (query_id, doc_id, score), "
                         f"got {type(run).__name__}")
    if len(score) == 0:
        raise InputError(where, None, f"run {name!r} is empty")
    long: dict[bytes, bytes] = {}
    return build_run(name, _ids(qid, "qid", where, long), _ids(docno, "docno", where),
                     _floats(np.asarray(score), where, "score"), long)


def run_from_frame(frame, name: str = "run") -> Run:
    """A :class:`Run` from a PyTerrier or ir_datasets frame or a ``{qid: {docno: score}}``
    mapping (:func:`as_run`); InputError (line = 1-based row) for a bad or duplicate row."""
    return as_run(frame, name=name)


def _is_run_dict(d: Mapping) -> bool:
    """A pytrec_eval run ``{qid: {docno: score}}`` rather than a mapping of named runs."""
    first = next(iter(d.values()), None)
    if not isinstance(first, Mapping):
        return False
    inner = next(iter(first.values()), None)   # a run's {docno: score}, or a named run's {qid: {..}}
    return not isinstance(inner, Mapping)


def as_runs(runs) -> list[Run]:
    """Runs from any of :func:`as_run`'s forms, a folder, a list of them, a mapping
    ``{name: run}``, or one frame with a ``name``/``run`` column, in order; names are unique.
    An iterable of ``(query_id, doc_id, score)`` records is one run (named ``run``).

    Raises
    ------
    InputError
        no run, a run name given twice, or any problem of :func:`as_run`.
    """
    out: list[Run] = []
    if callable(getattr(runs, "scoreddocs_iter", None)):   # an ir_datasets dataset: one run
        runs = runs.scoreddocs_iter()
    if isinstance(runs, Iterable) and not isinstance(runs, (list, tuple, str, bytes, Mapping, Run)) \
            and not _is_frame(runs) and not _ranx(runs) and not _is_path(runs):
        runs = list(runs)           # a generator: of records (one run) or of runs
    if isinstance(runs, list) and runs and _is_record(runs[0], RUN_FIELDS):
        out = [as_run(runs)]        # records (ir_measures.ScoredDoc): one run
    elif isinstance(runs, Run) or _ranx(runs):
        out = [as_run(runs)]
    elif _is_path(runs):
        out = read_runs(runs)
    elif _is_frame(runs):
        out = _frame_runs(runs)
    elif isinstance(runs, Mapping):
        if _is_run_dict(runs):
            out = [as_run(runs)]
        else:
            out = [as_run(r, name=str(k)) for k, r in runs.items()]
    elif isinstance(runs, Iterable):
        items = list(runs)
        # frames, dicts and records carry no name: "run", or run_1, run_2, .. when several are listed
        unnamed = [r for r in items if (_is_frame(r) and not any(c in r.columns for c in RUN_NAME_COLUMNS))
                   or isinstance(r, Mapping) or (isinstance(r, list) and r and _is_record(r[0], RUN_FIELDS))]
        k = 0
        for r in items:
            if _is_path(r):
                out.extend(read_runs(r))
            elif _is_frame(r) and any(c in r.columns for c in RUN_NAME_COLUMNS):
                out.extend(_frame_runs(r))
            elif any(r is u for u in unnamed):
                k += 1
                out.append(as_run(r, name=None if len(unnamed) == 1 else f"run_{k}"))
            else:
                out.append(as_run(r))
    else:
        raise ParameterError(f"runs: expected paths, runs, a mapping of name to run or a frame, "
                         f"got {type(runs).__name__}")
    if not out:
        raise InputError(None, None, "no run given")
    seen = set()
    for r in out:
        if r.name in seen:
            raise InputError(r.path, None, f"run name {r.name!r} given twice; run names must be unique")
        seen.add(r.name)
    return out


def _frame_runs(frame) -> list[Run]:
    """One run per value of the ``name``/``run`` column, or the whole frame as one run."""
    named = [c for c in RUN_NAME_COLUMNS if c in frame.columns]
    if not named:
        return [as_run(frame)]
    if len(named) > 1:
        raise InputError("<runs frame>", None, "ambiguous runs frame: both a 'name' and a 'run' column; "
                         f"keep the one naming the runs. Columns found: {', '.join(map(str, frame.columns))}")
    col = named[0]
    labels = frame[col]
    if labels.isna().any():
        i = int(np.argmax(labels.isna().to_numpy()))
        raise InputError("<runs frame>", i + 1, f"column {col!r} has no run name")
    return [as_run(g.drop(columns=[col]), name=str(k)) for k, g in frame.groupby(col, sort=False)]


def _text(a: np.ndarray, long: Mapping | None = None) -> np.ndarray:
    """Identifiers (bytes) as text (:func:`maxent.trec.names`): bytes that are not UTF-8
    escaped; a long token's surrogate as the token when ``long`` has it, else its prefix and ``...``."""
    if len(a) == 0:
        return np.zeros(0, dtype=object)
    out = np.empty(len(a), dtype=object)
    out[:] = names(a, long)
    return out


def qrels_frame(qrels, convention: str = "PyTerrier") -> "pd.DataFrame":
    """The qrels as a frame with ``convention``'s column names (``PyTerrier`` or ``ir_datasets``)."""
    import pandas as pd

    q = as_qrels(qrels)
    cols = _convention(QRELS_COLUMNS, convention)
    _, bounds, docno, grade = q.flat
    return pd.DataFrame({cols[0]: np.repeat(np.array(q.topics, dtype=object), np.diff(bounds)),
                         cols[1]: _text(docno), cols[2]: grade})


def run_frame(runs, convention: str = "PyTerrier") -> "pd.DataFrame":
    """Runs as one frame: ``name``, topic, document and score with ``convention``'s names, and
    PyTerrier's 0-based ``rank`` in trec_eval's order."""
    import pandas as pd

    cols = _convention(RUN_COLUMNS, convention)
    parts = []
    for r in as_runs(runs):
        order = np.lexsort((r.docno, r.score, r.qid))[::-1]          # score, docno descending
        qid = r.qid[order]
        first = np.concatenate(([True], qid[1:] != qid[:-1]))
        start = np.maximum.accumulate(np.where(first, np.arange(len(qid)), 0))
        frame = pd.DataFrame({"name": r.name, cols[0]: _text(qid, r.long_qids), cols[1]: _text(r.docno[order]),
                              "score": r.score[order], "rank": np.arange(len(qid)) - start})
        parts.append(frame.iloc[::-1].sort_values([cols[0], "rank"], kind="stable"))
    return pd.concat(parts, ignore_index=True)


def qrels_dict(qrels) -> dict[str, dict[str, int]]:
    """The qrels as pytrec_eval's ``{qid: {docno: grade}}``."""
    q = as_qrels(qrels)
    return {t: dict(zip(_text(q.docnos[t]), q.grades[t].tolist())) for t in q.topics}


def run_dict(run) -> dict[str, dict[str, float]]:
    """One run as pytrec_eval's ``{qid: {docno: score}}``."""
    r = as_run(run)
    out: dict[str, dict[str, float]] = {}
    for q, d, s in zip(_text(r.qid, r.long_qids), _text(r.docno), r.score.tolist()):
        out.setdefault(q, {})[d] = s
    return out


def _convention(table: dict, convention: str) -> tuple:
    if convention not in table:
        raise ParameterError(f"convention must be one of {', '.join(table)}, got {convention!r}")
    return table[convention]
