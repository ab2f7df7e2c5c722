"""Start-up of the command lines that only evaluate (``python -m maxent.evaluate``).

Imported first by ``maxent/__init__.py``, before numpy. When the process is ``python -m
maxent.evaluate ...`` (runpy is still locating the module: ``sys.argv[0] == "-m"``, and the
interpreter's own ``-m`` names it in ``sys.orig_argv``), OpenBLAS is asked for one thread
(``OPENBLAS_NUM_THREADS=1``, unless the user set it): loading numpy otherwise starts a pool
of BLAS threads, which costs about a third of numpy's import time, and evaluation never
multiplies matrices large enough to use them. Library users (solver, learning) are untouched.

It also starts :func:`maxent._rawread.prefetch` on the command's input files (its positional
arguments; the files of a directory argument), so that they are read and decompressed on
another core while numpy loads; the readers take the bytes from there.
"""
from __future__ import annotations

import os
import sys

__all__ = ["running_as", "prepare"]

FAST_START = ("maxent.evaluate",)
"""Modules whose ``python -m`` start-up skips the BLAS thread pool."""


def running_as(module: str) -> bool:
    """True while this process is ``python [options] -m <module> ...`` importing its package."""
    argv = getattr(sys, "orig_argv", None)  # Python >= 3.10
    if not argv or sys.argv[:1] != ["-m"] or "-m" not in argv:
        return False
    i = argv.index("-m")
    return argv[i + 1: i + 2] == [module]


# options of ``python -m maxent.evaluate`` that take a value (the rest are flags)
_VALUED = ("-m", "-l", "-M", "--score-precision", "--format", "--describe")


def input_files(args: list[str]) -> list[str]:
    """The files a ``maxent.evaluate`` command line reads: its positional arguments (qrels,
    then runs), a directory standing for its non-hidden files in name order."""
    files: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--":
            break
        elif a in _VALUED:
            skip = True
        elif not a.startswith("-"):
            if os.path.isdir(a):
                try:
                    names = sorted(n for n in os.listdir(a) if not n.startswith("."))
                except OSError:
                    continue
                files.extend(os.path.join(a, n) for n in names)
            else:
                files.append(a)
    return files


def prepare() -> None:
    """Set the environment of a fast start and start the prefetch (see the module
    docstring), before numpy loads."""
    if "numpy" in sys.modules or not any(running_as(m) for m in FAST_START):
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.orig_argv
    files = input_files(argv[argv.index("-m") + 2:])
    if files:
        from maxent import _rawread

        _rawread.prefetch(files)
