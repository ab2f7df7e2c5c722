"""A file's bytes, plain or gzip, without numpy: the first step of every TREC reader, and a
prefetch that lets the command line decompress its inputs while numpy is still loading.

gzip goes through :func:`inflate_engine`: ISA-L's zlib-compatible ``isal.isal_zlib`` when
the optional ``fast`` extra is installed (``pip install -e ".[fast]"``; the same bytes, about
twice zlib's speed), else the standard library's ``zlib``. Both release the GIL while they
inflate, so a background thread decompresses on another core.

:func:`prefetch` (started by :mod:`maxent._startup` for ``python -m maxent.evaluate``)
reads and decompresses the named files in order in a daemon thread, holding at most
:data:`PREFETCH_BUDGET` bytes not yet taken; :func:`take` hands a file's bytes to the
reader, waiting for the thread if it is at work on that file. A file the prefetch could not
read (missing, corrupt, ...) is simply not handed over: the reader reads it itself and
reports the error as always.
"""
from __future__ import annotations

import os
import threading
import zlib

__all__ = ["inflate_engine", "gunzip", "read_raw", "prefetch", "take", "PREFETCH_BUDGET"]

_INFLATE = None
GZIP_MAGIC = b"\x1f\x8b"

PREFETCH_BUDGET = 512 * 2**20
"""Most bytes of decompressed files the prefetch holds before the reader takes them."""


def inflate_engine():
    """The zlib-compatible module that decompresses gzip files (see the module docstring)."""
    global _INFLATE
    if _INFLATE is None:
        try:
            from isal import isal_zlib as engine
        except ImportError:
            engine = zlib
        _INFLATE = engine
    return _INFLATE


def gunzip(data: bytes, engine=None) -> bytes:
    """gzip.decompress without the gzip module (it costs import time), by
    :func:`inflate_engine` (or ``engine``): every member of a multi-member file, trailing
    zero padding allowed. Raises EOFError for a truncated file, the engine's error (or
    OSError) for corrupt data."""
    engine = engine or inflate_engine()
    parts = []
    while data:
        d = engine.decompressobj(wbits=31)
        parts.append(d.decompress(data))
        if not d.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
        data = d.unused_data
        if not data.strip(b"\x00"):
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_raw(path) -> bytes:
    """The bytes of a file, decompressed if they start with the gzip magic number.

    Raises OSError (reading), EOFError or the engine's error (corrupt gzip data)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data)
    return data


# ------------------------------------------------------------------------------ prefetch
_lock = threading.Condition()
_PENDING, _READING, _DONE, _CLAIMED = range(4)
_pending: dict[str, list] = {}     # key -> [state, data]: data (or None) once _DONE
_held = 0                           # bytes of _DONE files not yet taken


def _key(path) -> str:
    return os.path.abspath(os.fspath(path))


def _work(slots: list[tuple[str, list]]) -> None:
    global _held
    for key, slot in slots:
        with _lock:
            while _held > PREFETCH_BUDGET and slot[0] == _PENDING:
                _lock.wait()
            if slot[0] != _PENDING:    # the reader got there first and reads it itself
                continue
            slot[0] = _READING
        try:
            data = read_raw(key)
        except Exception:  # noqa: BLE001 - the reader reads it again and reports the error
            data = None
        with _lock:
            slot[0], slot[1] = _DONE, data
            _held += len(data or b"")
            _lock.notify_all()


def prefetch(paths) -> None:
    """Read and decompress ``paths`` (regular files; others are skipped) in a daemon thread."""
    slots = []
    with _lock:
        for p in paths:
            key = _key(p)
            if key not in _pending and os.path.isfile(key):
                _pending[key] = slot = [_PENDING, None]
                slots.append((key, slot))
    if slots:
        threading.Thread(target=_work, args=(slots,), name="maxent-prefetch", daemon=True).start()


def take(path) -> bytes | None:
    """The prefetched bytes of ``path`` (waiting for the thread if it is reading that very
    file), or None when it was not prefetched, could not be read, or the thread has not
    started on it (the reader then reads it itself: it never waits behind other files)."""
    global _held
    if not _pending:
        return None
    key = _key(path)
    with _lock:
        slot = _pending.pop(key, None)
        if slot is None:
            return None
        if slot[0] == _PENDING:
            slot[0] = _CLAIMED
            return None
        while slot[0] == _READING:
            _lock.wait()
        _held -= len(slot[1] or b"")
        _lock.notify_all()
        return slot[1]
