"""Readers for TREC run and qrels files (plain or gzip), following trec_eval's parsing rules.

Runs: ``qid Q0 docno rank score tag`` separated by any whitespace; trailing extra columns
are ignored (as trec_eval's ``get_trec_results.c``); blank lines and lines whose first
character is ``#`` are skipped; the rank column is never used.

Qrels: ``qid iter docno grade``, exactly four columns; ``#`` lines are comments; grades
are read as trec_eval's ``atol`` does (the leading integer part, so ``1.5`` is 1 and
``0.9`` is 0); negative grades mean "judged, not relevant" and are not counted among the
judged documents of any grade.

Parsing is vectorised: the file is tokenised once by ``bytes.split`` and the per-line
token counts come from numpy, so a 50 000-line run is read in a few milliseconds. Every
problem raises :class:`~maxent.errors.InputError` naming the file, the line and the reason.
"""
from __future__ import annotations

import gzip
import operator
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from maxent.errors import InputError

__all__ = ["Run", "Qrels", "read_run", "read_runs", "read_qrels", "run_from_frame"]

_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True  # what bytes.split() and C isspace() split on
_GRADE = re.compile(rb"^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?$|^[+-]?\.\d+([eE][+-]?\d+)?$")


@dataclass(frozen=True, eq=False)
class Run:
    """One run as read from a file: parallel arrays, one entry per kept line.

    Attributes
    ----------
    name : run name (the file name without ``.gz``; the tag column is ``tags[0]``)
    path : source path, or None for a run built in memory
    qid, docno : bytes arrays (numpy ``S`` dtype), compared byte-wise as trec_eval's strcmp
    score : float64 array
    line : 1-based line number of each entry in the source file (for error messages)
    """

    name: str
    path: str | None
    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    line: np.ndarray
    tag: str = ""

    def __len__(self) -> int:
        return len(self.score)

    @property
    def topics(self) -> list[str]:
        return [q.decode("utf-8", "replace") for q in np.unique(self.qid)]


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgements: per topic, judged docnos (sorted, bytes) and their grades.

    ``grades`` keep trec_eval's integer levels; negative levels are judged non-relevant and
    are excluded from :attr:`level_counts`.
    """

    path: str | None
    topics: list[str]
    docnos: dict[str, np.ndarray]
    grades: dict[str, np.ndarray]
    max_grade: int = field(default=0)

    def level_counts(self, topic: str, levels: int) -> np.ndarray:
        """Counts of judged documents of grade 0..levels-1 for ``topic`` (zeros if absent)."""
        g = self.grades.get(topic)
        if g is None:
            return np.zeros(levels, dtype=np.int64)
        g = g[g >= 0]
        return np.bincount(g, minlength=levels)[:levels]

    def __contains__(self, topic: str) -> bool:
        return topic in self.docnos


def _read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, expected a file") from None
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(path, None, f"corrupt gzip data ({e})") from None
    return data


def _table(data: bytes, path, ncols: int, exact: bool, what: str):
    """Tokenise ``data``; return the first ``ncols`` columns (lists of bytes) and line numbers.

    Lines that are blank or whose first token starts with ``#`` are skipped. A line with
    fewer than ``ncols`` tokens (or, when ``exact``, more) raises InputError.
    """
    if not data.strip():
        raise InputError(path, None, f"empty file: no {what} lines")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(path, line, "binary data (NUL byte): not a text file")
    buf = np.frombuffer(data, dtype=np.uint8)
    ws = _WHITESPACE[buf]
    starts = np.flatnonzero(~ws & np.concatenate(([True], ws[:-1])))
    newlines = np.flatnonzero(buf == 10)
    n_lines = len(newlines) + (0 if data.endswith(b"\n") else 1)
    line_of_token = np.searchsorted(newlines, starts)
    counts = np.bincount(line_of_token, minlength=n_lines)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    used = counts > 0
    if b"#" in data:
        hash_first = np.zeros(n_lines, dtype=bool)
        hash_first[used] = buf[starts[first[used]]] == ord("#")
        used &= ~hash_first
    bad = used & ((counts < ncols) | (counts > ncols) if exact else (counts < ncols))
    if bad.any():
        ln = int(np.argmax(bad))
        raise InputError(
            path, ln + 1, f"expected {ncols} columns ({what}), found {counts[ln]}"
        )
    tokens = data.split()
    if len(tokens) != len(starts):  # pragma: no cover - tokeniser invariant
        raise InputError(path, None, "could not tokenise file")
    lines = np.flatnonzero(used)
    if len(lines) == 0:
        raise InputError(path, None, f"no {what} lines (only comments or blank lines)")
    if len(lines) * ncols == len(tokens):  # the common case: every line exactly ncols
        cols = [tokens[c::ncols] for c in range(ncols)]
    else:
        base = first[lines]
        cols = []
        for c in range(ncols):
            idx = (base + c).tolist()
            got = operator.itemgetter(*idx)(tokens)
            cols.append(list(got) if len(idx) > 1 else [got])
    return cols, lines + 1


def _parse_scores(tokens: list[bytes], lines: np.ndarray, path) -> np.ndarray:
    arr = np.array(tokens)
    try:
        score = arr.astype(np.float64)
    except ValueError:
        for i, t in enumerate(tokens):
            try:
                float(t)
            except ValueError:
                raise InputError(
                    path, int(lines[i]), f"score {t.decode('utf-8', 'replace')!r} is not a number"
                ) from None
        raise  # pragma: no cover
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(path, int(lines[i]), f"score {tokens[i].decode('utf-8', 'replace')!r} is not finite")
    return score


def _run_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz",):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _check_duplicates(run_path, qid: np.ndarray, docno: np.ndarray, lines: np.ndarray) -> None:
    order = np.lexsort((docno, qid))
    q, d = qid[order], docno[order]
    dup = (q[1:] == q[:-1]) & (d[1:] == d[:-1])
    if dup.any():
        i = int(np.argmax(dup)) + 1
        raise InputError(
            run_path,
            int(lines[order[i]]),
            f"duplicate docno {d[i].decode('utf-8', 'replace')!r} in topic "
            f"{q[i].decode('utf-8', 'replace')} (first at line {int(lines[order[i - 1]])})",
        )


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read one TREC run file (plain or gzip).

    Parameters
    ----------
    path : file in ``qid Q0 docno rank score tag`` format; extra trailing columns ignored.
    name : run name; default the file name without ``.gz``.

    Raises
    ------
    InputError
        missing/empty/binary file, a line with fewer than 6 columns, a non-numeric, NaN or
        infinite score, a docno twice in one topic.
    """
    path = Path(path)
    data = _read_bytes(path)
    (qid, _q0, docno, _rank, score, tag), lines = _table(
        data, path, 6, exact=False, what="qid Q0 docno rank score tag"
    )
    scores = _parse_scores(score, lines, path)
    qid_a = np.array(qid)
    docno_a = np.array(docno)
    _check_duplicates(path, qid_a, docno_a, lines)
    return Run(
        name=name or _run_name(path),
        path=str(path),
        qid=qid_a,
        docno=docno_a,
        score=scores,
        line=lines.astype(np.int64),
        tag=tag[0].decode("utf-8", "replace"),
    )


