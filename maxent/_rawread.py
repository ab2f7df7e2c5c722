"""A file's bytes, plain or gzip, without numpy: the first step of every TREC reader.

gzip goes through :func:`inflate_engine`: ISA-L's zlib-compatible ``isal.isal_zlib`` when
the optional ``fast`` extra is installed (``pip install -e ".[fast]"``; the same bytes, about
twice zlib's speed), else the standard library's ``zlib``.
"""
from __future__ import annotations

import zlib

__all__ = ["inflate_engine", "gunzip", "read_raw"]

_INFLATE = None
GZIP_MAGIC = b"\x1f\x8b"


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