def run_from_frame(frame, name: str = "run") -> Run:
    """Build a :class:`Run` from an in-memory table with columns ``qid, docno, score``.

    Accepts a pandas DataFrame or a mapping ``{qid: {docno: score}}`` (pytrec_eval's form).
    """
    if isinstance(frame, dict):
        qid = [str(q).encode() for q, docs in frame.items() for _ in docs]
        docno = [str(d).encode() for docs in frame.values() for d in docs]
        score = np.fromiter((s for docs in frame.values() for s in docs.values()), dtype=np.float64)
    else:
        qid = [str(q).encode() for q in frame["qid"]]
        docno = [str(d).encode() for d in frame["docno"]]
        score = np.asarray(frame["score"], dtype=np.float64)
    qid_a, docno_a = np.array(qid), np.array(docno)
    lines = np.arange(1, len(score) + 1)
    if len(score) == 0:
        raise InputError(None, None, f"run {name!r} is empty")
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(None, i + 1, f"score {score[i]!r} of run {name!r} is not finite")
    _check_duplicates(f"<run {name}>", qid_a, docno_a, lines)
    return Run(name=name, path=None, qid=qid_a, docno=docno_a, score=score, line=lines, tag=name)


def _run_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputError(path, None, "directory holds no run files")
        return files
    return [path]


def read_runs(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Run]:
    """Read runs from files and/or directories (every non-hidden file of a directory).

    Run names must be unique; a name seen twice raises InputError.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    runs: list[Run] = []
    seen: dict[str, str] = {}
    for p in paths:
        for f in _run_files(Path(p)):
            run = read_run(f)
            if run.name in seen:
                raise InputError(f, None, f"run name {run.name!r} also read from {seen[run.name]}")
            seen[run.name] = str(f)
            runs.append(run)
    if not runs:
        raise InputError(None, None, "no run files given")
    return runs


def _parse_grades(tokens: Sequence[bytes], lines: np.ndarray, path) -> np.ndarray:
    arr = np.array(tokens)
    try:
        return arr.astype(np.int64)  # the common case: plain integers
    except ValueError:
        pass
    out = np.empty(len(tokens), dtype=np.int64)
    for i, t in enumerate(tokens):
        if not _GRADE.match(t):
            raise InputError(
                path, int(lines[i]), f"grade {t.decode('utf-8', 'replace')!r} is not a number"
            )
        out[i] = int(float(t))  # atol semantics: the integer part, truncated toward zero
    return out


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a qrels file ``qid iter docno grade`` (plain or gzip).

    Raises
    ------
    InputError
        missing/empty/binary file, a line without exactly 4 columns, a non-numeric grade, or
        a docno judged twice for one topic.
    """
    path = Path(path)
    data = _read_bytes(path)
    (qid, _iter, docno, grade), lines = _table(data, path, 4, exact=True, what="qid iter docno grade")
    grades = _parse_grades(grade, lines, path)
    qid_a, docno_a = np.array(qid), np.array(docno)
    order = np.lexsort((docno_a, qid_a))
    qid_s, doc_s, grade_s, line_s = qid_a[order], docno_a[order], grades[order], lines[order]
    dup = (qid_s[1:] == qid_s[:-1]) & (doc_s[1:] == doc_s[:-1])
    if dup.any():
        i = int(np.argmax(dup)) + 1
        raise InputError(
            path,
            int(line_s[i]),
            f"docno {doc_s[i].decode('utf-8', 'replace')!r} judged twice for topic "
            f"{qid_s[i].decode('utf-8', 'replace')} (first at line {int(line_s[i - 1])})",
        )
    bounds = np.flatnonzero(np.concatenate(([True], qid_s[1:] != qid_s[:-1], [True])))
    topics, docnos, grade_map = [], {}, {}
    for a, b in zip(bounds[:-1], bounds[1:]):
        t = qid_s[a].decode("utf-8", "replace")
        topics.append(t)
        docnos[t] = doc_s[a:b]
        grade_map[t] = grade_s[a:b]
    return Qrels(
        path=str(path),
        topics=topics,
        docnos=docnos,
        grades=grade_map,
        max_grade=int(max(0, grades.max())),
    )
